"""The referee service: journal on disk before judging, recovery, operator console, edges."""

from __future__ import annotations

import asyncio
import errno
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from cardtable.clock import TableClock
from cardtable.config import load_config, parse_config
from cardtable.console import ConsoleEdge, SocketConsole, console_client, parse_console_line
from cardtable.errors import TableBusyError
from cardtable.service import RefereeService
from cardtable.wiring import build_service
from referee.errors import ConfigError
from referee.journal import parse_lines, read_journal
from referee.model import Input
from referee.table import replay

MS = 1_000_000


def read_journal_text(text: str):
    return parse_lines(text.splitlines(keepends=True))


class FakeTime:
    def __init__(self, t: int = 10_000 * MS) -> None:
        self.t = t

    def __call__(self) -> int:
        return self.t


def config(tmp_path, game="beggar-my-neighbour", seats=("Anna", "Bo"), source="virtual",
           extra="", seed: int | None = 5):
    text = f"""
[table]
id = "t1"
game = "{game}"
seats = {json.dumps(list(seats))}
card_source = "{source}"
journal_dir = "journals"
{"" if seed is None else f"seed = {seed}"}
settle_ms = 20
{extra}
"""
    path = tmp_path / "table.toml"
    path.write_text(text)
    return load_config(path)


class Recorder:
    def __init__(self) -> None:
        self.batches: list[tuple[list, dict]] = []

    def update(self, verdicts, state) -> None:
        self.batches.append((verdicts, state))


def service(cfg, now: FakeTime, **kw) -> RefereeService:
    svc = RefereeService(cfg, clock=TableClock(source=now), fsync=False, **kw)
    svc.open_game()
    return svc


def lay_turn(svc: RefereeService, now: FakeTime, step_ms: int = 500) -> None:
    turn = svc.state()["turn"]
    now.t += step_ms * MS
    svc.submit(Input(svc.clock.now(), turn, "slap"))  # virtual deck: the slap button lays
    now.t += 30 * MS  # past the settle window
    svc.step()


def test_inputs_are_journaled_before_judging_and_published(tmp_path) -> None:
    now = FakeTime()
    rec = Recorder()
    svc = service(config(tmp_path), now, outputs=[rec])
    svc.submit(Input(now.t, svc.state()["turn"], "slap"))
    svc._take_pending()
    # Journaled (on disk) while still held in the settle window: not yet judged.
    assert len(read_journal(svc.current_path).inputs) == 1
    assert svc.state()["cards_played"] == 0
    now.t += 30 * MS
    svc.step()
    assert svc.state()["cards_played"] == 1
    # A number card lay has no verdict, yet the outputs saw the new state.
    assert rec.batches[-1][1]["cards_played"] == 1


def test_an_input_is_in_flight_until_judged(tmp_path) -> None:
    """Handed in, then held in the settle window, then judged: a virtual player acting on
    the state waits through the first two (a slap pressed in the same turn of the loop as
    its next lay is not missed)."""
    now = FakeTime()
    svc = service(config(tmp_path), now)
    assert not svc.in_flight()
    svc.submit(Input(now.t, svc.state()["turn"], "slap"))
    assert svc.in_flight()  # not taken in yet
    svc._take_pending()
    assert svc.in_flight()  # held by the arbiter
    now.t += 30 * MS
    svc.step()
    assert not svc.in_flight() and svc.state()["cards_played"] == 1


def test_resume_after_a_crash_gives_the_same_state_and_time_goes_on(tmp_path) -> None:
    now = FakeTime()
    cfg = config(tmp_path)
    svc = service(cfg, now)
    for _ in range(40):
        lay_turn(svc, now)
    before = svc.state()
    verdicts = [v.to_json() for v in svc.table.verdicts]
    # Crash: the process is gone (so is its lock on the folder); a new one starts after a
    # reboot (monotonic clock near 0).
    svc.close()
    now2 = FakeTime(5 * MS)
    again = service(cfg, now2)
    assert again.resumed
    assert again.state() == before
    assert [v.to_json() for v in again.table.verdicts] == verdicts
    last_t = read_journal(again.current_path).inputs[-1].t
    assert again.clock.now() > last_t
    lay_turn(again, now2)
    assert again.state()["cards_played"] == before["cards_played"] + 1
    journal = read_journal(again.current_path)
    assert [i.t for i in journal.inputs] == sorted(i.t for i in journal.inputs)


def test_resume_survives_a_torn_last_line(tmp_path) -> None:
    now = FakeTime()
    cfg = config(tmp_path)
    svc = service(cfg, now)
    for _ in range(5):
        lay_turn(svc, now)
    svc.close()
    with open(svc.current_path, "a") as fh:
        fh.write('{"t": 99999999999, "seat": 0, "ac')
    again = service(cfg, FakeTime())
    assert again.resumed and again.state()["cards_played"] == 5
    assert (svc.current_path.parent / "current.jsonl.torn").exists()


def test_a_finished_game_is_archived_and_a_new_one_dealt(tmp_path) -> None:
    now = FakeTime()
    cfg = config(tmp_path)
    svc = service(cfg, now)
    svc.end_game()
    archived = [p for p in svc.journal_dir.iterdir() if p.name not in ("current.jsonl", ".lock")]
    assert len(archived) == 1 and archived[0].name.endswith("beggar-my-neighbour.jsonl")


def test_a_board_table_with_a_seed_knows_its_deal(tmp_path) -> None:
    known = service(config(tmp_path, source="console", seed=9), FakeTime())
    assert known.table.header.deal is not None and not known.table.header.observed


def test_pause_ignores_inputs_and_resume_accepts_them(tmp_path) -> None:
    now = FakeTime()
    rec = Recorder()
    svc = service(config(tmp_path), now, outputs=[rec])
    svc.pause()
    lay_turn(svc, now)
    assert svc.state()["cards_played"] == 0 and svc.state()["paused"]
    assert any(v.verdict == "ignored" for b, _ in rec.batches for v in b)
    svc.resume()
    lay_turn(svc, now)
    assert svc.state()["cards_played"] == 1


def test_console_lines_and_operator_correction(tmp_path) -> None:
    now = FakeTime()
    cfg = config(tmp_path, source="console", seed=None)
    svc = service(cfg, now)
    assert svc.table.header.observed
    out: list[str] = []
    console = ConsoleEdge(io.StringIO(), echo=out.append)
    turn = svc.state()["turn"]
    console.handle(svc, f"lay {turn} 7H\n")
    now.t += 30 * MS
    svc.step()
    assert svc.state()["pile"] == ["7H"]
    console.handle(svc, "lay 1 QX")
    assert "not a card" in out[-1]
    console.handle(svc, "correct 2 QH")  # line 2 of the journal is the first input
    assert "7H" in out[-1] and "QH" in out[-1]
    assert svc.state()["pile"] == ["QH"]
    assert svc.state()["challenge"] is not None  # the queen now demands two cards
    assert any(p.name.startswith("before-correction") for p in svc.journal_dir.iterdir())
    console.handle(svc, "correct 9 QH")
    assert "not an input line" in out[-1]


