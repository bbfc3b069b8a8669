"""One operator command path for the console and the operator page (issue 34): the same
refusals in the same words, every change recorded with who asked, a new game from a form
checked like the configuration, and a running game ended only when confirmed."""

from __future__ import annotations

import io
import json

from cardtable.console import ConsoleEdge
from cardtable.operations import OPERATOR_LOG, operate, read_log
from referee.journal import read_journal
from tests.cardtable.test_service import FakeTime, Recorder, config, lay_turn, service


def log_lines(svc) -> list[dict]:
    path = svc.journal_dir / OPERATOR_LOG
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_console_and_page_give_the_same_answers_and_both_are_recorded(tmp_path) -> None:
    now = FakeTime()
    rec = Recorder()
    svc = service(config(tmp_path, game="banka-bever"), now, outputs=[rec])
    said: list[str] = []
    console = ConsoleEdge(stream=io.StringIO(), echo=said.append)
    assert console.handle(svc, "pause")
    assert console.handle(svc, "resume")
    assert said[-2] == operate(svc, "pause", by="Anna's phone").line()
    assert rec.batches[-1][0][0].verdict == "paused"
    assert rec.batches[-1][0][0].get("by") == "Anna's phone"
    # Twice: said so, and the displays are not told again.
    batches = len(rec.batches)
    assert console.handle(svc, "pause") and said[-1].startswith("already paused")
    assert len(rec.batches) == batches and svc.paused
    assert console.handle(svc, "resume")
    assert console.handle(svc, "resume") and said[-1] == "the game is not paused"
    assert len(rec.batches) == batches + 1 and not svc.paused
    # A refusal: the same words on both, a '?' on the console.
    assert not console.handle(svc, "correct ZZ")
    refused = operate(svc, "correct", by="Anna's phone", args={"card": "ZZ"})
    assert not refused.ok and said[-1] == "? " + refused.text
    assert "ZZ" in refused.text
    lines = log_lines(svc)
    assert [(x["by"], x["command"], x["ok"]) for x in lines] == [
        ("console", "pause", True), ("console", "resume", True),
        ("Anna's phone", "pause", True), ("console", "pause", True),
        ("console", "resume", True), ("console", "resume", True), ("console", "correct", False),
        ("Anna's phone", "correct", False)]
    assert lines[-1]["args"] == {"card": "ZZ"} and lines[-1]["text"] == refused.text
    assert read_log(svc, 2) == lines[-2:]


def test_a_new_game_from_a_form_is_checked_like_the_configuration(tmp_path) -> None:
    now = FakeTime()
    svc = service(config(tmp_path, game="banka-bever"), now)
    bad = operate(svc, "new", by="phone", args={"game": "banka-bever",
                                                "seats": ["Anna", "anna "], "dealer": 0})
    assert not bad.ok and bad.text.startswith("seat 2: ") and "already the name" in bad.text
    bad = operate(svc, "new", by="phone", args={
        "game": "banka-bever", "seats": ["A", "B"], "options": {"collect_grace_ms": -5}})
    assert not bad.ok and bad.text.startswith("collect_grace_ms: ")
    bad = operate(svc, "new", by="phone", args={"game": "snap", "seats": ["A", "B"]})
    assert not bad.ok and bad.text.startswith("game: must be one of")
    bad = operate(svc, "new", by="phone", args={"game": "banka-bever", "seats": ["A"]})
    assert not bad.ok and "2 to 8 seats" in bad.text
    assert svc.configured.seats == ("Anna", "Bo")  # nothing refused was taken
    # A game being played is ended only when confirmed.
    lay_turn(svc, now)
    first = svc.current_path.read_text()
    ask = operate(svc, "new", by="phone", confirmed=False, args={
        "game": "banka-bever", "seats": ["Anna", "Bo", "Cia", "Dag"], "dealer": 2,
        "options": {"false_slap_penalty": "burn", "bottom_match": False}})
    assert not ask.ok and ask.confirm
    assert svc.current_path.read_text() == first  # nothing changed yet
    done = operate(svc, "new", by="phone", confirmed=True, args={
        "game": "banka-bever", "seats": ["Anna", "Bo", "Cia", "Dag"], "dealer": 2,
        "options": {"false_slap_penalty": "burn", "bottom_match": False}})
    assert done.ok and done.text == "a new game is dealt"
    header = read_journal(svc.current_path).header
    assert header.seats == ("Anna", "Bo", "Cia", "Dag") and header.dealer == 2
    assert header.options.false_slap_penalty == "burn" and not header.options.bottom_match
    [old] = list(svc.journal_dir.glob("2*-banka-bever.jsonl"))
    assert old.read_text() == first  # the running game was archived as it was
    assert [x["command"] for x in log_lines(svc)] == ["new"] * 5
    assert [x["ok"] for x in log_lines(svc)] == [False] * 4 + [True]
