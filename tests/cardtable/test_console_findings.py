"""The operator console as a new user met it (issue 37): game time, not the machine's uptime;
``correct`` without a journal line number; the card a virtual deck turned; a pause that
decides nothing, not even by time."""

from __future__ import annotations

import asyncio
import io

from cardtable.clock import TableClock
from cardtable.config import load_config
from cardtable.console import ConsoleEdge
from cardtable.service import RefereeService
from referee.journal import read_journal

MS = 1_000_000


class FakeTime:
    def __init__(self, t: int = 3_600_000 * MS) -> None:  # an hour after the machine started
        self.t = t

    def __call__(self) -> int:
        return self.t


class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def table(tmp_path, game="banka-bever", source="console", seed=None) -> RefereeService:
    path = tmp_path / "table.toml"
    path.write_text(f'[table]\nid = "t"\ngame = "{game}"\nseats = ["Anna", "Bo"]\n'
                    f'card_source = "{source}"\njournal_dir = "j"\nsettle_ms = 20\n'
                    + ("" if seed is None else f"seed = {seed}\n"))
    return RefereeService(load_config(path), clock=TableClock(source=FakeTime()), fsync=False)


def typed(svc: RefereeService, console: ConsoleEdge, line: str, ms: int = 100) -> None:
    console.handle(svc, line)
    svc.clock.source.t += ms * MS  # type: ignore[attr-defined]
    svc.step()


def test_console_times_are_game_time_not_the_machine_uptime(tmp_path) -> None:
    svc = table(tmp_path)
    svc.open_game()
    out: list[str] = []
    console = ConsoleEdge(Terminal(""), echo=out.append)
    asyncio.run(console.start(svc))
    svc.outputs.append(console)
    typed(svc, console, "lay 1 KH", ms=61_000)  # a king: Anna owes three cards
    typed(svc, console, "slap 0", ms=100)  # a minute in, a false slap
    lines = [line for line in out if "slapped falsely" in line or "owes" in line]
    assert lines[0].startswith("0:00.000  Bo challenges"), out
    assert lines[1].startswith("1:01.000  Anna slapped falsely"), out


def test_correct_without_a_line_number_corrects_the_last_card_laid(tmp_path) -> None:
    svc = table(tmp_path)
    svc.open_game()
    out: list[str] = []
    console = ConsoleEdge(io.StringIO(), echo=out.append)
    typed(svc, console, "lay 1 7H")
    typed(svc, console, "lay 0 5S")
    typed(svc, console, "slap 1")  # not a card: the last card laid is still Anna's
    console.handle(svc, "correct QS")
    assert out[-1] == "line 3 (Anna's lay): 5S → QS", out
    assert svc.state()["pile"] == ["7H", "QS"]
    assert svc.state()["challenge"] is not None  # the queen now demands two cards of Bo
    assert read_journal(svc.current_path).inputs[1].card is not None
    console.handle(svc, "correct 2 8C")  # the line number still works
    assert out[-1].startswith("line 2 (Bo's lay): 7H → 8C")
    assert svc.state()["pile"] == ["8C", "QS"]


def test_correct_before_any_card_says_so(tmp_path) -> None:
    svc = table(tmp_path)
    svc.open_game()
    out: list[str] = []
    ConsoleEdge(io.StringIO(), echo=out.append).handle(svc, "correct QS")
    assert out == ["? no card has been laid or drawn in this game yet"]


def test_a_virtual_deck_lay_is_answered_with_its_card(tmp_path) -> None:
    svc = table(tmp_path, game="beggar-my-neighbour", source="virtual", seed=5)
    svc.open_game()
    out: list[str] = []
    console = ConsoleEdge(io.StringIO(), echo=out.append)

    async def go() -> None:
        turn = svc.state()["turn"]
        answer = asyncio.ensure_future(console.answer(svc, f"lay {turn}\n"))
        for _ in range(20):
            await asyncio.sleep(0.01)
            svc.clock.source.t += 30 * MS  # type: ignore[attr-defined]
            svc.step()
        await answer

    asyncio.run(go())
    top = svc.state()["pile"][-1]
    assert out == [f"ok: Bo lays the {_name(top)}"]


def _name(card: str) -> str:
    from referee.cards import parse_card

    return parse_card(card).name()


def test_a_pause_decides_nothing_not_even_a_collect_grace(tmp_path) -> None:
    """Paused while a won pile's collect grace runs: the pile is not taken until the game
    resumes, and then at once, with the verdict a replay of the journal gives."""
    svc = table(tmp_path)
    svc.open_game()
    console = ConsoleEdge(io.StringIO(), echo=lambda _text: None)
    typed(svc, console, "lay 1 JH")  # Anna owes one card
    typed(svc, console, "lay 0 5S")  # and fails: Bo's claim waits for its collect grace
    before = svc.state()
    assert before["claim"] is not None
    svc.pause()
    svc.clock.source.t += 10_000 * MS  # type: ignore[attr-defined]  # far past the grace
    svc.step()
    assert svc.state()["claim"] is not None and svc.state()["pile"] == before["pile"]
    assert svc._next_deadline() is None  # nothing for the loop to wait for
    svc.resume()
    svc.step()
    assert svc.state()["claim"] is None
    assert [v.verdict for v in svc.table.verdicts if v.verdict == "pile_won"] == ["pile_won"]