def test_console_parsing() -> None:
    inp = parse_console_line("play 2 8H 8S as hjärter dam", 5)
    assert inp.to_json() == {"t": 5, "seat": 2, "act": "play", "cards": ["8H", "8S"], "as": "QH"}
    assert parse_console_line("call 1", 3) == Input(3, 1, "call", call="lappen")
    with pytest.raises(ValueError, match="seat number"):
        parse_console_line("slap anna", 1)
    with pytest.raises(ValueError, match="unknown command"):
        parse_console_line("dance 1", 1)


def test_config_errors_name_file_and_key(tmp_path) -> None:
    with pytest.raises(ConfigError) as info:
        parse_config({"table": {"id": "t", "game": "banka-bever", "seats": ["a", "b"]},
                      "options": {"false_slap_penalty": "kick"}}, "x.toml")
    assert "x.toml" in str(info.value) and "options.false_slap_penalty" in str(info.value)
    with pytest.raises(ConfigError, match="table.game"):
        parse_config({"table": {"id": "t", "game": "poker", "seats": ["a", "b"]}})
    with pytest.raises(ConfigError, match="board.port"):
        parse_config({"table": {"id": "t", "game": "banka-bever", "seats": ["a", "b"],
                                "card_source": "board"}})
    with pytest.raises(ConfigError, match="table.colour"):
        parse_config({"table": {"id": "t", "game": "banka-bever", "seats": ["a", "b"],
                                "colour": 1}})
    bad = tmp_path / "bad.toml"
    bad.write_text("[table\n")
    with pytest.raises(ConfigError, match="not valid TOML"):
        load_config(bad)


PINS = """
[hardware]
pin_factory = "mock"
[[seats]]
name = "Anna"
slap = 17
call = 27
led = 22
[[seats]]
name = "Bo"
slap = 5
call = 6
led = 13
"""


def test_gpio_pads_drive_the_service_and_leds_follow(tmp_path) -> None:
    """The whole edge: mock GPIO button edges → pads → service → engine → seat LEDs."""
    cfg = config(tmp_path, game="banka-bever", extra=PINS)
    svc = build_service(cfg, console=False)
    svc.fsync = False
    gpio = next(e for e in svc.edges if type(e).__name__ == "GpioEdge")
    leds = next(o for o in svc.outputs if type(o).__name__ == "SeatLeds")
    pins = {0: (17, 27), 1: (5, 6)}

    async def play() -> dict:
        task = asyncio.create_task(svc.run())
        await asyncio.sleep(0.05)
        factory = gpio.pads.pin_factory
        for k in range(1, 7):
            turn = svc.state()["turn"]
            pin = factory.pin(pins[turn][1])  # the call button turns a card (virtual deck)
            pin.drive_low()
            await asyncio.sleep(0.04)
            pin.drive_high()
            async with asyncio.timeout(5):
                while svc.state()["cards_played"] < k:
                    await asyncio.sleep(0.005)
        await asyncio.sleep(0.05)  # a stray second lay would show now
        state = svc.state()
        svc.stop()
        await task
        return state

    state = asyncio.run(play())
    assert state["cards_played"] == 6
    journal = read_journal(svc.current_path)
    assert [i.act for i in journal.inputs] == ["lay"] * 6
    assert replay(journal).state["pile"] == state["pile"]
    # Seed 5's first six cards leave no challenge open: the seat to play is lit, only it.
    assert state["challenge"] is None and state["claim"] is None
    assert leds.lit() == [state["turn"]]


def test_gpio_config_errors_are_config_errors(tmp_path) -> None:
    cfg = config(tmp_path, game="banka-bever", extra=PINS.replace("slap = 5", "slap = 17"))
    with pytest.raises(ConfigError, match="seats"):
        build_service(cfg, console=False)


def test_operator_deals_the_next_round_of_the_points_game(tmp_path) -> None:
    now = FakeTime()
    cfg = config(tmp_path, game="vandatta", seats=("Anna", "Bo", "Cia"), source="console",
                 extra='[options]\npoints_game = true\n', seed=1)
    svc = service(cfg, now)
    out: list[str] = []
    console = ConsoleEdge(io.StringIO(), echo=out.append)
    console.handle(svc, "deal")
    assert "not over" in out[-1]
    # Play the round out with the engine's own legal inputs (the referee knows the deal).
    import random

    from cardtable.players import choose_vandatta

    rng = random.Random(1)
    reshuffles = 0
    for _ in range(2000):
        if svc.state()["phase"] == "round_over":
            break
        state = svc.state()
        legal = svc.table.engine.legal_inputs(svc.clock.now())
        if not legal:  # the stock ran out: a draw makes the referee reshuffle the discards
            seat = state["must_draw"] if state["must_draw"] is not None else state["turn"]
            console.handle(svc, f"draw {seat}")
            now.t += 30 * MS
            svc.step()
            reshuffle, draw = read_journal(svc.current_path).inputs[-2:]
            assert reshuffle.act == "reshuffle" and len(reshuffle.stock) == len(state["pile"]) - 1
            assert draw.act == "draw" and svc.state()["stock"] == len(reshuffle.stock) - 1
            reshuffles += 1
            continue
        svc.submit(choose_vandatta(legal, svc.table.engine.hand, rng))
        now.t += 30 * MS
        svc.step()
    assert svc.state()["phase"] == "round_over"
    assert reshuffles >= 1  # seed 1 plays long enough to empty the stock
    before = svc.state()["round"]
    console.handle(svc, "deal")
    now.t += 30 * MS
    svc.step()
    assert svc.state()["round"] == before + 1 and svc.state()["phase"] != "round_over"
    assert read_journal(svc.current_path).inputs[-1].act == "deal"


