"""Plain words for verdicts and table state, for terminals, displays and speech, in any
language a translator gives.

Every function that makes words takes a :class:`Translator` (``tr``): an object with
``gettext`` and ``ngettext``, as the standard library's :class:`gettext.GNUTranslations` has.
The default, :data:`ENGLISH`, gives the words as written here; the table program loads the
catalogs of other languages (``cardtable/i18n.py``) and passes their translator in. This module
never reads a file: the messages are only *marked* here (``tr.gettext("…")``, and :func:`N_`
/ :func:`Nn_` for the tables below, whose words are translated where they are used), so that
``pybabel extract`` finds them.

The engines know only seat numbers. A refused input (an ``illegal`` verdict) carries ``why``,
the id of its sentence in :data:`REFUSALS`, and ``args``, the sentence's arguments as codes and
numbers (seats, cards, suits, ranks, counts): :func:`refuse` makes such a verdict, with its
``reason`` in English with ``seat N`` for each seat (what ``referee replay --json`` has always
printed), and :func:`describe` words the same sentence in any language with the table's names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from referee.cards import Card, parse_card
from referee.model import RefusalCode, Verdict, illegal
from referee.options import POINTS_OUT_AT


class Translator(Protocol):
    """What makes words in a language: ``gettext`` (a message) and ``ngettext`` (a message
    with a count, its form chosen by the language's plural rule)."""

    def gettext(self, message: str, /) -> str: ...

    def ngettext(self, singular: str, plural: str, n: int, /) -> str: ...


class English:
    """The words as the source writes them (the messages are English)."""

    def gettext(self, message: str, /) -> str:
        return message

    def ngettext(self, singular: str, plural: str, n: int, /) -> str:
        return singular if n == 1 else plural


#: The default translator: English.
ENGLISH: Translator = English()


def N_(message: str) -> str:
    """Mark ``message`` for translation where it is written (a table's entry); it is
    translated where it is used, with ``tr.gettext(message)``."""
    return message


def Nn_(singular: str, plural: str) -> tuple[str, str]:
    """Mark a message with a count (``tr.ngettext(*pair, n)`` where it is used)."""
    return singular, plural


# --------------------------------------------------------------------------- seats and cards


def seat_name(seats: Sequence[str] | None, seat: object, tr: Translator = ENGLISH) -> str:
    """The name of ``seat`` at a table whose seats are named ``seats``, else ``seat N``."""
    if isinstance(seat, int) and not isinstance(seat, bool) and seats and 0 <= seat < len(seats):
        return str(seats[seat])
    return tr.gettext("seat {number}").format(number=seat)


#: How a reason of an older referee names a seat: ``seat N`` (see the module docstring).
_SEAT_IN_REASON = re.compile(r"\bseat (\d+)\b")


def with_names(text: str, seats: Sequence[str] | None) -> str:
    """``text`` (an English reason) with every ``seat N`` of the table put as its name."""
    if not seats:
        return text

    def name(match: re.Match[str]) -> str:
        n = int(match.group(1))
        return str(seats[n]) if n < len(seats) else match.group(0)

    return _SEAT_IN_REASON.sub(name, text)


def seat_names(state: Mapping[str, Any], tr: Translator = ENGLISH) -> list[str]:
    """Every seat's name from a table state (its ``seats``), ``seat N`` where it has none."""
    names = state.get("seats")
    n = len(state.get("counts") or [])
    if isinstance(names, list) and len(names) >= n:
        return [str(x) for x in names]
    return [seat_name((), i, tr) for i in range(n)]


#: The suits in words (as in "a card of hearts").
SUIT_WORDS = {"C": N_("clubs"), "D": N_("diamonds"), "H": N_("hearts"), "S": N_("spades")}
#: The court cards' ranks in words; the others are their numbers.
RANK_WORDS = {11: N_("jack"), 12: N_("queen"), 13: N_("king"), 14: N_("ace")}
_RANK_OF_TEXT = {"J": 11, "Q": 12, "K": 13, "A": 14}


def suit_word(suit: object, tr: Translator = ENGLISH) -> str:
    """A suit (``H``) in words: ``hearts``."""
    word = SUIT_WORDS.get(str(suit))
    return tr.gettext(word) if word else str(suit)


def rank_word(rank: object, tr: Translator = ENGLISH) -> str:
    """A rank (``12``, or its text ``Q``) in words: ``queen``; a number card's rank is its
    number."""
    if isinstance(rank, str):
        rank = _RANK_OF_TEXT.get(rank, rank)
    word = RANK_WORDS.get(rank) if isinstance(rank, int) else None
    return tr.gettext(word) if word else str(rank)


def card_name(card: Card | str | None, tr: Translator = ENGLISH) -> str:
    """A card in words: ``queen of hearts``, ``5 of spades`` (any text :func:`parse_card`
    reads; other text as it is)."""
    try:
        c = card if isinstance(card, Card) else parse_card(card)  # type: ignore[arg-type]
    except Exception:
        return str(card)
    return tr.gettext("{rank} of {suit}").format(rank=rank_word(c.rank, tr),
                                                 suit=suit_word(c.suit, tr))


def join_names(names: Sequence[str], tr: Translator = ENGLISH) -> str:
    """``Anna and Bo`` (``Anna and Bo and Cia``)."""
    if not names:
        return ""
    out = str(names[0])
    for name in names[1:]:
        out = tr.gettext("{first} and {second}").format(first=out, second=name)
    return out


class _Kept(dict[str, Any]):
    def __missing__(self, key: str) -> str:
        return "{" + key + "}"


def fill(text: str, **values: Any) -> str:
    """``text`` with the placeholders of ``values`` filled and the others kept as they are
    (``{cards}`` for a display to draw cards in)."""
    return text.format_map(_Kept(values))


class _CardArg:
    """A card argument of a sentence: ``{card}`` is its name, ``{card:code}`` its code."""

    __slots__ = ("code", "tr")

    def __init__(self, code: str, tr: Translator) -> None:
        self.code, self.tr = code, tr

    def __format__(self, spec: str) -> str:
        return self.code if spec == "code" else card_name(self.code, self.tr)


# --------------------------------------------------------------------------- refusals


#: Every sentence a refused input is told in (an ``illegal`` verdict's ``why``), English as
#: ``reason`` has it. Placeholders: ``{seat}`` the refused seat (``{seat_number}`` its number),
#: and the verdict's ``args``: seats (:data:`SEAT_ARGS`), cards (``{card}`` the name,
#: ``{card:code}`` the code), suits, ranks, texts given by the input (``{act!r}``) and counts.
#: A pair is a sentence with a count (its ``args`` key is in :data:`COUNTED`).
REFUSALS: dict[str, str | tuple[str, str]] = {
    # every game
    "game_over": N_("the game is over"),
    "not_at_table": N_("seat {seat_number} is not at this table (0..{last})"),
    "no_seat": N_("there is no seat {seat_number} at this table"),
    "no_seat_of": N_("there is no seat {seat_number} (seats 0..{last})"),
    "seat_out": N_("{seat} is out of the game"),
    "no_cards": N_("{seat} holds no cards"),
    "turn_of": N_("it is {turn}'s turn"),
    # the pile games
    "claim_ended_game": N_("the game is over: the claim of this pile ended it"),
    "act_not_banka": N_("Banka bäver knows only 'lay' and 'slap', not {act!r}"),
    "act_not_beggar": N_("Beggar My Neighbour has no {act!r}: only lay"),
    "no_cards_to_slap": N_("{seat} holds no cards and may not slap"),
    "collects_and_lays": N_("{turn} collects the pile and lays next"),
    "owes_a_card": N_("{turn} owes a card"),
    "card_unseen": N_("the referee has not seen this card: say which card it is"),
    "face_unknown": N_("this card's face is not known yet: say which card was laid"),
    "seen_before": N_("{card:code} was already seen at this table: check the card"),
    # Vändåtta
    "act_not_vandatta": N_("'{act}' is not an act of Vändåtta (play, draw, pass, call, deal, "
                           "reshuffle)"),
    "seat_out_points": N_("{seat} is out of the game (100 points or more)"),
    "no_cards_to_lay": N_("{seat} holds no cards to lay"),
    "round_over_deal_first": N_("the round is over: the next round must be dealt first"),
    "ace_draws_first": N_("the other players must first draw for the ace ({drawer} draws "
                          "next)"),
    "ace_player_waits": N_("{seat} laid an ace and may not draw or pass: once the others have "
                           "drawn for it ({drawer} draws next), {seat} follows it with a card "
                           "of {suit}"),
    "draw_for_ace": N_("{seat} must draw one card for the ace"),
    "draw_for_ace_not_lay": N_("{seat} must draw one card for the ace and may not lay: {turn} "
                               "follows the ace once the draws are done"),
    "drawer_now": N_("{drawer} draws for the ace now"),
    "follows_ace": N_("{turn} must follow the ace"),
    "follow_ace_not_draw": N_("{seat} laid an ace and must follow it with a card of {suit}, "
                              "not draw or pass"),
    "penalty_draws": N_("{seat} must first draw the lappen penalty ({left} more)"),
    "penalty_pass": N_("{seat} may only pass: the lappen penalty ends the turn, and nothing is "
                       "left to draw for it"),
    "name_cards": N_("a play must name the cards laid"),
    "not_same_rank": N_("several cards laid at once must all have the same rank"),
    "special_on_special": N_("no special card on a special card: the {card} may not be laid on "
                             "the {top}"),
    "follow_ace_suit": N_("the ace must be followed by a card of {suit}"),
    "eight_needs_card": N_("an eight must be laid with the card it counts as (suit and rank, "
                           "e.g. 'as': 'QH')"),
    "no_match": N_("the {card} matches neither the suit nor the rank to follow ({suit} or "
                   "{rank})"),
    "ace_needs_follow_up": N_("an ace may only be laid by a player who keeps another card of "
                              "{suit} to follow it"),
    "ace_needs_follow_up_no_eight": N_("an ace may only be laid by a player who keeps another "
                                       "card of {suit} other than an eight to follow it"),
    "no_lappen_penalty": N_("{seat} did not call lappen and may not go out: the cards go back "
                            "to the hand; {seat} draws {draws} cards as the penalty, then the "
                            "turn passes"),
    "no_lappen_lapses": N_("{seat} did not call lappen and may not go out: the cards go back "
                           "to the hand; the {draws} penalty draws lapse (nothing can be "
                           "drawn), so {seat} may only pass"),
    "not_in_hand": N_("the {card} is not in {seat}'s hand"),
    "draw_limit": N_("{seat} has drawn {max} cards this turn; lay a card or pass"),
    "draw_limit_finish": N_("{seat} has drawn {max} cards this turn; lay a card or pass: the "
                            "turn goes on"),
    "reshuffle_first": N_("the stock is empty: reshuffle the discard pile (all but its top "
                          "card) into a new stock first"),
    "nothing_to_draw": N_("the stock is empty and nothing can be drawn; the player may pass"),
    "special_finish": N_("{seat} may not go out on the {card} and must draw up to {max} cards "
                         "before passing ({drawn} of {max} drawn)"),
    "special_finish_fits": N_("{seat} drew the {card}, which may be laid on the special card: "
                              "lay it"),
    "special_finish_unseen": N_("{seat} may not go out on a special card and must draw up to "
                                "{max} cards before passing ({drawn} of {max} drawn)"),
    "draw_before_pass": N_("{seat} must draw ({drawn} of {max} drawn) before passing"),
    "unknown_call": N_("unknown call {call!r}; the only call is 'lappen'"),
    "no_round": N_("no round is being played"),
    "reshuffle_off": N_("this table does not reshuffle the discard pile (reshuffle_discards "
                        "is off)"),
    "stock_not_empty": Nn_("the stock still holds {n} card", "the stock still holds {n} cards"),
    "discard_only_top": N_("the discard pile holds only its top card: nothing to reshuffle"),
    "stock_count": Nn_("the new stock must be the {below} card under the top of the discard "
                       "pile, not {given}",
                       "the new stock must be the {below} cards under the top of the discard "
                       "pile, not {given}"),
    "stock_lacks": N_("the new stock lacks the {card} from the discard pile"),
    "not_in_discards": N_("the {card} is not in the discard pile"),
    "round_being_played": N_("a round is being played: the next deal comes after it"),
    "deal_hands": N_("the deal must give one hand per seat ({n}), not {got}"),
    "deal_out_seat": N_("{other} is out of the game and gets no cards"),
    "deal_in_seat": N_("{other} is in the game and must be dealt cards"),
    "deal_too_many": N_("the deal holds {n} cards; the deck has 52"),
    "deal_twice": N_("the deal holds {cards} more than once"),
}

#: ``args`` that name a seat (words: its name); ``{seat}`` is always the refused seat.
SEAT_ARGS = frozenset({"turn", "drawer", "other"})
#: ``args`` that name a card (``QH``), and a list of cards (words: their codes).
CARD_ARGS = frozenset({"card", "top"})
#: The count of each sentence with a count (a pair in :data:`REFUSALS`).
COUNTED = {"stock_not_empty": "n", "stock_count": "below"}

#: What each refusal code says when a verdict has no sentence this referee knows (a feed of
#: another version): the code in words.
CODE_WORDS: dict[str, str] = {
    "game_over": N_("the game is over"),
    "no_such_seat": N_("no such seat at this table"),
    "unknown_act": N_("this game has no such act"),
    "out_of_game": N_("out of the game"),
    "no_cards": N_("no cards to play"),
    "not_your_turn": N_("not this seat's turn"),
    "card_required": N_("say which card it was"),
    "duplicate_card": N_("that card was already seen"),
    "not_in_hand": N_("the card is not in the hand"),
    "not_same_rank": N_("the cards are not all of one rank"),
    "special_on_special": N_("no special card on a special card"),
    "must_follow_ace": N_("the ace must be followed"),
    "no_match": N_("the card matches neither suit nor rank"),
    "bad_declaration": N_("an eight must name the card it counts as"),
    "ace_without_follow_up": N_("an ace needs a card of its suit to follow it"),
    "no_lappen": N_("lappen was not called"),
    "ace_draws_pending": N_("the others draw for the ace first"),
    "must_draw": N_("a card must be drawn first"),
    "draw_limit": N_("no more draws this turn"),
    "stock_empty": N_("the stock is empty"),
    "special_finish": N_("no going out on a special card"),
    "bad_call": N_("the only call is lappen"),
    "no_reshuffle": N_("no reshuffle now"),
    "round_not_over": N_("the round is not over"),
    "bad_deal": N_("the deal does not fit"),
    "must_pass": N_("only a pass now"),
}


def _arg(key: str, value: Any, seats: Sequence[str], tr: Translator) -> Any:
    if key in SEAT_ARGS:
        return seat_name(seats, value, tr)
    if key in CARD_ARGS:
        return _CardArg(str(value), tr)
    if key == "suit":
        return suit_word(value, tr)
    if key == "rank":
        return rank_word(value, tr)
    if key == "cards" and isinstance(value, list):
        return ", ".join(str(c) for c in value)
    return value


def refusal_words(why: str, args: Mapping[str, Any], seat: object,
                  seats: Sequence[str] = (), tr: Translator = ENGLISH) -> str:
    """The sentence ``why`` of :data:`REFUSALS` said with ``args``, for the refused ``seat``
    (names from ``seats``; ``seat N`` without them). A ``KeyError`` for a sentence this
    module does not know or an argument it lacks."""
    sentence = REFUSALS[why]
    values = {k: _arg(k, v, seats, tr) for k, v in args.items()}
    values["seat"] = seat_name(seats, seat, tr)
    values["seat_number"] = seat
    if isinstance(sentence, tuple):
        text = tr.ngettext(sentence[0], sentence[1], int(args[COUNTED[why]]))
    else:
        text = tr.gettext(sentence)
    return text.format(**values)


def refuse(t: int, seat: int, code: RefusalCode, why: str, **args: Any) -> Verdict:
    """An ``illegal`` verdict: ``code`` (the stable refusal code), ``why`` (its sentence in
    :data:`REFUSALS`) and ``args`` (JSON: a card as its text ``QH``); ``reason`` is the
    sentence in English with ``seat N`` for each seat."""
    args = {k: (str(v) if isinstance(v, Card) else
                [str(c) for c in v] if isinstance(v, (list, tuple)) else v)
            for k, v in args.items()}
    return illegal(t, seat, code, refusal_words(why, args, seat), why, args)


def _refusal(verdict: Mapping[str, Any], seats: Sequence[str], tr: Translator) -> str:
    """Why an ``illegal`` verdict refused its input, in words: its sentence (``why`` and
    ``args``); from a referee that sends none, its English ``reason`` (seats named), else its
    code in words."""
    why, args = verdict.get("why"), verdict.get("args")
    if isinstance(why, str) and why in REFUSALS and isinstance(args, Mapping):
        try:
            return refusal_words(why, args, verdict.get("seat"), seats, tr)
        except (KeyError, ValueError, TypeError, IndexError):
            pass
    code = str(verdict.get("code"))
    words = CODE_WORDS.get(code)
    said = tr.gettext(words) if words else None
    if verdict.get("reason") and (said is None or said == words):  # English: the reason
        return with_names(str(verdict["reason"]), seats)
    return said or with_names(str(verdict.get("reason") or code), seats)


# --------------------------------------------------------------------------- verdicts


#: Each way a pile is won (a ``pile_won`` verdict's ``reason``), as a whole sentence.
PILE_WON: dict[str, tuple[str, str]] = {
    "challenge": Nn_("{seat} won the challenge and takes the pile ({n} card)",
                     "{seat} won the challenge and takes the pile ({n} cards)"),
    "double": Nn_("{seat} slapped a double and takes the pile ({n} card)",
                  "{seat} slapped a double and takes the pile ({n} cards)"),
    "bottom_match": Nn_("{seat} slapped a match with the bottom card and takes the pile "
                        "({n} card)",
                        "{seat} slapped a match with the bottom card and takes the pile "
                        "({n} cards)"),
    "payment_failed": Nn_("{seat} collects: the payer ran out of cards and takes the pile "
                          "({n} card)",
                          "{seat} collects: the payer ran out of cards and takes the pile "
                          "({n} cards)"),
    "last_player": Nn_("{seat} is the last player with cards and takes the pile ({n} card)",
                       "{seat} is the last player with cards and takes the pile ({n} cards)"),
}


def round_scores(verdict: Mapping[str, Any], seats: Sequence[str],
                 tr: Translator = ENGLISH) -> str:
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
            score = tr.gettext("out") if out else tr.gettext("not seen")
        words.append(tr.gettext("{name} {score}").format(name=seat_name(seats, i, tr),
                                                         score=score))
    return ", ".join(words)


def _counted(tr: Translator, pair: tuple[str, str], n: Any, **values: Any) -> str:
    count = n if isinstance(n, int) and not isinstance(n, bool) else 0
    return tr.ngettext(pair[0], pair[1], count).format(n=n, **values)


def describe(verdict: Mapping[str, Any], seats: Sequence[str], tr: Translator = ENGLISH) -> str:
    """One verdict (its JSON dict) as a sentence for a person at the table, in ``tr``'s
    language."""
    kind = verdict.get("verdict")

    def n(key: str) -> str:
        return seat_name(seats, verdict.get(key), tr)

    if kind == "challenge":
        return _counted(tr, Nn_("{by} challenges: {seat} owes {n} card",
                                "{by} challenges: {seat} owes {n} cards"),
                        verdict.get("owes"), by=n("by"), seat=n("seat"))
    if kind == "pile_won":
        reason = str(verdict.get("reason", ""))
        pair = PILE_WON.get(reason) or Nn_("{seat} takes the pile ({n} card)",
                                           "{seat} takes the pile ({n} cards)")
        return _counted(tr, pair, verdict.get("cards"), seat=n("seat"))
    if kind == "false_slap":
        if verdict.get("card"):
            return tr.gettext("{seat} slapped falsely, burns the {card}").format(
                seat=n("seat"), card=card_name(verdict["card"], tr))
        return tr.gettext("{seat} slapped falsely").format(seat=n("seat"))
    if kind == "slap_lost":
        return tr.gettext("{seat} was too late: {to} won the slap").format(seat=n("seat"),
                                                                          to=n("to"))
    if kind == "illegal":
        return tr.gettext("{seat}: not allowed — {reason}").format(
            seat=n("seat"), reason=_refusal(verdict, seats, tr))
    if kind == "desync":
        if verdict.get("expected") is None:
            return tr.gettext("{seat}: the table and the referee disagree — the {card} is "
                              "known to be elsewhere").format(
                seat=n("seat"), card=card_name(verdict.get("got"), tr))
        # The expected card is the top of the seat's face-down stack: words everyone reads
        # must not show it (the feed's ``expected`` field still carries it for the operator).
        return tr.gettext("{seat}: the table and the referee disagree — the {card} is not the "
                          "card the referee expected").format(
            seat=n("seat"), card=card_name(verdict.get("got"), tr))
    if kind == "out":
        return tr.gettext("{seat} is out of the game").format(seat=n("seat"))
    if kind == "round_over":
        return round_words(verdict, seats, tr)
    if kind == "game_over":
        winners = [seat_name(seats, w, tr) for w in verdict.get("winners") or []]
        if verdict.get("reason") == "time_limit":  # why it ended is said (the most cards win)
            if not winners:
                return tr.gettext("Time is up: game over")
            return tr.ngettext("Time is up: {names} holds the most cards and wins",
                               "Time is up: {names} hold the most cards and win",
                               len(winners)).format(names=join_names(winners, tr))
        if not winners:
            return tr.gettext("Game over")
        return tr.ngettext("Game over: {names} wins", "Game over: {names} win",
                           len(winners)).format(names=join_names(winners, tr))
    notice = _notice(verdict, seats, tr)
    if notice is not None:
        return notice
    extra = {k: v for k, v in verdict.items() if k not in ("t", "verdict")}
    return f"{kind}: {extra}"


def round_words(verdict: Mapping[str, Any], seats: Sequence[str],
                tr: Translator = ENGLISH) -> str:
    """A ``round_over`` verdict in words: who won (or a blocked round), the hand scores and
    the running totals of the points game."""
    scores = round_scores(verdict, seats, tr)
    totals = verdict.get("totals")
    total_words = ", ".join(tr.gettext("{name} {score}").format(name=seat_name(seats, i, tr),
                                                                score=s)
                            for i, s in enumerate(totals or []))
    if verdict.get("winner") is None:
        if totals:
            return tr.gettext("Round blocked — hand scores {scores}; totals {totals}").format(
                scores=scores, totals=total_words)
        return tr.gettext("Round blocked — hand scores {scores}").format(scores=scores)
    winner = seat_name(seats, verdict.get("winner"), tr)
    if totals:
        return tr.gettext("{winner} wins the round — hand scores {scores}; totals "
                          "{totals}").format(winner=winner, scores=scores, totals=total_words)
    return tr.gettext("{winner} wins the round — hand scores {scores}").format(winner=winner,
                                                                               scores=scores)


#: Service notices (not game verdicts) in words.
NOTICES = {
    "paused": N_("The referee paused the game"),
    "resumed": N_("The game goes on"),
    "ignored": N_("{seat}: {act} ignored — {reason}"),
    "ended_by_operator": N_("The referee ended the game"),
    "board_offline": N_("The table board is offline: the game waits for it"),
    "board_online": N_("The table board is back"),
    "board_error": N_("The table board reports a problem"),
    "button_stuck": N_("{seat}'s {button} is stuck: ignored until released"),
    "button_released": N_("{seat}'s {button} works again"),
    "button_chatter": N_("{seat}'s {button} chatters ({reason}): ignored until it is still"),
    "button_settled": N_("{seat}'s {button} is still again and counts"),
    "board_link_unusable": N_("The line to the table board is unusable ({reason}): the game "
                              "waits for it"),
    "board_link_usable": N_("The line to the table board works again"),
    "camera_offline": N_("The camera over the pile stopped ({reason}): type the cards at the "
                         "console until it is back"),
    "camera_online": N_("The camera over the pile sees the table again"),
    "journal_error": N_("The journal cannot be written ({reason}): the game is paused until "
                        "it can"),
    "journal_ok": N_("The journal can be written again: the game goes on"),
    "journal_damaged": N_("The journal was damaged at line {line}: the game goes on from the "
                          "line before it"),
    "unknown_tag": N_("A card the deck file does not know was read (tag {tag})"),
    "unknown_button": N_("A board button that belongs to no seat was pressed"),
    "rejected": N_("{seat}: input rejected — {reason}"),
}

#: Why an input was ignored (an ``ignored`` notice's ``why``), in words.
IGNORED = {
    "paused": N_("the game is paused"),
    "journal": N_("the journal cannot be written ({fault})"),
    "nobody_to_play": N_("nobody is to play"),
}

#: The acts in words (an ``ignored`` notice names the act it ignored).
ACT_WORDS = {"lay": N_("lay"), "slap": N_("slap"), "play": N_("play"), "draw": N_("draw"),
             "pass": N_("pass"), "call": N_("call"), "deal": N_("deal"),
             "reshuffle": N_("reshuffle")}
#: The buttons in words (a stuck or chattering button).
BUTTON_WORDS = {"slap": N_("slap button"), "lay": N_("lay button"), "call": N_("call button"),
                "draw": N_("draw button"), "pass": N_("pass button")}


def button_words(button: object, tr: Translator = ENGLISH) -> str:
    """A seat's button in words: ``slap button`` (another button: ``X button``)."""
    words = BUTTON_WORDS.get(str(button))
    return tr.gettext(words) if words else tr.gettext("{name} button").format(name=button)


def _notice(verdict: Mapping[str, Any], seats: Sequence[str], tr: Translator) -> str | None:
    kind = str(verdict.get("verdict"))
    message = NOTICES.get(kind)
    if message is None:
        return None
    reason = with_names(str(verdict.get("reason", "")), seats)
    why = IGNORED.get(str(verdict.get("why")))
    if why is not None:
        reason = tr.gettext(why).format(fault=verdict.get("fault", ""))
    if kind == "ignored" and verdict.get("seat") is None:
        return tr.gettext("A card was read and ignored ({card}) — {reason}").format(
            card=card_name(verdict.get("card"), tr), reason=reason)
    act, button = str(verdict.get("act", "")), str(verdict.get("button", ""))
    return tr.gettext(message).format(
        seat=seat_name(seats, verdict.get("seat"), tr),
        button=button_words(button, tr),
        reason=reason, tag=verdict.get("tag", ""), card=verdict.get("card", ""),
        act=tr.gettext(ACT_WORDS[act]) if act in ACT_WORDS else act,
        line=verdict.get("line", ""))


def describe_input(inp: Mapping[str, Any], seats: Sequence[str], *,
                   hidden: bool = True, tr: Translator = ENGLISH) -> str:
    """What an input (a journal line, as ``Input.to_json`` gives it) did, in words:
    ``Anna plays the 8 of spades as the ace of hearts``. With ``hidden`` a card drawn from the
    stock is not named (the other players do not see it)."""
    who = seat_name(seats, inp.get("seat"), tr)
    act = inp.get("act")
    cards = ([inp["card"]] if inp.get("card") else []) + list(inp.get("cards") or ())
    named = join_names([tr.gettext("the {card}").format(card=card_name(c, tr))
                        for c in cards], tr)
    if act == "lay":
        if not named:
            return tr.gettext("{seat} lays a card").format(seat=who)
        return tr.gettext("{seat} lays {cards}").format(seat=who, cards=named)
    if act == "play":
        if inp.get("as"):
            return tr.gettext("{seat} plays {cards} as the {card}").format(
                seat=who, cards=named, card=card_name(inp["as"], tr))
        return tr.gettext("{seat} plays {cards}").format(seat=who, cards=named)
    if act == "draw":
        if hidden or not named:
            return tr.gettext("{seat} draws a card").format(seat=who)
        return tr.gettext("{seat} draws {cards}").format(seat=who, cards=named)
    words = {"slap": N_("{seat} slaps"), "pass": N_("{seat} passes"),
             "call": N_("{seat} calls lappen"),
             "reshuffle": N_("{seat} turns the discards into a new stock"),
             "deal": N_("{seat} deals")}
    if str(act) in words:
        return tr.gettext(words[str(act)]).format(seat=who)
    return f"{who} {act}"


#: What a game's state counts in ``tricks`` (:attr:`referee.engine.Game.tally`), in words.
TALLIES = {"piles collected": Nn_("{n} pile collected", "{n} piles collected"),
           "rounds played": Nn_("{n} round played", "{n} rounds played")}


def tally_words(tally: str, n: int, tr: Translator = ENGLISH) -> str:
    """``n`` of a game's tally (``piles collected``) in words: ``1 pile collected``."""
    pair = TALLIES.get(tally)
    if pair is None:
        return f"{n} {tally}"
    return tr.ngettext(pair[0], pair[1], n).format(n=n)


def counted(n: Any, one: str, many: str | None = None) -> str:
    """``n`` things in English words: ``1 card``, ``2 cards`` (``many`` for an irregular
    plural). Words a person at the table reads use ``tr.ngettext`` instead."""
    return f"{n} {one if n == 1 else many or one + 's'}"


def format_time(t_ns: int) -> str:
    """Table-clock nanoseconds as ``m:ss.mmm``."""
    ms = t_ns // 1_000_000
    return f"{ms // 60_000}:{ms // 1000 % 60:02d}.{ms % 1000:03d}"

