"""What a display accepts from the feed: a payload of bounded size, JSON, and the keys it draws
with the types it expects. Anything else is *unreadable*: the display says so and keeps
following (it never draws a state it cannot read, and never parses an oversized one).

A key the display does not draw is not looked at; a key it draws may always be absent or
``null``. :func:`check_state` and :func:`check_event` return the checked object (cards in their
canonical spelling, ``QH``), or raise :class:`Unreadable` saying what is wrong.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from referee.cards import parse_card
from referee.errors import CardError, RefereeError, visible

#: The largest ``state`` or ``events`` payload a display reads (bytes). A real state is a few
#: kilobytes (eight seats, the whole deck on the pile and eight recent verdicts stay under 8 KB);
#: anything larger is refused before it is parsed.
MAX_PAYLOAD = 256 * 1024


class Unreadable(RefereeError, ValueError):
    """A message a display cannot read; ``str()`` says why, in words for the screen."""


def _why(key: str, value: Any, expected: str) -> Unreadable:
    shown = repr(value)
    if len(shown) > 30:
        shown = shown[:27] + "…"
    return Unreadable(f"{key!r} is {shown}, not {expected}")


def _count(key: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int) or v < 0:
        raise _why(key, v, "a number from 0")
    return v


def _number(key: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        raise _why(key, v, "a number")
    return v


def _text(key: str, v: Any) -> str:
    if not isinstance(v, str):
        raise _why(key, v, "text")
    # read_json makes every text from the broker visible; a state handed over in-process
    # (the referee's own display) reaches the checks without it
    return visible(v)


def _flag(key: str, v: Any) -> bool:
    if not isinstance(v, bool):
        raise _why(key, v, "true or false")
    return v


def _card(key: str, v: Any) -> str:
    try:
        return str(parse_card(v))
    except CardError:
        raise _why(key, v, "a card") from None


def _suit(key: str, v: Any) -> str:
    if v not in ("C", "D", "H", "S"):
        raise _why(key, v, "a suit (C, D, H or S)")
    return str(v)


def _rank(key: str, v: Any) -> int | str:
    if isinstance(v, bool) or not isinstance(v, (int, str)) or len(str(v)) > 2:
        raise _why(key, v, "a rank")
    return v


Field = Callable[[str, Any], Any]


def _optional(check: Field) -> Field:
    def run(key: str, v: Any) -> Any:
        return None if v is None else check(key, v)
    return run


def _list(item: Field) -> Field:
    def run(key: str, v: Any) -> list[Any]:
        if not isinstance(v, list):
            raise _why(key, v, "a list")
        return [item(f"{key}[{i}]", x) for i, x in enumerate(v)]
    return run


def _object(**fields: Field) -> Field:
    def run(key: str, v: Any) -> dict[str, Any]:
        if not isinstance(v, dict):
            raise _why(key, v, "an object")
        return _fields(v, fields, key + ".")
    return run


def _fields(obj: Mapping[str, Any], fields: Mapping[str, Field], prefix: str = ""
            ) -> dict[str, Any]:
    """``obj`` with every key of ``fields`` it has checked (``null`` always passes)."""
    out = dict(obj)
    for name, check in fields.items():
        if obj.get(name) is not None:
            out[name] = check(prefix + name, obj[name])
    return out


_seat = _count
_seats = _list(_count)

#: The verdict keys a display reads (a verdict's words come from ``text`` or from them).
EVENT_FIELDS: dict[str, Field] = {
    "verdict": _text, "session": _text, "seq": _count, "text": _text,
    "seat": _seat, "by": _seat, "to": _seat, "winner": _seat, "winners": _seats,
    "owes": _count, "cards": _count, "reason": _text, "code": _text,
    "card": _optional(_text), "expected": _optional(_text), "got": _optional(_text),
    "scores": _list(_optional(_number)), "totals": _list(_optional(_number)),
}

#: The state keys a display reads, and their types; ``recent`` is checked verdict by verdict.
STATE_FIELDS: dict[str, Field] = {
    "game": _text, "table": _text, "session": _text, "seq": _count,
    "seats": _list(_text), "counts": _list(_count),
    "turn": _seat, "must_draw": _seat, "dealer": _seat,
    "pile": _list(_optional(_card)), "bottom": _card, "top": _card,
    "out": _seats, "winners": _seats, "called": _seats,
    "totals": _list(_optional(_number)),
    "round": _count, "stock": _count, "cards_played": _count, "tricks": _count,
    "over": _flag, "paused": _flag,
    "challenge": _object(seat=_seat, by=_seat, owes=_count),
    "claim": _object(seat=_seat, reason=_text),
    "current": _object(rank=_rank, suit=_suit),
    "alerts": _object(board=_text, board_link=_text, journal=_text, journal_damaged=_text,
                      camera=_text,
                      stuck=_list(_object(seat=_seat, button=_text)),
                      chatter=_list(_object(seat=_seat, button=_text))),
}


def check_event(obj: Any) -> dict[str, Any]:
    """One verdict as a display reads it (an object whose keys have the types above)."""
    if not isinstance(obj, dict):
        raise Unreadable("a verdict must be a JSON object")
    return _fields(obj, EVENT_FIELDS)


def check_state(obj: Any) -> dict[str, Any]:
    """A table state as a display reads it; ``recent`` keeps only the verdicts that pass
    :func:`check_event` (a bad verdict there costs that verdict, not the whole state)."""
    if not isinstance(obj, dict):
        raise Unreadable("the state must be a JSON object")
    state = _fields(obj, STATE_FIELDS)
    recent = state.get("recent")
    if recent is not None:
        if not isinstance(recent, list):
            raise _why("recent", recent, "a list")
        kept = []
        for v in recent:
            try:
                kept.append(check_event(v))
            except Unreadable:
                continue
        state["recent"] = kept
    return state


def read_json(payload: bytes, limit: int = MAX_PAYLOAD) -> Any:
    """The JSON value of a payload, refusing (unparsed) one over ``limit`` bytes."""
    if len(payload) > limit:
        raise Unreadable(f"{size_text(len(payload))}, more than the {size_text(limit)} a "
                         "display reads")
    try:
        return _visible_all(json.loads(payload))
    except (ValueError, RecursionError):
        raise Unreadable("not JSON") from None


def _visible_all(value: Any) -> Any:
    """Every text in a JSON value made :func:`~referee.errors.visible`: what a display prints
    or draws from the broker never holds a control character or a direction mark (a seat
    named ``ESC [2J`` cleared a terminal display's screen)."""
    if isinstance(value, str):
        return visible(value)
    if isinstance(value, list):
        return [_visible_all(v) for v in value]
    if isinstance(value, dict):
        return {visible(k): _visible_all(v) for k, v in value.items()}
    return value


def size_text(n: int) -> str:
    """``18.0 MB``, ``256 KB``, ``120 bytes``."""
    if n >= 1024 * 1024:
        return f"{n / (1024 * 1024):.1f} MB"
    if n >= 1024:
        return f"{n // 1024} KB"
    return f"{n} bytes"