def test_run_refuses_a_console_table_without_a_console_and_an_unwritable_journal(tmp_path,
                                                                                capsys) -> None:
    from cardtable.cli import main

    cfg = config(tmp_path, source="console")
    assert main(["run", "--config", cfg.path, "--no-console"]) == 2
    assert "table.card_source" in capsys.readouterr().err
    (tmp_path / "blocked").write_text("a file where the journal folder should be")
    path = tmp_path / "t2.toml"
    path.write_text('[table]\nid = "t"\ngame = "beggar-my-neighbour"\nseats = ["a", "b"]\n'
                    'journal_dir = "blocked/journals"\n')
    assert main(["run", "--config", str(path), "--no-console"]) == 2
    assert "table.journal_dir" in capsys.readouterr().err


def test_sigterm_stops_referee_run_cleanly(tmp_path) -> None:
    import signal
    import subprocess
    import sys
    import time

    cfg = config(tmp_path)
    proc = subprocess.Popen([sys.executable, "-m", "cardtable.cli", "run", "--config", cfg.path,
                             "--no-console"], stderr=subprocess.PIPE, text=True)
    journal = tmp_path / "journals" / "current.jsonl"
    deadline = time.monotonic() + 20
    while not journal.exists() and time.monotonic() < deadline:
        time.sleep(0.02)
    assert journal.exists()
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(10) == 0
    assert read_journal(journal).header.game == "beggar-my-neighbour"


def test_alerts_stay_in_the_state_for_displays_that_join_later(tmp_path) -> None:
    from rich.console import Console

    from cardtable.display.render import render

    svc = service(config(tmp_path), FakeTime())
    svc.notice("button_stuck", seat=1, button="slap")
    svc.notice("board_offline", reason="no frame for 1.2 s")
    svc.notice("camera_offline", reason="no more frames")
    svc.pause()
    state = svc.state()
    assert state["alerts"] == {"board": "offline", "stuck": [{"seat": 1, "button": "slap"}],
                               "camera": "no more frames"}
    console = Console(record=True, width=100)
    console.print(render(state, [], "online"))
    text = console.export_text()
    assert "BOARD OFFLINE" in text and "PAUSED" in text and "Bo's slap button is stuck" in text
    assert "CAMERA STOPPED (no more frames)" in text
    svc.notice("camera_online")
    svc.notice("button_released", seat=1, button="slap")
    svc.notice("board_online", reason="")
    svc.resume()
    assert svc.state()["alerts"] == {"board": "online", "stuck": []}


def test_an_input_the_journal_could_not_read_back_is_rejected_not_journaled(tmp_path) -> None:
    now = FakeTime()
    rec = Recorder()
    svc = service(config(tmp_path), now, outputs=[rec])
    svc.submit(Input(now.t, 9, "slap"))
    svc.submit(Input(now.t, 0, "play"))  # a play without cards
    now.t += 30 * MS
    svc.step()
    assert read_journal(svc.current_path).inputs == []
    rejected = [v for b, _ in rec.batches for v in b if v.verdict == "rejected"]
    assert len(rejected) == 2 and "no seat 9" in rejected[0]["reason"]
    # and the table still resumes
    svc.close()
    assert service(config(tmp_path), FakeTime()).resumed


def test_notices_have_words() -> None:
    from referee.describe import describe

    assert describe({"verdict": "button_stuck", "seat": 1, "button": "slap"},
                    ["Anna", "Bo"]) == "Bo's slap button is stuck: ignored until released"
    assert "paused" in describe({"verdict": "paused"}, [])
    assert describe({"verdict": "desync", "seat": 0, "expected": None, "got": "QH"}, ["Anna"]) \
        == "Anna: the table and the referee disagree — the queen of hearts is known to be elsewhere"


def test_a_game_ended_by_its_time_limit_replays_to_the_same_verdicts(tmp_path) -> None:
    now = FakeTime()
    cfg = config(tmp_path, extra="[options]\ntime_limit_s = 2\n")
    svc = service(cfg, now)
    for _ in range(3):
        lay_turn(svc, now)
    assert not svc.table.engine.over
    now.t += 3_000 * MS  # time is up: no input comes, the loop's step ends the game
    svc.step()
    over = [v for v in svc.table.verdicts if v.verdict == "game_over"]
    assert len(over) == 1 and over[0]["reason"] == "time_limit"
    replayed = replay(read_journal(svc.current_path))
    assert [v.to_json() for v in replayed.verdicts] == [v.to_json() for v in svc.table.verdicts]


def test_a_stuck_slap_button_is_flagged_through_the_real_service(tmp_path) -> None:
    pins = PINS.replace('pin_factory = "mock"', 'pin_factory = "mock"\nstuck_ms = 150')
    cfg = config(tmp_path, game="banka-bever", extra=pins)
    svc = build_service(cfg, console=False)
    svc.fsync = False
    gpio = next(e for e in svc.edges if type(e).__name__ == "GpioEdge")
    seen: list = []

    class Rec:
        def update(self, verdicts, state) -> None:
            seen.extend(v.verdict for v in verdicts)

    svc.outputs.append(Rec())

    async def go() -> tuple[dict, dict]:
        task = asyncio.create_task(svc.run())
        await asyncio.sleep(0.05)
        pin = gpio.pads.pin_factory.pin(5)  # Bo's slap button
        pin.drive_low()
        async with asyncio.timeout(5):
            while "button_stuck" not in seen:
                await asyncio.sleep(0.01)
        stuck = svc.state()
        pin.drive_high()
        async with asyncio.timeout(5):
            while "button_released" not in seen:
                await asyncio.sleep(0.01)
        released = svc.state()
        svc.stop()
        await task
        return stuck, released

    stuck, released = asyncio.run(go())
    assert stuck["alerts"]["stuck"] == [{"seat": 1, "button": "slap"}]
    assert released["alerts"]["stuck"] == []
    slaps = [i for i in read_journal(svc.current_path).inputs if i.act == "slap"]
    assert [(i.seat) for i in slaps] == [1]  # the press itself counted once, the hold never


def test_a_gpio_backend_that_cannot_start_is_a_clear_config_error(tmp_path, monkeypatch) -> None:
    import importlib.util

    if importlib.util.find_spec("lgpio") is not None:
        pytest.skip("lgpio is installed here: this checks a machine without it")
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    cfg = config(tmp_path, game="banka-bever",
                 extra=PINS.replace('pin_factory = "mock"', 'pin_factory = "lgpio"'))
    with pytest.raises(ConfigError) as info:
        build_service(cfg, console=False)
    assert info.value.key == "hardware.pin_factory" and "mock" in info.value.reason


