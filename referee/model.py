"""Plain value types shared by every game: inputs, verdicts, the journal header.

An :class:`Input` is exactly one journal line of ``docs/journal.md``; a :class:`Verdict` is exactly
one line of ``referee replay --json``. Both convert to and from those JSON objects losslessly.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass, field, fields
from typing import Any, Literal, get_args

from referee.cards import Card, cards_text, parse_card
from referee.errors import UNSAFE, CardError, InputError, shown

#: Every act of the journal contract (docs/journal.md); which game knows which is in
#: :data:`referee.games.games` (``Game.acts``).
Act = Literal["lay", "slap", "play", "draw", "pass", "call", "deal", "reshuffle"]
ACTS: tuple[Act, ...] = get_args(Act)

#: The kinds of verdict an engine gives (``referee replay --json``, docs/journal.md).
VerdictKind = Literal[
    "challenge", "pile_won", "false_slap", "slap_lost", "out", "game_over", "round_over",
    "desync", "illegal",
]
VERDICT_KINDS: tuple[VerdictKind, ...] = get_args(VerdictKind)

#: The kinds of notice the table program adds to the verdict stream: outside events that are
#: not game inputs and are never journaled (a stuck button, the board going offline …).
NoticeKind = Literal[
    "button_stuck", "button_released", "button_chatter", "button_settled",
    "board_online", "board_offline", "board_error", "board_link_unusable", "board_link_usable",
    "unknown_tag", "unknown_button", "ignored", "rejected", "paused", "resumed",
    "ended_by_operator", "journal_error", "journal_ok", "journal_damaged",
    "camera_offline", "camera_online",
]
NOTICE_KINDS: tuple[NoticeKind, ...] = get_args(NoticeKind)

#: The stable identifiers of a refused input (the ``code`` of an ``illegal`` verdict).
#: ``unknown_act`` is an act the game does not know (older journals' verdicts said ``bad_act``
#: in Beggar My Neighbour; the inputs themselves replay unchanged).
RefusalCode = Literal[
    "game_over", "no_such_seat", "unknown_act", "out_of_game", "no_cards", "not_your_turn",
    "card_required", "duplicate_card",
    # Vändåtta
    "not_in_hand", "not_same_rank", "special_on_special", "must_follow_ace", "no_match",
    "bad_declaration", "ace_without_follow_up", "no_lappen", "ace_draws_pending", "must_draw",
    "draw_limit", "stock_empty", "special_finish", "bad_call", "no_reshuffle",
    "round_not_over", "bad_deal", "must_pass",
]
REFUSAL_CODES: tuple[RefusalCode, ...] = get_args(RefusalCode)

#: Judging priority at equal ``t`` (docs/journal.md): a slap is judged after the lay or play of the
#: same instant; every other pair keeps file order. Putting slaps last does both (only Banka
#: bäver has slaps, and its only other act is ``lay``).
_ACT_PRIORITY = {"slap": 1}


@dataclass(frozen=True, slots=True)
class Input:
    """One timestamped input from a seat: ``t`` in nanoseconds on the table clock."""

    t: int
    seat: int
    act: Act
    card: Card | None = None
    cards: tuple[Card, ...] | None = None
    as_: Card | None = None
    call: str | None = None
    hands: tuple[tuple[Card, ...], ...] | None = None
    stock: tuple[Card, ...] | None = None
    upcard: Card | None = None

    def __init__(
        self,
        t: int,
        seat: int,
        act: Act,
        card: Card | None = None,
        cards: tuple[Card, ...] | None = None,
        as_: Card | None = None,
        call: str | None = None,
        hands: tuple[tuple[Card, ...], ...] | None = None,
        stock: tuple[Card, ...] | None = None,
        upcard: Card | None = None,
    ) -> None:
        # The __init__ the dataclass would write, setting each slot through its descriptor
        # rather than object.__setattr__ (the simulator makes an input per move).
        _set_t(self, t)
        _set_seat(self, seat)
        _set_act(self, act)
        _set_card(self, card)
        _set_cards(self, cards)
        _set_as(self, as_)
        _set_call(self, call)
        _set_hands(self, hands)
        _set_stock(self, stock)
        _set_upcard(self, upcard)

    @property
    def priority(self) -> int:
        """1 for a slap (judged after the other acts of its instant), 0 otherwise."""
        return _ACT_PRIORITY.get(self.act, 0)

    def to_json(self) -> dict[str, Any]:
        """The journal line as a JSON-ready dict (only the fields that are set)."""
        out: dict[str, Any] = {"t": self.t, "seat": self.seat, "act": self.act}
        if self.card is not None:
            out["card"] = str(self.card)
        if self.cards is not None:
            out["cards"] = cards_text(self.cards)
        if self.as_ is not None:
            out["as"] = str(self.as_)
        if self.call is not None:
            out["call"] = self.call
        if self.hands is not None:
            out["hands"] = [cards_text(h) for h in self.hands]
        if self.stock is not None:
            out["stock"] = cards_text(self.stock)
        if self.upcard is not None:
            out["upcard"] = str(self.upcard)
        return out

    @classmethod
    def from_json(cls, obj: Any, n_seats: int | None = None) -> Input:
        """Read one journal input line; raises :class:`InputError` naming what is wrong."""
        if not isinstance(obj, dict):
            raise InputError("an input must be a JSON object")
        for key in ("t", "seat", "act"):
            if key not in obj:
                raise InputError(f"missing field {key!r}")
        t, seat, act = obj["t"], obj["seat"], obj["act"]
        if not isinstance(t, int) or isinstance(t, bool) or t < 0:
            raise InputError(f"'t' must be a non-negative integer of nanoseconds, got {shown(t)}")
        if not isinstance(seat, int) or isinstance(seat, bool):
            raise InputError(f"'seat' must be an integer, got {shown(seat)}")
        if n_seats is not None and not 0 <= seat < n_seats:
            raise InputError(f"seat {seat} is out of range (seats 0..{n_seats - 1})")
        if act not in ACTS:
            raise InputError(f"unknown act {shown(act)} (known: {', '.join(ACTS)})")
        kwargs: dict[str, Any] = {}
        if obj.get("card") is not None:
            kwargs["card"] = _card(obj["card"], "card")
        if act == "play":
            if "cards" not in obj:
                raise InputError("missing field 'cards' (a play lists the cards laid)")
        if obj.get("cards") is not None:
            kwargs["cards"] = _card_list(obj["cards"], "cards")
            if act == "play" and not kwargs["cards"]:
                raise InputError("'cards' is empty: a play lays at least one card")
        if obj.get("as") is not None:
            kwargs["as_"] = _card(obj["as"], "as")
        if act == "call":
            if "call" not in obj:
                raise InputError("missing field 'call' (e.g. \"lappen\")")
            if not isinstance(obj["call"], str):
                raise InputError(f"'call' must be text, got {shown(obj['call'])}")
        if obj.get("call") is not None:
            kwargs["call"] = str(obj["call"])
        if obj.get("hands") is not None:
            hands = obj["hands"]
            if not isinstance(hands, list):
                raise InputError("'hands' must be a list of card lists")
            kwargs["hands"] = tuple(_card_list(h, "hands") for h in hands)
        if obj.get("stock") is not None:
            kwargs["stock"] = _card_list(obj["stock"], "stock")
        if obj.get("upcard") is not None:
            kwargs["upcard"] = _card(obj["upcard"], "upcard")
        return cls(t=t, seat=seat, act=act, **kwargs)


_INPUT_FIELDS = ("t", "seat", "act", "card", "cards", "as_", "call", "hands", "stock", "upcard")
assert tuple(f.name for f in fields(Input)) == _INPUT_FIELDS == Input.__init__.__code__.co_varnames[
    1:len(_INPUT_FIELDS) + 1], "Input.__init__ must set every field, in order"
(_set_t, _set_seat, _set_act, _set_card, _set_cards, _set_as, _set_call, _set_hands, _set_stock,
 _set_upcard) = (getattr(Input, name).__set__ for name in _INPUT_FIELDS)


def _card(value: Any, key: str) -> Card:
    try:
        return parse_card(value)
    except CardError as exc:
        raise InputError(f"{key!r}: {exc}") from None


def _card_list(value: Any, key: str) -> tuple[Card, ...]:
    if not isinstance(value, list):
        raise InputError(f"{key!r} must be a list of cards, got {shown(value)}")
    return tuple(_card(v, key) for v in value)


def judging_key(inp: Input, order: int) -> tuple[int, int, int]:
    """Sort key of the judging order: ``t``, then slaps after the other acts of the same
    instant, then arrival (file) order."""
    return (inp.t, _ACT_PRIORITY.get(inp.act, 0), order)


def judging_entries(inputs: Sequence[Input], first: int) -> list[tuple[int, int, int, Input]]:
    """Each of ``inputs`` after its :func:`judging_key` (arrival order counted from
    ``first``), ``(t, priority, order, input)``: a replay's whole journal in one pass."""
    priority = _ACT_PRIORITY.get
    return [(inp.t, priority(inp.act, 0), order, inp) for order, inp in enumerate(inputs, first)]




