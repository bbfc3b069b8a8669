"""Found by the issue 36 audit: seat names holding terminal escape sequences, newlines and
direction marks, from a journal or from the broker, were printed as they were: ``ESC [2J``
cleared a terminal display's screen, an OSC sequence set its title, and a newline faked a
``Game over`` line of its own."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from rich.console import Console

from cardtable.cli import main
from cardtable.config import load_config
from cardtable.display.check import check_state, read_json
from cardtable.display.render import render
from referee.errors import ConfigError

EVIL = ["\x1b[2J\x1b[31mEVIL\x1b]0;pwned\x07", "Bo\nGame over: Bo wins", "\u202eanna", "Dan\r"]
UNSAFE = ("\x1b", "\x07", "\r", "\u202e")


def test_a_journal_whose_seats_hold_control_characters_is_a_damaged_header(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "evil.jsonl"
    journal.write_text(json.dumps({"journal": 1, "game": "banka-bever", "seats": EVIL,
                                   "dealer": 0, "options": {}, "seed": 3}) + "\n")
    assert main(["replay", str(journal)]) == 2
    captured = capsys.readouterr()
    assert "must not contain control characters" in captured.err
    assert not any(c in captured.out + captured.err for c in UNSAFE)
    assert "Game over: Bo wins" not in captured.out


def test_a_state_from_the_broker_is_drawn_without_its_escape_sequences() -> None:
    state = read_json(json.dumps({"game": "banka-bever", "seats": EVIL, "counts": [1, 2, 3, 4],
                                  "pile": [], "turn": 0, "table": "t\x1b]0;x\x07",
                                  "recent": [{"verdict": "game_over", "winners": [1],
                                              "text": "Game over\x1b[2J"}]}).encode())
    state = check_state(state)
    console = Console(record=True, width=120, force_terminal=False)
    console.print(render(state, state["recent"], "online"))
    text = console.export_text()
    assert not any(c in text for c in UNSAFE), repr(text)
    assert "\ufffd[2J\ufffd[31mEVIL" in text and "Bo\ufffdGame over" in text


def test_table_toml_refuses_direction_marks_too(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text('[table]\nid = "t1"\ngame = "banka-bever"\nseats = ["\u202eanna", "Bo"]\n'
                    'card_source = "virtual"\n')
    with pytest.raises(ConfigError, match="direction marks"):
        load_config(path)


def test_names_from_files_and_folders_reach_the_terminal_escaped(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the 2026-12-07 CLI audit: a deck file's name (``deck show``), a journal's
    file name in the folder (``history``) and a key of ``table.toml`` were printed with
    their escape sequences, which cleared the screen and coloured the text."""
    evil = "\x1b[2J\x1b[31mEVIL"
    deck = tmp_path / "deck.json"
    deck.write_text(json.dumps({"deck": 1, "name": evil, "cards": {}}))
    assert main(["deck", "show", str(deck)]) == 0
    assert capsys.readouterr().out.startswith("\ufffd[2J\ufffd[31mEVIL: 0 of 52")
    folder = tmp_path / "journals"
    folder.mkdir()
    assert main(["simulate", "--game", "banka-bever", "--players", "3", "--fast", "--journal",
                 str(folder / "20261201-200000-banka-bever.jsonl")]) == 0
    (folder / f"damaged-{evil}.jsonl").write_text(
        (folder / "20261201-200000-banka-bever.jsonl").read_text())
    capsys.readouterr()
    assert main(["history", "--journal-dir", str(folder)]) == 0
    toml = tmp_path / "table.toml"
    toml.write_text('[table]\n"\\u001b[2Jx" = 1\n')
    assert main(["run", "--config", str(toml), "--check"]) == 2
    captured = capsys.readouterr()
    assert "damaged-\ufffd[2J\ufffd[31mEVIL.jsonl" in captured.out
    assert "table.\ufffd[2Jx: unknown key" in captured.err
    assert not any(c in captured.out + captured.err for c in UNSAFE)


def test_names_that_look_alike_are_one_name() -> None:
    """Found by the 2026-12-07 CLI audit: "Björn" spelt with a combining diaeresis, or "Anna"
    with a zero-width space, passed as a second seat's own name, and a right-to-left mark was
    taken."""
    from referee.model import seats_problem

    for seats in (["Bj\u00f6rn", "Bjo\u0308rn"], ["Anna", "Anna\u200b"], ["\ufeffBo", "bo"]):
        problem = seats_problem(seats)
        assert problem is not None and problem[0] == 1 and "already the name" in problem[1]
    problem = seats_problem(["Anna\u200f", "Bo"])
    assert problem is not None and "direction marks" in problem[1]
    assert seats_problem(["\u0645\u062d\u200c\u0645\u062f", "Bo"]) is None  # a Persian ZWNJ