def _over_the_socket(tmp_path: Path, extra: str, *talks: list[str]) -> tuple[Any, Path, list]:
    """A referee with a console socket (``extra``: more ``[table]`` lines) running while
    ``referee console`` sends each talk's lines; its replies, and ``paused`` after each talk."""
    import tempfile

    from cardtable.console import console_client

    sock = Path(tempfile.mkdtemp(prefix="rc-", dir="/tmp")) / "console.sock"  # short: AF_UNIX
    svc = build_service(config(tmp_path, extra=f'console_socket = "{sock}"{extra}'),
                        console=False)
    svc.fsync = False

    async def go() -> list[Any]:
        task = asyncio.create_task(svc.run())
        async with asyncio.timeout(5):
            while not sock.exists():
                await asyncio.sleep(0.01)
        replies: list[Any] = []
        for lines in talks:
            await asyncio.to_thread(console_client, str(sock), lines, out=replies.append)
            replies.append(("paused", svc.paused))
        svc.stop()
        await task
        return replies

    return svc, sock, asyncio.run(go())


def test_the_operator_console_over_a_unix_socket(tmp_path) -> None:
    """Under systemd there is no terminal: `referee console` steers the running referee."""
    _, sock, replies = _over_the_socket(tmp_path, "", ["help", "bogus", "pause"], ["resume"])
    assert any("Operator:" in r for r in replies if isinstance(r, str))
    assert any(r.startswith("? unknown command 'bogus'") for r in replies if isinstance(r, str))
    assert [r for r in replies if isinstance(r, tuple)] == [("paused", True), ("paused", False)]
    assert not sock.exists()  # removed when the referee stops


def test_the_console_socket_answers_in_the_table_s_language(tmp_path) -> None:
    """A helper's audit: the socket's console answered a Swedish table in English (it had no
    table to ask the language of, only the terminal's console had)."""
    _, _, replies = _over_the_socket(tmp_path, '\nlanguage = "sv"', ["pause", "pause", "resume"])
    assert replies == ["pausat: inget räknas förrän 'resume'",
                       "redan pausat: inget räknas förrän 'resume'", "fortsätter",
                       ("paused", False)]
    # the terminal's console says its quit in the table's language too
    from cardtable.console import ConsoleEdge

    (tmp_path / "b").mkdir()
    other = build_service(config(tmp_path / "b", extra='language = "sv"'), console=False)
    said: list[str] = []
    assert ConsoleEdge(stream=io.StringIO(), echo=said.append).handle(other, "quit")
    assert said == ["domaren stängs av"]


def test_console_command_says_when_no_referee_listens(tmp_path, capsys) -> None:
    from cardtable.cli import main

    assert main(["console", "--socket", str(tmp_path / "none.sock"), "state"]) == 2
    assert "cannot reach the referee" in capsys.readouterr().err


# -- issue 10: a table that never loses a game ---------------------------------------------------
def test_a_deleted_lock_file_does_not_let_a_second_referee_in(tmp_path) -> None:
    """Found by a probe of crashes: with <journal_dir>/.lock deleted by hand, a second referee
    took the folder and archived the first one's journal; the folder itself is locked too."""
    cfg = config(tmp_path)
    first = service(cfg, FakeTime())
    (cfg.journal_dir / ".lock").unlink()
    with pytest.raises(TableBusyError, match=rf"{cfg.journal_dir}.*in use by another referee"):
        service(cfg, FakeTime())
    assert first.current_path.exists()
    first.close()
    service(cfg, FakeTime()).close()  # free again once the first let go


