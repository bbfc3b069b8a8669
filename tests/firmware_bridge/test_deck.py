"""Deck files (JSON and TOML) and enrollment: the walk, refused reads, operator corrections,
and a whole `deck enroll` session against the emulator on a pty."""

import argparse
import asyncio
import json

import pytest

from cardtable.commands.deck import register
from firmware_bridge.deck import Deck, DeckError, parse_tag, synthetic_deck
from firmware_bridge.emulator import VirtualBoard
from firmware_bridge.enroll import Enrollment, run_check, run_enroll
from referee.cards import Card, full_deck

QH, QD, AS = Card.parse("QH"), Card.parse("QD"), Card.parse("AS")


def tag(i: int) -> bytes:
    return bytes([0x04, 0x10, i, 0xAA])


@pytest.mark.parametrize("suffix", [".json", ".toml"])
def test_deck_file_round_trip(tmp_path, suffix: str) -> None:
    deck = synthetic_deck(seed=2, name="red \"deck\"")
    path = tmp_path / ("d" + suffix)
    deck.save(path)
    back = Deck.load(path)
    assert back.name == deck.name and back.items() == deck.items() and back.complete
    assert not (tmp_path / ("d" + suffix + ".tmp")).exists()


def test_deck_file_accepts_tag_spellings_and_reports_errors(tmp_path) -> None:
    deck = Deck.from_json({"cards": {"04:a1:b2": "hjärter dam", "04 A1 B3": "TS"}})
    assert deck.card_for(bytes.fromhex("04A1B2")) == QH
    assert deck.tag_for(Card.parse("10S")) == bytes.fromhex("04A1B3")
    assert deck.missing()[0] == Card.parse("2C") and len(deck.missing()) == 50
    for bad, words in [
        ({"cards": {"04A1": "QH", "04A2": "QH"}}, "already has tag"),
        ({"cards": {"zz": "QH"}}, "not hex"),
        ({"cards": {"04A1": "QX"}}, "not a card"),
        ({"deck": 9, "cards": {}}, "format"),
        ([], "object"),
    ]:
        with pytest.raises(DeckError, match=words):
            Deck.from_json(bad)
    path = tmp_path / "broken.json"
    path.write_text("{")
    with pytest.raises(DeckError, match="broken.json"):
        Deck.load(path)
    assert parse_tag("04-a1-b2") == bytes.fromhex("04a1b2")


def test_enrollment_walks_all_52_cards_in_order() -> None:
    walk = Enrollment(Deck("new"))
    for i, card in enumerate(full_deck()):
        assert walk.expected == card
        assert card.name() in walk.prompt()
        reply = walk.read(tag(i))
        assert reply.ok and reply.changed
    assert walk.done and walk.deck.complete
    assert walk.deck.card_for(tag(51)) == AS


def test_card_read_twice_or_unknown_tag_changes_nothing() -> None:
    walk = Enrollment(Deck("new"))
    walk.read(tag(0))  # 2C
    walk.read(tag(1))  # 3C
    snapshot = walk.deck.items()
    again = walk.read(tag(1))
    assert not again.ok and not again.changed and "already enrolled" in again.message
    earlier = walk.read(tag(0))
    assert not earlier.changed and "already the 2 of clubs" in earlier.message
    assert "fix 2C" in earlier.message
    assert walk.deck.items() == snapshot and walk.expected == Card.parse("4C")
    walk.command("check")
    unknown = walk.read(tag(99))
    assert not unknown.ok and not unknown.changed and "Unknown tag 0410" in unknown.message
    assert walk.deck.items() == snapshot
    walk.command("check")
    assert "2 of clubs" in walk.read(tag(0)).message


def test_operator_corrects_misread_cards() -> None:
    walk = Enrollment(Deck("new"))
    walk.read(tag(0))  # 2C
    walk.read(tag(1))  # 3C: but it was really another card
    assert walk.command("undo").changed
    assert walk.expected == Card.parse("3C") and walk.deck.tag_for(Card.parse("3C")) is None
    walk.read(tag(2))  # 3C again, with the right card this time
    reply = walk.command("fix 2C")
    assert reply.changed and walk.expected == Card.parse("2C")
    walk.read(tag(3))
    assert walk.deck.card_for(tag(3)) == Card.parse("2C")
    assert walk.expected == Card.parse("4C")
    swap = walk.command("swap 2C 3C")
    assert swap.changed
    assert walk.deck.card_for(tag(3)) == Card.parse("3C")
    assert walk.deck.card_for(tag(2)) == Card.parse("2C")
    assert walk.command("as QH").ok and walk.expected == QH
    walk.read(tag(4))
    assert walk.deck.card_for(tag(4)) == QH and walk.expected == Card.parse("4C")
    assert not walk.command("as QH").ok  # enrolled already
    assert walk.command("skip").ok and walk.expected == Card.parse("5C")
    assert "4C" in walk.command("missing").message
    for bad in ("fix QX", "swap QH", "frobnicate", "fix KS"):
        reply = walk.command(bad)
        assert not reply.ok and not reply.changed and reply.message