@dataclass(frozen=True, slots=True)
class Verdict:
    """One ruling: ``verdict`` is its kind (``challenge``, ``pile_won`` …), ``data`` its fields."""

    t: int
    verdict: str  # a VerdictKind from an engine, a NoticeKind from the table program
    data: dict[str, Any] = field(default_factory=dict)

    def __getitem__(self, key: str) -> Any:
        return self.data[key]

    def get(self, key: str, default: Any = None) -> Any:
        """A field of the verdict, or ``default``."""
        return self.data.get(key, default)

    def to_json(self) -> dict[str, Any]:
        """The ``referee replay --json`` line as a dict."""
        return {"t": self.t, "verdict": self.verdict, **self.data}

    @classmethod
    def from_json(cls, obj: dict[str, Any]) -> Verdict:
        """Inverse of :meth:`to_json`."""
        data = {k: v for k, v in obj.items() if k not in ("t", "verdict")}
        return cls(t=obj["t"], verdict=obj["verdict"], data=data)


#: The timing fields of slap verdicts (docs/timing.md), added to docs/journal.md's verdict lines
#: after it was written; a reader that does not know them ignores them. ``margin_ns``: this
#: slap's edge minus the winning slap's edge (``slap_lost``; on a ``pile_won`` decided by the tie
#: rule, the nearest other slap of its instant); ``reaction_ns``: this slap's edge minus the card
#: that made the pile slappable (or, for a false slap, the last lay); ``tie``: the pile went by
#: the clockwise tie rule.
TIMING_FIELDS: tuple[str, ...] = ("margin_ns", "reaction_ns", "tie")


