"""The option registry (referee.options.option_specs) that the operator page builds its form
from: every option of every game, with the words of its row in docs/rules.md."""

from __future__ import annotations

import re
from dataclasses import fields
from pathlib import Path

import pytest

from referee.games import games
from referee.options import OptionError, option_specs

RULES = (Path(__file__).resolve().parents[2] / "docs" / "rules.md").read_text(encoding="utf-8")


def rules_row(name: str) -> list[str]:
    """The cells of the option's row in a table of docs/rules.md."""
    [row] = [line for line in RULES.splitlines() if line.startswith(f"| `{name}` |")]
    return [cell.strip() for cell in row.strip("|").split("|")]


@pytest.mark.parametrize("game", sorted(games))
def test_every_option_is_in_the_registry_with_the_words_of_the_rules(game: str) -> None:
    spec = games[game]
    specs = option_specs(spec.options)
    assert [s.name for s in specs] == [f.name for f in fields(spec.options)]
    defaults = spec.options()
    for s in specs:
        _, default, allowed, help_ = rules_row(s.name)
        assert s.default == getattr(defaults, s.name)
        assert s.help == help_, s.name
        assert s.allowed == re.sub(r"`", "", allowed), s.name
        shown = "none (null)" if s.default is None else str(s.default).lower()
        assert default.replace("`", "") == shown, s.name
        # What the registry offers is what the rules library takes: every choice, the minimum.
        for value in s.choices:
            spec.parse_options({s.name: value})
        if s.kind in ("whole", "seconds"):
            assert s.maximum is not None, s.name
            spec.parse_options({s.name: s.maximum})
            for beyond in (s.maximum + 1, float("inf"), float("nan"), 1e400, -1):
                with pytest.raises(OptionError, match=str(s.maximum)):
                    spec.parse_options({s.name: beyond})
        if s.kind == "seconds":  # under 1 ns it would round to no time at all
            assert s.minimum is not None and s.maximum is not None
            spec.parse_options({s.name: s.minimum})
            for beyond in (s.minimum / 2, 1e-12, 0):
                with pytest.raises(OptionError, match=str(s.maximum)):
                    spec.parse_options({s.name: beyond})
        if s.kind == "whole":
            spec.parse_options({s.name: s.minimum})
        if s.kind == "switch":
            with pytest.raises(OptionError):
                spec.parse_options({s.name: "yes please"})
        assert s.to_json()["name"] == s.name