def test_resumed_enrollment_asks_only_for_missing_cards() -> None:
    deck = synthetic_deck()
    deck.remove(QD)
    deck.remove(AS)
    walk = Enrollment(deck)
    assert walk.expected == QD
    walk.read(b"\x01\x02\x03")
    assert walk.expected == AS


def test_register_adds_deck_enroll() -> None:
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="command")
    register(sub)
    args = parser.parse_args(["deck", "enroll", "red.json", "--port", "/dev/pts/3",
                              "--reader", "1"])
    assert args.file == "red.json" and args.port == "/dev/pts/3" and args.reader == 1
    assert callable(args.func)
    args = parser.parse_args(["deck", "show", "red.json"])
    assert callable(args.func)


async def _lines(queue: asyncio.Queue):
    while True:
        line = await queue.get()
        if line is None:
            return
        yield line


def test_enroll_session_on_the_emulator(tmp_path) -> None:
    """A person reads the deck on the virtual board: one card twice, one misread fixed."""
    physical = synthetic_deck(seed=7)
    path = tmp_path / "red.json"
    out: list[str] = []

    async def body() -> int:
        board = VirtualBoard(seed=1)
        port = await board.start()
        lines: asyncio.Queue = asyncio.Queue()
        session = asyncio.ensure_future(run_enroll(path, port, lines=_lines(lines),
                                                   out=out.append))

        async def wait_for(text: str) -> None:
            for _ in range(500):
                if any(text in o for o in out):
                    return
                await asyncio.sleep(0.01)
            raise AssertionError(f"never printed {text!r}: {out[-5:]}")

        try:
            await wait_for("Read the 2 of clubs")
            order = full_deck()
            for i, card in enumerate(order):
                if card == Card.parse("5C"):
                    board.read_tag(physical.tag_for(Card.parse("6C")))  # grabbed the wrong one
                    await wait_for("5C ✓")
                    lines.put_nowait("fix 5C")
                    await wait_for("read it now")
                if card == Card.parse("9H"):
                    board.read_tag(physical.tag_for(Card.parse("8H")))  # read twice
                    await wait_for("already enrolled")
                board.read_tag(physical.tag_for(card))
                await wait_for(f"[{i + 1}/52]" if i < 51 else "All 52 cards enrolled")
            return await session
        finally:
            await board.close()

    assert asyncio.run(asyncio.wait_for(body(), 60)) == 0
    saved = Deck.load(path)
    assert saved.items() == physical.items()
    assert any("Nothing changed" in o or "already enrolled" in o for o in out)


def test_enroll_quits_and_saves_partial_progress(tmp_path) -> None:
    physical = synthetic_deck(seed=8)
    path = tmp_path / "blue.toml"
    out: list[str] = []

    async def body() -> int:
        board = VirtualBoard(seed=2)
        port = await board.start()
        lines: asyncio.Queue = asyncio.Queue()
        session = asyncio.ensure_future(run_enroll(path, port, lines=_lines(lines),
                                                   out=out.append))
        try:
            for _ in range(500):
                if any("Read the 2 of clubs" in o for o in out):
                    break
                await asyncio.sleep(0.01)
            for card in full_deck()[:3]:
                board.read_tag(physical.tag_for(card))
            for _ in range(500):
                if any("[3/52]" in o for o in out):
                    break
                await asyncio.sleep(0.01)
            lines.put_nowait("quit")
            return await session
        finally:
            await board.close()

    assert asyncio.run(asyncio.wait_for(body(), 30)) == 0
    assert len(Deck.load(path)) == 3 and "Stopped with 3 of 52" in out[-1]