def without_timing(obj: dict[str, Any]) -> dict[str, Any]:
    """A verdict line (``to_json``) without :data:`TIMING_FIELDS`: the verdict as it read before
    they were added."""
    return {k: v for k, v in obj.items() if k not in TIMING_FIELDS}


def illegal(t: int, seat: int, code: RefusalCode, reason: str, why: str | None = None,
            args: dict[str, Any] | None = None) -> Verdict:
    """A refused input: ``code`` is the stable identifier, ``reason`` words for a person (in
    English); ``why`` names the sentence of ``reason`` and ``args`` holds its arguments as
    codes and numbers, so that a display says it in any language
    (:func:`referee.describe.refuse` makes all three)."""
    data: dict[str, Any] = {"seat": seat, "code": code, "reason": reason}
    if why is not None:
        data["why"] = why
        data["args"] = {} if args is None else args
    return Verdict(t, "illegal", data)


#: What no name may hold (:data:`referee.errors.UNSAFE`).
_UNSAFE = UNSAFE
#: Characters that show as nothing: two names that differ only by them are one name.
_UNSEEN = re.compile("[\u00ad\u180e\u200b-\u200d\u2060-\u2064\ufeff]")


def name_problem(name: str) -> str | None:
    """Why ``name`` cannot be a seat's name, or None: it may not hold control characters (a
    terminal would act on ``ESC [2J`` and a newline would fake a line of its own) nor the
    marks that turn text's direction (U+202E shows ``anna`` as ``anna`` backwards)."""
    if _UNSAFE.search(name):
        return "must not contain control characters or direction marks"
    return None


def seats_problem(seats: Sequence[str]) -> tuple[int, str] | None:
    """The first seat whose name cannot be its name, and why (the words after "seat K's
    name"), or None: a name is not blank, passes :func:`name_problem`, and is not another
    seat's, case and spaces around it aside (two players called "Anna" cannot be told
    apart, nor two spelt with other code points or invisible ones that look the same). The
    journal's header and the table's configuration ask the same."""
    seen: dict[str, int] = {}
    for k, name in enumerate(seats):
        # as a person reads it: "Björn" typed two ways, or with a zero-width space, is one name
        key = unicodedata.normalize("NFKC", _UNSEEN.sub("", name)).strip().casefold()
        if not key:
            return k, "must not be empty: every seat needs a name"
        if (problem := name_problem(name)) is not None:
            return k, f"{shown(name)} {problem}"
        if key in seen:
            return k, (f"{shown(name)} is already the name of seat {seen[key]}: each seat "
                       "needs a name of its own")
        seen[key] = k
    return None
