"""Plain words for verdicts and table state, for terminals and displays.

The engines know only seat numbers: a verdict's ``reason`` names a seat as ``seat N`` (what
:func:`seat_name` gives without names). :func:`describe` is where the table's names come in,
for every verdict and notice at once (:func:`with_names`); the verdict itself, what
``referee replay --json`` prints, keeps its numbers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from referee.cards import parse_card
from referee.options import POINTS_OUT_AT

_REASONS = {
    "challenge": "won the challenge",
    "double": "slapped a double",
    "bottom_match": "slapped a match with the bottom card",
    "payment_failed": "collects: the payer ran out of cards",
    "last_player": "is the last player with cards",
}


def seat_name(seats: Sequence[str] | None, seat: object) -> str:
    """The name of ``seat`` at a table whose seats are named ``seats``, else ``seat N``."""
    if isinstance(seat, int) and not isinstance(seat, bool) and seats and 0 <= seat < len(seats):
        return str(seats[seat])
    return f"seat {seat}"


#: How a reason names a seat: ``seat N`` (see the module docstring).
_SEAT_IN_REASON = re.compile(r"\bseat (\d+)\b")


def with_names(text: str, seats: Sequence[str] | None) -> str:
    """``text`` (a verdict's reason) with every ``seat N`` of the table put as its name."""
    if not seats:
        return text

    def name(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return str(seats[n]) if n < len(seats) else match.group(0)

    return _SEAT_IN_REASON.sub(name, text)


def round_scores(verdict: Mapping[str, Any], seats: Sequence[str]) -> str:
    """The hand scores of a ``round_over`` verdict in words, e.g. ``Anna 10, Bo out, Cia 0``.

    A null score is either a seat already out of the points game (its total is at
    :data:`~referee.options.POINTS_OUT_AT` or more), which has no hand: ``out``; or a hand with
    cards the referee has not seen (observed mode): ``not seen``.
    """
    totals = verdict.get("totals") or []
    words = []
    for i, score in enumerate(verdict.get("scores") or []):
        if score is None:
            total = totals[i] if i < len(totals) else None
            out = isinstance(total, int) and total >= POINTS_OUT_AT
            score = "out" if out else "not seen"
        words.append(f"{seat_name(seats, i)} {score}")
    return ", ".join(words)


def seat_names(state: Mapping[str, Any]) -> list[str]:
    """Every seat's name from a table state (its ``seats``), ``seat N`` where it has none."""
    names = state.get("seats")
    n = len(state.get("counts") or [])
    if isinstance(names, list) and len(names) >= n:
        return [str(x) for x in names]
    return [f"seat {i}" for i in range(n)]


def _card(text: Any) -> str:
    try:
        return parse_card(text).name()
    except Exception:
        return str(text)


def describe(verdict: dict[str, Any], seats: Sequence[str]) -> str:
    """One verdict (its JSON dict) as a sentence for a person at the table."""
    kind = verdict.get("verdict")

    def n(key: str) -> str:
        return seat_name(seats, verdict.get(key))

    if kind == "challenge":
        owes = verdict.get("owes")
        return f"{n('by')} challenges: {n('seat')} owes {counted(owes, 'card')}"
    if kind == "pile_won":
        reason = _REASONS.get(verdict.get("reason", ""), verdict.get("reason", ""))
        return f"{n('seat')} {reason} and takes the pile ({counted(verdict['cards'], 'card')})"
    if kind == "false_slap":
        burned = f", burns the {_card(verdict['card'])}" if verdict.get("card") else ""
        return f"{n('seat')} slapped falsely{burned}"
    if kind == "slap_lost":
        return f"{n('seat')} was too late: {n('to')} won the slap"
    if kind == "illegal":
        reason = with_names(str(verdict.get("reason") or verdict.get("code")), seats)
        return f"{n('seat')}: not allowed — {reason}"
    if kind == "desync":
        if verdict.get("expected") is None:
            return (f"{n('seat')}: the table and the referee disagree — the "
                    f"{_card(verdict.get('got'))} is known to be elsewhere")
        # The expected card is the top of the seat's face-down stack: words everyone reads
        # must not show it (the feed's ``expected`` field still carries it for the operator).
        return (f"{n('seat')}: the table and the referee disagree — the "
                f"{_card(verdict.get('got'))} is not the card the referee expected")
    if kind == "out":
        return f"{n('seat')} is out of the game"
    if kind == "round_over":
        text = round_scores(verdict, seats)
        head = ("Round blocked" if verdict.get("winner") is None
                else f"{n('winner')} wins the round")
        totals = verdict.get("totals")
        if totals:
            text += "; totals " + ", ".join(
                f"{seat_name(seats, i)} {s}" for i, s in enumerate(totals))
        return f"{head} — hand scores {text}"
    if kind == "game_over":
        winners = [seat_name(seats, w) for w in verdict.get("winners") or []]
        if not winners:
            return "Game over"
        return f"Game over: {' and '.join(winners)} win{'s' * (len(winners) == 1)}"
    notice = _NOTICES.get(str(kind))
    if notice is not None:
        return notice.format(seat=n("seat"), button=verdict.get("button", ""),
                             reason=with_names(str(verdict.get("reason", "")), seats),
                             tag=verdict.get("tag", ""), card=verdict.get("card", ""),
                             act=verdict.get("act", ""), line=verdict.get("line", ""))
    extra = {k: v for k, v in verdict.items() if k not in ("t", "verdict")}
    return f"{kind}: {extra}"


#: Service notices (not game verdicts) in words.
_NOTICES = {
    "paused": "The referee paused the game",
    "resumed": "The game goes on",
    "ignored": "{seat}: {act} ignored — {reason}",
    "ended_by_operator": "The referee ended the game",
    "board_offline": "The table board is offline: the game waits for it",
    "board_online": "The table board is back",
    "board_error": "The table board reports a problem",
    "button_stuck": "{seat}'s {button} button is stuck: ignored until released",
    "button_released": "{seat}'s {button} button works again",
    "button_chatter": "{seat}'s {button} button chatters ({reason}): ignored until it is still",
    "button_settled": "{seat}'s {button} button is still again and counts",
    "board_link_unusable": "The line to the table board is unusable ({reason}): the game "
                           "waits for it",
    "board_link_usable": "The line to the table board works again",
    "journal_error": "The journal cannot be written ({reason}): the game is paused until it can",
    "journal_ok": "The journal can be written again: the game goes on",
    "journal_damaged": "The journal was damaged at line {line}: the game goes on from the line "
                       "before it",
    "unknown_tag": "A card the deck file does not know was read (tag {tag})",
    "unknown_button": "A board button that belongs to no seat was pressed",
    "rejected": "{seat}: input rejected — {reason}",
}


def describe_input(inp: Mapping[str, Any], seats: Sequence[str], *,
                   hidden: bool = True) -> str:
    """What an input (a journal line, as ``Input.to_json`` gives it) did, in words:
    ``Anna plays the 8 of spades as the ace of hearts``. With ``hidden`` a card drawn from the
    stock is not named (the other players do not see it)."""
    who = seat_name(seats, inp.get("seat"))
    act = inp.get("act")
    cards = ([inp["card"]] if inp.get("card") else []) + list(inp.get("cards") or ())
    named = " and ".join(f"the {_card(c)}" for c in cards)
    if act == "lay":
        return f"{who} lays {named or 'a card'}"
    if act == "play":
        declared = f" as the {_card(inp['as'])}" if inp.get("as") else ""
        return f"{who} plays {named}{declared}"
    if act == "draw":
        return f"{who} draws {'a card' if hidden or not named else named}"
    words = {"slap": "slaps", "pass": "passes", "call": "calls lappen",
             "reshuffle": "turns the discards into a new stock", "deal": "deals"}
    return f"{who} {words.get(str(act), str(act))}"


def counted(n: Any, one: str, many: str | None = None) -> str:
    """``n`` things in words: ``1 card``, ``2 cards`` (``many`` for an irregular plural)."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def format_time(t_ns: int) -> str:
    """Table-clock nanoseconds as ``m:ss.mmm``."""
    ms = t_ns // 1_000_000
    return f"{ms // 60_000}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"