def test_enroll_without_a_board_says_so(tmp_path) -> None:
    out: list[str] = []

    async def body() -> int:
        board = VirtualBoard(seed=3)
        port = await board.start()
        board.mute(True)  # nobody answers on this pty
        try:
            return await run_enroll(tmp_path / "x.json", port, lines=_lines(asyncio.Queue()),
                                    out=out.append, connect_timeout=0.5)
        finally:
            await board.close()

    assert asyncio.run(body()) == 2 and "No board answered" in out[-1]


def test_check_names_cards_and_unknown_tags(tmp_path) -> None:
    deck = synthetic_deck(seed=4)
    path = tmp_path / "d.json"
    deck.save(path)
    out: list[str] = []

    async def body() -> int:
        board = VirtualBoard(seed=4)
        port = await board.start()
        try:
            task = asyncio.ensure_future(run_check(path, port, out=out.append, count=2))
            for _ in range(500):
                if out:
                    break
                await asyncio.sleep(0.01)
            board.read_tag(deck.tag_for(QH))
            board.read_tag(b"\x99\x98")
            return await task
        finally:
            await board.close()

    assert asyncio.run(asyncio.wait_for(body(), 30)) == 0
    assert "QH (queen of hearts)" in out[1] and "unknown tag 9998" in out[2]
    json.loads(path.read_text())  # untouched, still a deck


def test_deck_commands_without_a_board_or_with_the_wrong_file_say_so(tmp_path,
                                                                     capsys) -> None:
    """Issue 37: `deck check` on a port with no board ended in 'unexpected error
    (SerialException)', exit 70; `deck show table.toml` said '0 of 52 cards enrolled', exit 0."""
    from cardtable.cli import main

    deck = tmp_path / "d.json"
    synthetic_deck(seed=1).save(deck)
    missing = str(tmp_path / "ttyACM7")
    for command in (["deck", "check", str(deck)], ["deck", "enroll", str(tmp_path / "n.json")]):
        assert main([*command, "--port", missing]) == 2
        said = capsys.readouterr()
        assert f"Cannot open {missing}: no such port: is the board plugged in?" in said.out
        assert "unexpected" not in said.err
    table = tmp_path / "table.toml"
    table.write_text('[table]\nid = "t"\ngame = "banka-bever"\nseats = ["a", "b"]\n')
    assert main(["deck", "show", str(table)]) == 2
    err = capsys.readouterr().err
    assert "not a deck file (it looks like a table configuration)" in err
    (tmp_path / "empty.json").write_text("{}")
    assert main(["deck", "show", str(tmp_path / "empty.json")]) == 2
    assert "not a deck file" in capsys.readouterr().err


@pytest.mark.parametrize(("port", "said"), [
    ("/dev/null", "not a serial port (a file, or a terminal that is not the board's)"),
    ("socket://127.0.0.1:1", "nothing answers at that address (is the emulator running?)"),
    ("FOLDER", "is a folder, not a port"),
])
def test_a_port_that_is_not_the_board_s_is_said_in_words(port: str, said: str, tmp_path,
                                                         capsys) -> None:
    """pyserial's words were "Could not configure port: (25, 'Inappropriate ioctl for
    device')", "[Errno 111] Connect call failed ('127.0.0.1', 1)", "[Errno -2] …"."""
    from cardtable.cli import main

    deck = tmp_path / "d.json"
    synthetic_deck(seed=1).save(deck)
    port = str(tmp_path) if port == "FOLDER" else port
    assert main(["deck", "check", str(deck), "--port", port, "--timeout", "2"]) == 2
    out = capsys.readouterr().out
    assert f"Cannot open {port}: {said}" in out and "Errno" not in out


def test_a_host_name_that_does_not_resolve_is_said_in_words() -> None:
    """pyserial puts the resolver's errno in its words ("[Errno -2] Name or service not
    known"); without a network the resolver says -3 (try again): either is the name."""
    import socket

    from firmware_bridge.enroll import open_link

    class Link:
        def __init__(self, words: str) -> None:
            self.words = words

        async def open(self) -> None:
            raise OSError(self.words)

    for code in (socket.EAI_NONAME, socket.EAI_AGAIN):
        said: list[str] = []
        words = f"Could not open port rfc2217://x:9: [Errno {code}] Name or service not known"
        assert not asyncio.run(open_link(Link(words), "rfc2217://x:9", said.append))
        assert said == ["Cannot open rfc2217://x:9: the host's name did not resolve: check "
                        "the address"]