@pytest.mark.slow
def test_a_second_referee_on_the_same_journal_folder_is_refused(tmp_path) -> None:
    """10.3: in one process, a second service on the folder is refused with the holder's PID;
    across processes, a second ``referee run`` exits at once (status 75) naming folder and PID,
    and the first one's journal and console socket are untouched."""
    cfg = config(tmp_path)
    first = service(cfg, FakeTime())
    with pytest.raises(TableBusyError, match=rf"{cfg.journal_dir}.*PID {os.getpid()}"):
        service(cfg, FakeTime())
    first.close()
    service(cfg, FakeTime()).close()  # free again once the first let go

    socket_path = tmp_path / "console.sock"
    cfg = config(tmp_path, extra=f'console_socket = "{socket_path}"')
    one = subprocess.Popen([sys.executable, "-m", "cardtable.cli", "run", "--config", cfg.path,
                            "--no-console"], stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 20
        while not socket_path.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert socket_path.exists()
        journal = tmp_path / "journals" / "current.jsonl"
        before = journal.read_bytes()
        two = subprocess.run([sys.executable, "-m", "cardtable.cli", "run", "--config",
                              cfg.path, "--no-console"], capture_output=True, text=True,
                             timeout=20)
        assert two.returncode == 75
        assert f"PID {one.pid}" in two.stderr and str(cfg.journal_dir) in two.stderr
        assert "Traceback" not in two.stderr
        assert journal.read_bytes() == before and socket_path.exists()
    finally:
        one.send_signal(signal.SIGTERM)
        assert one.wait(10) == 0


def test_garbage_in_the_middle_resumes_from_the_last_good_line(tmp_path) -> None:
    """10.5: a damaged line in the middle no longer sets the whole game aside: the game goes on
    from the inputs before it, the whole file is kept, and an alert says so."""
    now = FakeTime()
    cfg = config(tmp_path)
    svc = service(cfg, now)
    for _ in range(30):
        lay_turn(svc, now)
    svc.close()
    lines = svc.current_path.read_text().splitlines(keepends=True)
    original = "".join(lines)
    lines[21] = '{"t": 5, "seat": 0, "act": "lay"  <- a power glitch\n'
    svc.current_path.write_text("".join(lines))
    expected = replay(read_journal_text("".join(lines[:21]))).state

    again = service(cfg, FakeTime())
    assert again.resumed
    assert again.state()["cards_played"] == expected["cards_played"] == 20
    kept = [p for p in again.journal_dir.iterdir() if p.name.startswith("damaged-")]
    assert len(kept) == 1 and "power glitch" in kept[0].read_text()
    assert kept[0].read_text() != original
    assert "line 22" in again.state()["alerts"]["journal_damaged"]
    assert len(read_journal(again.current_path).inputs) == 20


def test_a_full_disk_stops_the_judging_not_the_table(tmp_path, monkeypatch) -> None:
    """10.4: an input that cannot be written is not judged, later ones are ignored with the
    reason, every display is told (``alerts.journal``), nothing written is lost, and once the
    disk takes writes again the game goes on by itself."""
    import cardtable.service as service_module

    now = FakeTime()
    rec = Recorder()
    svc = service(config(tmp_path), now, outputs=[rec])
    for _ in range(3):
        lay_turn(svc, now)
    written = svc.current_path.read_bytes()
    real_write = os.write
    full = {"on": True}

    def write(fd: int, data: bytes) -> int:
        if full["on"]:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_write(fd, data)

    monkeypatch.setattr(os, "write", write)
    real_open = open

    def guarded_open(path, *a, **kw):  # the probe file too finds the disk full
        if full["on"] and str(path).endswith(".probe"):
            raise OSError(errno.ENOSPC, "No space left on device", str(path))
        return real_open(path, *a, **kw)

    monkeypatch.setattr(service_module, "open", guarded_open, raising=False)
    before = svc.state()["cards_played"]
    lay_turn(svc, now)
    state = svc.state()
    assert state["cards_played"] == before
    assert "No space left on device" in state["alerts"]["journal"]
    assert "paused" in state["alerts"]["journal"]
    # every display says the service's own sentence in its language (it parses the sentence:
    # a change of its words here must show there)
    from cardtable.display.scene import journal_alert
    from cardtable.i18n import language

    assert journal_alert(state["alerts"]["journal"], language("sv")) == (
        f"Journalen kan inte skrivas (disken är full i {svc.journal_dir}): spelet står still "
        "tills den kan det")
    assert any(v.verdict == "journal_error" for b, _ in rec.batches for v in b)
    svc.submit(Input(now.t, state["turn"], "slap"))
    svc.step()
    ignored = [v for b, _ in rec.batches for v in b if v.verdict == "ignored"]
    assert ignored and "journal cannot be written" in ignored[-1]["reason"]
    assert svc.current_path.read_bytes() == written  # whole lines only, nothing lost

    full["on"] = False
    svc._fault_checked = 0.0  # the next step is the next second's retry
    now.t += 1_100 * MS
    svc.step()
    assert "journal" not in svc.state()["alerts"]
    lay_turn(svc, now)
    assert svc.state()["cards_played"] == before + 1
    assert len(read_journal(svc.current_path).inputs) == 4


def test_a_new_game_on_a_full_disk_waits_for_the_disk(tmp_path, monkeypatch) -> None:
    """10.4: the console's ``new`` on a full disk deals nothing and says why; the deal happens
    once the disk takes writes again."""
    now = FakeTime()
    svc = service(config(tmp_path), now)
    real_write = os.write
    full = {"on": True}
    monkeypatch.setattr(os, "write", lambda fd, data: (_ for _ in ()).throw(
        OSError(errno.ENOSPC, "No space left on device")) if full["on"] else real_write(fd, data))
    svc.start_game()
    assert "No space left" in svc.state()["alerts"]["journal"]
    full["on"] = False
    svc._fault_checked = 0.0
    svc.step()
    assert "journal" not in svc.state()["alerts"]
    assert read_journal(svc.current_path).inputs == []
    lay_turn(svc, now)
    assert len(read_journal(svc.current_path).inputs) == 1


@pytest.fixture
def small_disk(tmp_path):
    """A real 12 KiB tmpfs (root only; skipped where mounting is not allowed), unmounted after."""
    where = tmp_path / "disk"
    where.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12k", "tmpfs", str(where)],
                          capture_output=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_real_full_disk_pauses_the_table_and_it_resumes_when_there_is_room(small_disk) -> None:
    """10.4 on a real file system: a 12 KiB disk fills up mid-game; the journal keeps whole
    lines, the table pauses with the alert, and after the disk grows the game goes on and the
    journal replays to exactly what the table judged."""
    (small_disk / "table.toml").write_text(
        '[table]\nid = "t1"\ngame = "beggar-my-neighbour"\nseats = ["Anna", "Bo"]\n'
        'card_source = "virtual"\njournal_dir = "journals"\nseed = 3\nsettle_ms = 20\n')
    now = FakeTime()
    svc = service(load_config(small_disk / "table.toml"), now)
    laid = 0
    while "journal" not in svc.state()["alerts"] and laid < 2000:
        if svc.state()["over"]:
            svc.start_game()  # the finished journal stays on the disk, archived
        turn = svc.state()["turn"]
        now.t += 500 * MS
        svc.submit(Input(svc.clock.now(), turn, "slap"))  # virtual deck: the slap button lays
        now.t += 30 * MS
        svc.step()
        laid += 1
    state = svc.state()
    assert "No space left on device" in state["alerts"]["journal"]
    for path in svc.journal_dir.glob("*.jsonl"):
        read_journal(path)  # strict: every journal on the disk holds whole lines only
    if svc.current_path.exists():  # (the disk may also have filled up at a new deal)
        journal = read_journal(svc.current_path)
        assert replay(journal, finish=False).state["cards_played"] == state["cards_played"]
    subprocess.run(["mount", "-o", "remount,size=1m", str(small_disk)], check=True)
    svc._fault_checked = 0.0
    now.t += 1_100 * MS
    svc.step()
    assert "journal" not in svc.state()["alerts"]
    before = svc.state()["cards_played"]
    turn = svc.state()["turn"]
    now.t += 500 * MS
    svc.submit(Input(svc.clock.now(), turn, "slap"))
    now.t += 30 * MS
    svc.step()
    assert svc.state()["cards_played"] == before + 1
    svc.close()
    again = replay(read_journal(svc.current_path), finish=False)
    assert again.state["cards_played"] == svc.state()["cards_played"]


@pytest.mark.slow
def test_the_full_stack_on_a_full_disk_ends_with_the_error(small_disk) -> None:
    """10.4: ``simulate --full-stack`` cannot wait for a disk: it stops with the reason
    (status 75) instead of hanging. The game is a Beggar My Neighbour deal of 409 cards (no
    choices: the same game at any pace), whose journal outgrows the 12 KiB disk."""
    run = subprocess.run([sys.executable, "-m", "cardtable.cli", "simulate", "--game",
                          "beggar-my-neighbour", "--players", "2", "--seed", "9", "--full-stack",
                          "--fast", "--journal-dir", str(small_disk / "j")],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 75
    assert "No space left on device" in run.stderr and "Traceback" not in run.stderr


def connect_many(path: Path, n: int) -> list:
    """``n`` connections to the Unix socket at ``path``, left open."""
    import socket as sockets

    made = []
    for _ in range(n):
        c = sockets.socket(sockets.AF_UNIX)
        c.connect(str(path))
        made.append(c)
    return made


def _socket_table(tmp_path, game="beggar-my-neighbour"):
    import tempfile

    sock = Path(tempfile.mkdtemp(prefix="rc-", dir="/tmp")) / "console.sock"  # short: AF_UNIX
    cfg = config(tmp_path, game=game, extra=f'console_socket = "{sock}"')
    svc = build_service(cfg, console=False)
    svc.fsync = False
    return svc, sock


def test_the_console_socket_is_bounded(tmp_path, caplog) -> None:
    """10.8: 300 idle connections cannot starve the console (one over the limit is told so),
    an idle one is closed, and a 70 KB line is refused with an answer, not an exception."""
    import socket as sockets

    svc, sock = _socket_table(tmp_path)

    async def go() -> tuple[list[str], list[str], bytes, float]:
        task = asyncio.create_task(svc.run())
        async with asyncio.timeout(5):
            while not sock.exists():
                await asyncio.sleep(0.01)
        console = next(e for e in svc.edges if isinstance(e, SocketConsole))
        console.idle_s = 1.0
        idle = await asyncio.to_thread(connect_many, sock, 300)  # off the loop: accepted
        await asyncio.sleep(0.2)
        over: list[str] = []
        await asyncio.to_thread(console_client, str(sock), ["state"], out=over.append)
        for c in idle:
            c.close()
        await asyncio.sleep(0.2)
        start = time.monotonic()
        replies: list[str] = []
        await asyncio.to_thread(console_client, str(sock), ["new"], out=replies.append)
        took = time.monotonic() - start
        big = sockets.socket(sockets.AF_UNIX)
        big.connect(str(sock))
        await asyncio.to_thread(big.sendall, b"lay 0 " + b"x" * 70_000 + b"\n")
        answer = await asyncio.to_thread(big.recv, 4096)
        big.close()
        svc.stop()
        await task
        return over, replies, answer, took

    over, replies, answer, took = asyncio.run(go())
    assert over and over[0].startswith("? too many console connections")
    assert replies == ["a new game is dealt"] and took < 2.0
    assert answer.startswith(b"? a line longer than 4096 bytes")
    assert "Unhandled exception" not in caplog.text and "Too many open files" not in caplog.text


def test_referee_console_prints_the_result_and_fails_on_a_refusal(tmp_path) -> None:
    """10.9: the client prints what came of its line (the verdicts, or the refusal in plain
    words) and exits 1 on a refusal or an unknown command."""
    svc, sock = _socket_table(tmp_path, game="banka-bever")

    async def go() -> list[tuple[int, list[str]]]:
        task = asyncio.create_task(svc.run())
        async with asyncio.timeout(5):
            while not sock.exists():
                await asyncio.sleep(0.01)
        results = []
        turn = svc.state()["turn"]
        for line in (f"lay {1 - turn}", "lay 99999 QH", "bogus", f"lay {turn}", "play 0 QH"):
            out: list[str] = []
            code = await asyncio.to_thread(console_client, str(sock), [line], out=out.append)
            results.append((code, out))
        svc.stop()
        await task
        return results

    (wrong, out_of_range, bogus, right, play) = asyncio.run(go())
    assert wrong[0] == 1 and wrong[1][0].startswith("? ") and "not allowed" in wrong[1][0]
    assert out_of_range[0] == 1 and "there is no seat 99999" in out_of_range[1][0]
    assert bogus[0] == 1 and bogus[1][0].startswith("? unknown command")
    assert right[0] == 0 and right[1], right
    assert play[0] == 1 and "Banka bäver has no 'play'" in play[1][0]
    assert len(read_journal(svc.current_path).inputs) == 2  # neither refusal was journaled


def test_the_console_greets_prompts_and_speaks_in_plain_words(tmp_path, capsys) -> None:
    """10.17: on a terminal the console prints a banner and a prompt, answers each line, and
    shows the table's verdicts as plain lines (the log records go to the journal folder)."""

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    now = FakeTime()
    svc = service(config(tmp_path, game="banka-bever"), now)
    out: list[str] = []
    typed = ConsoleEdge(Terminal(""), echo=out.append)
    svc.outputs.append(typed)

    async def go() -> None:
        await typed.start(svc)
        turn = svc.state()["turn"]
        await asyncio.gather(typed.answer(svc, f"lay {turn}\n"), _release(svc, now))

    asyncio.run(go())
    assert out[0].startswith("Banka bäver at table t1: Anna, Bo. Type 'help'")
    assert "> " in capsys.readouterr().out
    assert any(line.startswith(("ok: Anna lays", "ok: Bo lays")) for line in out), out
    assert not any("INFO" in line for line in out)


async def _release(svc, now: FakeTime) -> None:
    """Let the settle window pass on the fake clock and step the service (as its loop does)."""
    for _ in range(20):
        await asyncio.sleep(0.01)
        now.t += 30 * MS
        svc.step()


# -- release by the edges' progress (issue 11) --------------------------------------------

class StubSource:
    """An edge that stamps its inputs itself and says how far it has handed them in."""

    source = "stub"

    def __init__(self) -> None:
        self.at: int | None = None

    async def start(self, service) -> None:  # pragma: no cover - never started here
        pass

    async def stop(self) -> None:  # pragma: no cover
        pass

    def progress(self) -> int | None:
        return self.at


class Silent:
    """An edge that says nothing about its stamps (a new card source, say)."""

    async def start(self, service) -> None:  # pragma: no cover
        pass

    async def stop(self) -> None:  # pragma: no cover
        pass


def _cards_after_one_lay(tmp_path, edges, extra="") -> tuple[int, int]:
    """A lay stamped now, then a step 1 ms later with the source 2 ms past it, then one 25 ms
    later: the cards played after each step."""
    now = FakeTime()
    svc = service(config(tmp_path, extra=extra), now, edges=edges)
    t = now.t
    svc.submit(Input(t, svc.state()["turn"], "slap"))  # the virtual deck's turn button: a lay
    for edge in edges:
        if isinstance(edge, StubSource):
            edge.at = t + 2 * MS
    now.t = t + 1 * MS
    svc.step()
    early = svc.state()["cards_played"]
    now.t = t + 25 * MS
    svc.step()
    return early, svc.state()["cards_played"]


def test_an_input_is_judged_as_soon_as_every_source_is_past_it(tmp_path) -> None:
    assert _cards_after_one_lay(tmp_path, [StubSource()]) == (1, 1)


def test_a_source_that_cannot_say_keeps_the_settle_window(tmp_path) -> None:
    """An edge that is no source and does not stamp at hand-in, or a source that has not
    reported (an unplugged board), holds every input for the whole window."""
    for name, edges in (("silent", [Silent()]), ("quiet", [StubSource(), Quiet()])):
        (tmp_path / name).mkdir()
        assert _cards_after_one_lay(tmp_path / name, edges) == (0, 1), name


class Quiet(StubSource):
    """A second source that never reports."""

    source = "quiet"

    def progress(self) -> int | None:
        return None


def test_release_window_ignores_the_sources(tmp_path) -> None:
    assert _cards_after_one_lay(tmp_path, [StubSource()],
                                extra='release = "window"') == (0, 1)


def test_a_console_stamps_at_hand_in_and_holds_nothing_back(tmp_path) -> None:
    assert _cards_after_one_lay(tmp_path, [StubSource(), ConsoleEdge()]) == (1, 1)


def test_the_release_key_is_checked(tmp_path) -> None:
    with pytest.raises(ConfigError, match="table.release.*progress, window"):
        config(tmp_path, extra='release = "soon"')


def test_the_console_socket_against_a_thousand_connections_garbage_and_a_megabyte(
        tmp_path, caplog) -> None:
    """Issue 36, attack 3: 1 000 connections at once, binary garbage, a 1 MB line, a command
    out of turn; and the socket file is the referee's group's alone (0660, from the bind on)."""
    import socket as sockets
    import stat as stats

    svc, sock = _socket_table(tmp_path, game="banka-bever")
    umask = os.umask(0o022)
    os.umask(umask)

    async def go() -> dict[str, Any]:
        task = asyncio.create_task(svc.run())
        async with asyncio.timeout(5):
            while not sock.exists():
                await asyncio.sleep(0.01)
        got: dict[str, Any] = {"mode": stats.S_IMODE(sock.stat().st_mode),
                               "umask": os.umask(umask)}
        os.umask(umask)

        def talk(lines: list[bytes]) -> list[bytes]:
            with sockets.socket(sockets.AF_UNIX) as c:
                c.connect(str(sock))
                answers = []
                reader = c.makefile("rb")
                for line in lines:
                    c.sendall(line)
                    answer = b""
                    for row in iter(reader.readline, b""):
                        if row == b".\n":
                            break
                        answer += row
                    answers.append(answer)
                return answers

        crowd = await asyncio.to_thread(connect_many, sock, 1000)
        got["during"] = await asyncio.to_thread(lambda: console_client_lines(sock, ["state"]))
        for c in crowd:
            c.close()
        await asyncio.sleep(0.3)
        turn = svc.state()["turn"]
        got["talk"] = await asyncio.to_thread(talk, [
            b"\xff\xfe\x00lay\x80 0\n", f"lay {1 - turn} QH\n".encode(), b"state\n"])
        got["turn"] = turn
        with sockets.socket(sockets.AF_UNIX) as big:
            big.connect(str(sock))
            try:
                await asyncio.to_thread(big.sendall, b"lay 0 " + b"x" * 1_000_000 + b"\n")
            except (BrokenPipeError, ConnectionResetError):
                pass  # refused and closed before the megabyte was all sent
            got["big"] = await asyncio.to_thread(big.recv, 4096)
        got["after"] = await asyncio.to_thread(lambda: console_client_lines(sock, ["state"]))
        svc.stop()
        await task
        return got

    got = asyncio.run(go())
    assert got["mode"] == 0o660 and got["umask"] == umask  # the process's umask is as it was
    assert got["during"][0].startswith("? too many console connections")
    garbage, out_of_turn, state = got["talk"]
    assert garbage.startswith(b"? unknown command")
    assert out_of_turn.startswith(b"? ") and b"turn" in out_of_turn
    assert json.loads(state)["game"] == "banka-bever"
    assert got["big"].startswith(b"? a line longer than 4096 bytes")
    assert json.loads(got["after"][0])["turn"] == got["turn"]  # the table went on as it was
    assert "Unhandled exception" not in caplog.text and "Too many open files" not in caplog.text


def console_client_lines(sock: Path, lines: list[str]) -> list[str]:
    said: list[str] = []
    console_client(str(sock), lines, out=said.append)
    return said


def test_inputs_handed_in_together_cost_one_sync_and_all_or_none_are_held(
        tmp_path, monkeypatch) -> None:
    """Issue 36: the four slaps of a race waited for four syncs, one after the other; now the
    inputs a step takes are written in one go and synced once. A write that fails holds none
    of them, and each is answered as ignored."""
    import referee.journal as journal

    now = FakeTime()
    svc = RefereeService(config(tmp_path, game="banka-bever", seats=("A", "B", "C", "D")),
                         clock=TableClock(source=now), fsync=True)
    svc.open_game()
    syncs: list[int] = []
    real = journal.os.fsync
    monkeypatch.setattr(journal.os, "fsync", lambda fd: (syncs.append(fd), real(fd))[1])
    before = len(read_journal(svc.current_path).inputs)
    for seat in range(4):
        svc.submit(Input(svc.clock.now() + seat * 1000, seat, "slap"))
    svc.step()
    assert len(syncs) == 1
    assert len(read_journal(svc.current_path).inputs) == before + 4

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(journal.os, "fsync", full)
    recorder = Recorder()
    svc.outputs.append(recorder)
    for seat in range(4):
        svc.submit(Input(svc.clock.now() + seat * 1000, seat, "slap"))
    svc.step()
    assert len(read_journal(svc.current_path).inputs) == before + 4  # none of them
    ignored = [v for verdicts, _ in recorder.batches for v in verdicts if v.verdict == "ignored"]
    assert len(ignored) == 4 and svc.journal_fault is not None
    svc.close()


def test_two_corrections_in_one_second_keep_every_journal_before_them(tmp_path) -> None:
    """Found by the issue 36 audit: the journal before a correction was kept under a name
    stamped to the second, so a second correction in that second replaced it, and the game as
    first laid was lost."""
    now = FakeTime()
    svc = service(config(tmp_path, source="console", seed=None), now)
    console = ConsoleEdge(io.StringIO(), echo=lambda _line: None)
    for card in ("7H", "8C"):
        console.handle(svc, f"lay {svc.state()['turn']} {card}\n")
        now.t += 30 * MS
        svc.step()
    first = svc.current_path.read_text()
    console.handle(svc, "correct 2 2C")
    second = svc.current_path.read_text()
    console.handle(svc, "correct 3 3C")
    kept = sorted(p.read_text() for p in svc.journal_dir.glob("before-correction-*.jsonl"))
    assert kept == sorted([first, second])
    assert svc.state()["pile"] == ["2C", "3C"]


@pytest.mark.parametrize("fails", ["fsync", "replace", "link"])
def test_a_correction_that_cannot_be_written_leaves_the_game_as_it_was(
        tmp_path, monkeypatch, fails) -> None:
    """Found by a probe of crashes and full disks: a correction moved current.jsonl away
    before it wrote the corrected one, so a full disk (or a crash) then left no journal, and
    the next start dealt a new game. Each step failing now leaves the journal whole."""
    import errno

    import cardtable.service as service_module

    now = FakeTime()
    svc = service(config(tmp_path, source="console", seed=None), now)
    out: list[str] = []
    console = ConsoleEdge(io.StringIO(), echo=out.append)
    for card in ("7H", "8C"):
        console.handle(svc, f"lay {svc.state()['turn']} {card}\n")
        now.t += 30 * MS
        svc.step()
    before = svc.current_path.read_bytes()
    real = getattr(os, fails)
    calls = []

    def full(*args, **kw):
        calls.append(args)
        if len(calls) == 1:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(*args, **kw)

    monkeypatch.setattr(service_module.os, fails, full)
    console.handle(svc, "correct 2 2C")
    monkeypatch.undo()
    assert not list(svc.journal_dir.glob(".*.tmp"))  # no spare file left
    kept = list(svc.journal_dir.glob("before-correction-*.jsonl"))
    if fails == "link":  # a file system without hard links: the old journal copied
        assert out[-1] == "line 2 (Bo's lay): 7H → 2C", out
        assert [k.read_bytes() for k in kept] == [before]
        assert svc.state()["pile"] == ["2C", "8C"]
        return
    assert "could not be written (the disk is full)" in out[-1], out
    assert svc.current_path.read_bytes() == before
    assert not kept  # no copy of the journal beside it: nothing was corrected
    assert svc.state()["pile"] == ["7H", "8C"]
    # the game goes on, into the same journal
    console.handle(svc, f"lay {svc.state()['turn']} 9D\n")
    now.t += 30 * MS
    svc.step()
    assert read_journal(svc.current_path).inputs[-1].card is not None
    assert len(svc.current_path.read_bytes()) > len(before)


def test_a_journal_damaged_in_the_middle_is_kept_whole_before_it_is_replaced(tmp_path) -> None:
    """The whole damaged file is kept, and a current.jsonl is there at every step (it had
    been moved away first: a crash then left none, and a new game was dealt)."""
    now = FakeTime()
    svc = service(config(tmp_path, source="console", seed=None), now)
    console = ConsoleEdge(io.StringIO(), echo=lambda _line: None)
    for card in ("7H", "8C", "9D"):
        console.handle(svc, f"lay {svc.state()['turn']} {card}\n")
        now.t += 30 * MS
        svc.step()
    svc.close()
    lines = svc.current_path.read_text().splitlines(keepends=True)
    damaged = "".join(lines[:2] + ['{"t": garbage\n'] + lines[2:])
    svc.current_path.write_text(damaged)
    again = service(config(tmp_path, source="console", seed=None), now)
    [kept] = again.journal_dir.glob("damaged-*.jsonl")
    assert kept.read_text() == damaged
    assert again.state()["pile"] == ["7H"]
    assert not list(again.journal_dir.glob("*.tmp"))


def test_a_header_without_its_newline_is_set_aside_not_played_under(tmp_path) -> None:
    """Found by a probe of power cuts: the reader took a header that had lost its newline,
    the writer then cut the file back to its last newline (none: the whole header), and the
    game was played into a journal with no header, set aside as broken at the next start."""
    now = FakeTime()
    svc = service(config(tmp_path, source="console", seed=None), now)
    header = svc.current_path.read_text().splitlines()[0]
    svc.close()
    svc.current_path.write_text(header)  # no newline
    again = service(config(tmp_path, source="console", seed=None), now)
    assert "header has no newline" in again.alerts["journal_damaged"]
    assert list(again.journal_dir.glob("current.broken-*.jsonl"))
    console = ConsoleEdge(io.StringIO(), echo=lambda _line: None)
    console.handle(again, f"lay {again.state()['turn']} 7H\n")
    now.t += 30 * MS
    again.step()
    again.close()
    journal = read_journal(again.current_path)  # a whole journal, its header first
    assert [str(i.card) for i in journal.inputs if i.act == "lay"] == ["7H"]
    third = service(config(tmp_path, source="console", seed=None), now)
    assert third.state()["pile"] == ["7H"]


def test_a_game_that_cannot_be_dealt_leaves_the_game_on_the_table(tmp_path, monkeypatch) -> None:
    """Found by the issue 36 audit: a new game whose engine failed to deal (a time limit of
    1e400 s) archived the game being played and wrote the new header first, and the table could
    not start again. The new game is dealt aside first now; if it fails, nothing is touched."""
    import cardtable.service as service_module

    now = FakeTime()
    svc = service(config(tmp_path), now)
    lay_turn(svc, now)
    before = svc.current_path.read_bytes()
    real = service_module.Table

    def table(header, *args, **kw):
        if header.seats == ("Cia", "Dan"):
            raise OverflowError("cannot convert float infinity to integer")
        return real(header, *args, **kw)

    monkeypatch.setattr(service_module, "Table", table)
    svc.set_game("beggar-my-neighbour", ["Cia", "Dan"], 0, {})
    with pytest.raises(ValueError, match="cannot be dealt: cannot convert float infinity"):
        svc.start_game()
    assert svc.current_path.read_bytes() == before
    assert list(svc.journal_dir.glob("*-beggar-my-neighbour.jsonl")) == []
    assert svc.state()["cards_played"] == 1 and svc.config.seats == ("Anna", "Bo")
    lay_turn(svc, now)  # and the game goes on
    assert svc.state()["cards_played"] == 2


def test_the_console_socket_quits_only_the_connection_and_survives_odd_digits(tmp_path) -> None:
    """Found by the issue 36 audit: ``quit now`` on the socket stopped the referee (only a bare
    ``quit`` closed the connection), and ``correct ² 5H`` (a digit to str.isdigit, not to int)
    ended the connection with an exception in the log."""
    svc, sock = _socket_table(tmp_path)

    async def go() -> tuple[list[str], list[str], bool]:
        task = asyncio.create_task(svc.run())
        async with asyncio.timeout(5):
            while not sock.exists():
                await asyncio.sleep(0.01)
        said: list[str] = []
        await asyncio.to_thread(console_client, str(sock), ["correct ² 5H", "state"],
                                out=said.append)
        quitting: list[str] = []
        await asyncio.to_thread(console_client, str(sock), ["QUIT now", "state"],
                                out=quitting.append)
        await asyncio.sleep(0.2)
        running = not task.done()
        svc.stop()
        await task
        return said, quitting, running

    said, quitting, running = asyncio.run(go())
    assert running, "quit now stopped the referee"
    assert quitting == ["? the referee closed the connection"]  # and read no "state"
    assert said[0].startswith("?") and said[1].startswith("{")
