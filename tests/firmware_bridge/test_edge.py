"""The table board as the service's card source: real pty, real pyserial, real protocol."""

from __future__ import annotations

import asyncio

import pytest

from cardtable.config import parse_config
from cardtable.service import RefereeService
from firmware_bridge.deck import synthetic_deck
from firmware_bridge.edge import BoardEdge
from firmware_bridge.emulator import VirtualBoard
from referee.journal import read_journal


def make_service(tmp_path, game: str, seed: int | None) -> RefereeService:
    table = {"id": "b1", "game": game, "seats": ["Anna", "Bo", "Cia"], "card_source": "board",
             "journal_dir": str(tmp_path / "j")}
    if seed is not None:
        table["seed"] = seed
    cfg = parse_config({"table": table, "board": {"port": "unused", "buttons": [0, 1, 2]}})
    return RefereeService(cfg, fsync=False)


async def start(svc: RefereeService, deck, seed: int):
    """An emulated board on a pty as the service's board edge; the service running."""
    board = VirtualBoard(deck=deck, seed=seed)
    path = await board.start()
    edge = BoardEdge(path, deck=deck, buttons=(0, 1, 2))
    svc.edges.append(edge)
    svc.outputs.append(edge)
    task = asyncio.create_task(svc.run())
    await until(lambda: edge.link is not None)
    await edge.link.wait_online(5)
    return board, task


async def stop(svc: RefereeService, board, task) -> None:
    svc.stop()
    await task
    await board.close()


async def until(cond, timeout: float = 5.0) -> None:
    async with asyncio.timeout(timeout):
        while not cond():
            await asyncio.sleep(0.01)


def test_card_reads_lay_the_turn_seats_cards_and_buttons_slap(tmp_path) -> None:
    deck = synthetic_deck(3)
    svc = make_service(tmp_path, "banka-bever", seed=11)

    async def go() -> None:
        board, task = await start(svc, deck, 1)
        for k in range(1, 7):
            lay = next(i for i in svc.table.engine.legal_inputs(0) if i.act == "lay")
            board.lay(lay.card)
            await until(lambda k=k: svc.state()["cards_played"] == k)
        board.press(2)
        await until(lambda: any(v.get("seat") == 2 and v.verdict in ("false_slap", "pile_won")
                                for v in svc.table.verdicts))
        await stop(svc, board, task)

    asyncio.run(go())
    journal = read_journal(svc.current_path)
    acts = [(i.act, i.seat) for i in journal.inputs]
    assert [a for a, _ in acts] == ["lay"] * 6 + ["slap"] and acts[-1][1] == 2
    assert not [v for v in svc.table.verdicts if v.verdict in ("desync", "illegal")]
    # Board times are mapped onto the table clock: strictly increasing with the reads.
    ts = [i.t for i in journal.inputs]
    assert ts == sorted(ts)


def test_a_wrong_card_read_is_a_desync_and_an_unknown_tag_a_notice(tmp_path) -> None:
    deck = synthetic_deck(4)
    svc = make_service(tmp_path, "beggar-my-neighbour", seed=2)
    seen: list = []

    class Rec:
        def update(self, verdicts, state) -> None:
            seen.extend(verdicts)

    svc.outputs.append(Rec())

    async def go() -> None:
        board, task = await start(svc, deck, 2)
        lay = next(i for i in svc.table.engine.legal_inputs(0) if i.act == "lay")
        wrong = next(c for _, c in deck.items() if c != lay.card)
        board.lay(wrong)
        board.read_tag(b"\x01\x02\x03\x04")
        await until(lambda: any(v.verdict == "desync" for v in seen)
                    and any(v.verdict == "unknown_tag" for v in seen))
        await stop(svc, board, task)

    asyncio.run(go())
    assert svc.state()["cards_played"] == 0


@pytest.mark.slow
def test_losing_the_board_pauses_and_its_return_resumes(tmp_path) -> None:
    deck = synthetic_deck(5)
    svc = make_service(tmp_path, "beggar-my-neighbour", seed=3)

    async def go() -> None:
        board, task = await start(svc, deck, 3)
        board.mute(True)
        await until(lambda: svc.paused, timeout=8)
        lay = next(i for i in svc.table.engine.legal_inputs(0) if i.act == "lay")
        board.lay(lay.card)  # read while the cable is out: kept by the board
        board.mute(False)
        await until(lambda: not svc.paused, timeout=8)
        await until(lambda: svc.state()["cards_played"] == 1, timeout=8)
        await stop(svc, board, task)

    asyncio.run(go())
    assert svc.state()["cards_played"] == 1


def test_a_board_missing_at_start_is_reported_and_joins_when_plugged_in(tmp_path) -> None:
    deck = synthetic_deck(6)
    svc = make_service(tmp_path, "beggar-my-neighbour", seed=4)
    port = tmp_path / "ttyBOARD"  # nothing there yet: the board is unplugged

    async def go() -> None:
        edge = BoardEdge(str(port), deck=deck, buttons=(0, 1, 2))
        edge.retry_s = 0.1
        svc.edges.append(edge)
        task = asyncio.create_task(svc.run())
        await until(lambda: svc.paused)
        assert svc.state()["alerts"]["board"] == "offline"
        board = VirtualBoard(deck=deck, seed=4)
        port.symlink_to(await board.start())  # plugged in
        await until(lambda: not svc.paused, timeout=10)
        lay = next(i for i in svc.table.engine.legal_inputs(0) if i.act == "lay")
        board.lay(lay.card)
        await until(lambda: svc.state()["cards_played"] == 1)
        await stop(svc, board, task)

    asyncio.run(go())
    assert svc.state()["alerts"]["board"] == "online"
