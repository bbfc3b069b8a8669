"""Error messages a person reads spell values as the journal (JSON), the configuration (TOML)
and the command line do: ``true``, ``null``, ``"text"``, never Python's ``True``, ``None`` or
``'text'`` (issue 10.15)."""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import pytest

from referee.errors import RefereeError
from referee.games import game, parse_options
from referee.journal import JournalHeader
from referee.model import Input

PYTHON = re.compile(r"\b(True|False|None)\b")
HEADER: dict[str, Any] = {"journal": 1, "game": "vandatta", "seats": ["A", "B"]}


def test_shown_spells_values_as_json_and_toml() -> None:
    from referee.errors import shown

    assert [shown(v) for v in (True, False, None, "yes", 1, 1.5, [1, "a"])] == \
        ["true", "false", "null", '"yes"', "1", "1.5", '[1, "a"]']
    assert len(shown("x" * 10_000)) < 100


@pytest.mark.parametrize(("act", "words"), [
    (lambda: parse_options("vandatta", {"lappen": "yes"}), 'got "yes"'),
    (lambda: parse_options("banka-bever", {"collect_grace_ms": True}), "got true"),
    (lambda: parse_options("banka-bever", {"false_slap_penalty": None}), "got null"),
    (lambda: parse_options("beggar-my-neighbour", {"time_limit_s": False}), "got false"),
    (lambda: JournalHeader.from_json(dict(HEADER, dealer=True)), "got true"),
    (lambda: JournalHeader.from_json(dict(HEADER, seed="7")), 'got "7"'),
    (lambda: JournalHeader.from_json(dict(HEADER, game=None)), "got null"),
    (lambda: JournalHeader.from_json(dict(HEADER, journal=None)), "is null"),
    (lambda: Input.from_json({"t": True, "seat": 0, "act": "pass"}), "got true"),
    (lambda: Input.from_json({"t": 1, "seat": None, "act": "pass"}), "got null"),
    (lambda: Input.from_json({"t": 1, "seat": 0, "act": False}), "false"),
    (lambda: Input.from_json({"t": 1, "seat": 0, "act": "call", "call": False}), "got false"),
    (lambda: Input.from_json({"t": 1, "seat": 0, "act": "play", "cards": "QH"}), 'got "QH"'),
    (lambda: Input.from_json({"t": 1, "seat": 0, "act": "lay", "card": True}), "true"),
    (lambda: game("vandatta").check_seats(True), "not true"),
    (lambda: game("vandatta").check_seats(3, None), "dealer null"),
])
def test_messages_spell_values_as_json_does(act: Callable[[], object], words: str) -> None:
    with pytest.raises(RefereeError) as info:
        act()
    text = str(info.value)
    assert words in text, text
    assert not PYTHON.search(text), text
