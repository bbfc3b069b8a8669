"""Configuration fuzz (issue 36, attack 6): random mutations of a valid ``table.toml`` (types,
unknown keys, negatives, huge numbers, unicode, duplicate pins, keys taken away), each read
the way ``referee run`` reads it (the file, then every edge built). Every one is either a
configuration that works or one :class:`ConfigError` naming the file and a key, in TOML's
words; none is a traceback."""

from __future__ import annotations

import copy
import json
import math
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardtable.config import load_config
from cardtable.wiring import build_service
from referee.errors import ConfigError

ROOT = Path(__file__).resolve().parents[2]
BASE: dict[str, Any] = tomllib.loads((ROOT / "deploy" / "table.full-mock.toml").read_text())
BASE["table"]["journal_dir"] = "journals"
BASE["board"]["deck"] = str(ROOT / "deploy" / "synthetic-deck.json")
#: Python's words where TOML's are meant (``got list`` for ``got [1, 2]``, ``None``, ``True``).
PYTHON = re.compile(r"\b(True|False|None|NoneType)\b|got (an? )?(int|float|str|bool|list|dict)\b"
                    r"|Traceback|object at 0x")

#: Values of every kind TOML can hold, the awkward ones first.
VALUES = st.one_of(
    st.sampled_from([-1, 0, 10**30, -(10**30), 1.5, math.inf, -math.inf, math.nan, True, False,
                     "", " ", "x" * 10_000, "Ω≈ç√∫", "\u202e", "../../etc/passwd", [], {}, [1, 2],
                     ["a", 3], {"k": 1}]),
    st.integers(), st.floats(allow_nan=True), st.text(max_size=30), st.booleans(),
    st.lists(st.integers(min_value=-5, max_value=50), max_size=4),
)


def _leaves(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Every place in the document a value sits (tables and arrays of tables walked into)."""
    out: list[tuple[Any, ...]] = []
    if isinstance(doc, dict):
        for k, v in doc.items():
            out.append((*path, k))
            out += _leaves(v, (*path, k))
    elif isinstance(doc, list) and doc and all(isinstance(x, dict) for x in doc):
        for i, v in enumerate(doc):
            out += _leaves(v, (*path, i))
    return out


PLACES = _leaves(BASE)


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for part in path:
        doc = doc[part]
    return doc


@st.composite
def mutations(draw: st.DrawFn) -> tuple[dict[str, Any], str]:
    """A mutated document and what was done, in words (for the failure message)."""
    doc = copy.deepcopy(BASE)
    done = []
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        kind = draw(st.sampled_from(["value", "value", "unknown key", "remove", "duplicate pin"]))
        place = draw(st.sampled_from(PLACES))
        try:  # an earlier mutation may have taken the place's table away
            parent = _get(doc, place[:-1]) if len(place) > 1 else doc
        except (KeyError, IndexError, TypeError):
            continue
        if not isinstance(parent, dict):
            continue
        if kind == "value":
            value = draw(VALUES)
            parent[place[-1]] = value
            done.append(f"{place} = {value!r:.60}")
        elif kind == "unknown key":
            key = draw(st.sampled_from(["colour", "sloap", "Seats", "ω", "table"]))
            parent.setdefault(key, 1)
            done.append(f"{place[:-1]} + {key}")
        elif kind == "remove" and place[-1] in parent:
            del parent[place[-1]]
            done.append(f"del {place}")
        elif kind == "duplicate pin":
            seats = doc.get("seats")
            if isinstance(seats, list) and len(seats) > 1 and all(
                    isinstance(s, dict) for s in seats[:2]) and "slap" in seats[0]:
                seats[1]["slap"] = seats[0].get("slap")
                done.append("seats[1].slap = seats[0].slap")
    return doc, "; ".join(done)


def _text(text: str) -> str:
    """A TOML basic string (JSON's escapes, but no surrogate pairs: TOML has none; and DEL,
    which JSON leaves as it is, escaped)."""
    return json.dumps(text, ensure_ascii=False).replace("\x7f", "\\u007f")


def dump_toml(doc: dict[str, Any]) -> str:
    """A document as TOML text (tables, arrays of tables, and values TOML can spell)."""
    def value(v: Any) -> str:
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, float):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf") if math.isinf(v) \
                else repr(v)
        if isinstance(v, int):
            return str(v)
        if isinstance(v, str):
            return _text(v)
        if isinstance(v, list):
            return "[" + ", ".join(value(x) for x in v) + "]"
        return "{" + ", ".join(f"{_text(k)} = {value(x)}" for k, x in v.items()) + "}"

    top, tables, arrays = [], [], []
    for k, v in doc.items():
        if isinstance(v, dict):
            tables.append((k, v))
        elif isinstance(v, list) and v and all(isinstance(x, dict) for x in v):
            arrays.append((k, v))
        else:
            top.append(f"{_text(k)} = {value(v)}")
    out = top
    for k, v in tables:
        out += [f"[{_text(k)}]"] + [f"{_text(a)} = {value(b)}" for a, b in v.items()]
    for k, rows in arrays:
        for row in rows:
            out += [f"[[{_text(k)}]]"] + [f"{_text(a)} = {value(b)}" for a, b in row.items()]
    return "\n".join(out) + "\n"


def test_the_base_configuration_works(tmp_path) -> None:
    path = tmp_path / "table.toml"
    path.write_text(dump_toml(BASE))
    build_service(load_config(path), console=False)


@pytest.mark.slow
@settings(max_examples=200, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(mutations())
def test_every_mutation_works_or_is_one_clear_error_naming_a_key(tmp_path, monkeypatch,
                                                                 mutation) -> None:
    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    doc, done = mutation
    path = tmp_path / "table.toml"
    path.write_text(dump_toml(doc), encoding="utf-8")
    try:
        service = build_service(load_config(path), console=False)
    except ConfigError as exc:
        text = str(exc)
        assert text.startswith(f"{path}: "), (done, text)
        assert exc.key, (done, text)  # the file is TOML: a key is always named
        assert not PYTHON.search(exc.reason), (done, text)
        assert len(text) < 2000, (done, text[:200])
    else:
        for edge in service.edges:  # a configuration that works builds edges that can close
            close = getattr(edge, "close", None)
            if callable(close):
                close()


@pytest.mark.parametrize("text", ["[table\n", "x = = 1\n", "\x00", "[table]\nid = 'a'\nid = 'b'\n"])
def test_a_file_that_is_not_toml_is_one_error_naming_the_file(tmp_path, text) -> None:
    path = tmp_path / "table.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).startswith(f"{path}: ") and not PYTHON.search(info.value.reason)
