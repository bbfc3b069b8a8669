"""What a display shows, decided once for every display: the *scene*, a JSON-ready dict built
from the state, the recent verdicts, the referee's status and the display's own connection.

The terminal (:mod:`.render`) draws it with rich and the web page (``web/display.js``) draws
the same dict, which ``referee display --web`` streams to it, so the two show the same things in
the same words and the same order. :func:`scene` is pure and never fails: it checks its input
(:mod:`.check`) and says "unreadable state" where it cannot read it.

Keys: ``table``, ``title``, ``round``, ``seq``, ``session``, ``status``, ``connected``;
``banners`` (``kind``: ``broker``, ``unreadable``, ``offline``, ``alert``; and ``text``),
``stale`` (the table shown may be out of date), ``waiting`` (no state yet); ``headline``
(``kind``: ``winner``, ``turn``, ``over``; ``names``); ``pile`` (``cards``: the top five,
top last; ``count``), ``bottom``, ``match`` (``rank``, ``suit``, ``stock``), ``last_play``
(``name``, and ``cards`` and ``as``, the card an eight was named as, or ``drew``, or
``passed``), ``notices``, ``calls``,
``seats`` (``name``, ``count``, ``turn``, ``out``, ``winner``, ``called``, ``total``,
``notes``), ``out``, ``round_result`` and ``verdicts`` (words, newest change first and, within
one change, the one that matters most first); ``race`` (the latest slap race) and ``timing``
(the seats' slap statistics, at game end): :mod:`.race`. Cards are spelled ``QH``, ``10D``;
``None`` is a face-down card.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from cardtable.display.check import Unreadable, check_event, check_state
from cardtable.display.race import RaceWatch, race_scene, timing_scene
from referee.cards import RANK_TEXT
from referee.describe import describe, round_scores, seat_name, seat_names

GAME_TITLES = {
    "beggar-my-neighbour": "Beggar My Neighbour",
    "banka-bever": "Banka bäver",
    "vandatta": "Vändåtta",
}

#: Which verdict of one change leads (smaller first): the pile changing hands matters more
#: than who was too late for it.
LEAD = {"game_over": 0, "round_over": 1, "pile_won": 2, "out": 3, "challenge": 4,
        "desync": 5, "illegal": 6, "false_slap": 7, "slap_lost": 8}

#: Pile cards a scene carries (the terminal shows five, the page three).
PILE_SHOWN = 5


def table_alerts(state: Mapping[str, Any] | None) -> list[str]:
    """What is wrong at the table right now, in words: the journal, the board and its serial
    link, a pause, stuck and chattering buttons (a checked state's ``alerts`` and ``paused``)."""
    if not state:
        return []
    names = seat_names(state)
    alerts = state.get("alerts") or {}
    out = []
    if alerts.get("journal"):
        out.append(_sentence(alerts["journal"]))
    if alerts.get("board") == "offline":
        out.append("TABLE BOARD OFFLINE: the game waits for it")
    if alerts.get("board_link"):
        out.append(f"TABLE BOARD LINK UNUSABLE: {alerts['board_link']}")
    if state.get("paused"):
        out.append("PAUSED by the referee")
    for stuck in alerts.get("stuck") or []:
        out.append(f"{seat_name(names, stuck.get('seat'))}'s {stuck.get('button')} button is "
                   "stuck: ignored until released")
    for pad in alerts.get("chatter") or []:
        out.append(f"{seat_name(names, pad.get('seat'))}'s {pad.get('button')} button "
                   "chatters: ignored until it is still")
    if alerts.get("journal_damaged"):
        out.append(_sentence(alerts["journal_damaged"]))
    return out


def _sentence(text: str) -> str:
    return text[:1].upper() + text[1:]


def verdict_order(events: Sequence[Mapping[str, Any]]) -> list[Mapping[str, Any]]:
    """The verdicts newest change first; within one change (same ``session`` and ``seq``) the
    one that matters most first (:data:`LEAD`), else in the order they came.

    A ``slap_lost`` belongs to the pile it lost: the referee judges each late slap when it
    comes, in a change of its own after the ``pile_won``, so it joins the change of the latest
    ``pile_won`` of the seat it lost to. The pile won then leads its late slaps, and a late slap
    never becomes the headline above the pile it lost."""
    groups: list[list[Mapping[str, Any]]] = []
    last: tuple[Any, Any] | None = None
    pile: tuple[int, Any, Any] | None = None  # (group, session, seat) of the latest pile won
    for v in events:
        key = (v.get("session"), v.get("seq"))
        if (v.get("verdict") == "slap_lost" and pile is not None
                and (key[0], v.get("to")) == pile[1:]):
            groups[pile[0]].append(v)
            continue
        if groups and key == last and key[1] is not None:
            groups[-1].append(v)
        else:
            groups.append([v])
        last = key
        if v.get("verdict") == "pile_won":
            pile = (len(groups) - 1, key[0], v.get("seat"))
    out: list[Mapping[str, Any]] = []
    for group in reversed(groups):
        out.extend(sorted(group, key=lambda v: LEAD.get(str(v.get("verdict")), 5)))
    return out


def derive_play(old: Mapping[str, Any] | None, new: Mapping[str, Any]) -> dict[str, Any] | None:
    """Who just played what, from two checked states one change apart: the seat whose hand
    shrank by the cards played (and those cards, the top of the pile, and in Vändåtta the suit
    an eight asked for), a seat that drew from the stock, or a seat that passed. ``None`` when
    the change was something else or the states are not consecutive."""
    if old is None or old.get("session") != new.get("session"):
        return None
    if (new.get("seq") or 0) != (old.get("seq") or 0) + 1 or old.get("round") != new.get("round"):
        return None
    before, after = old.get("counts") or [], new.get("counts") or []
    if len(before) != len(after):
        return None
    changed = [(i, b - a) for i, (a, b) in enumerate(zip(before, after, strict=True)) if a != b]
    played = (new.get("cards_played") or 0) - (old.get("cards_played") or 0)
    pile = list(new.get("pile") or [])
    if played > 0 and len(changed) == 1 and changed[0][1] == -played and len(pile) >= played:
        cards = pile[-played:]
        current = new.get("current") or {}
        named = f"{current.get('rank')}{current.get('suit')}" if current.get("suit") else None
        top = cards[-1]
        # Vändåtta: an eight is laid as the card its player names (docs/rules.md §3)
        as_ = named if top is not None and top[:-1] == "8" and named != top else None
        return {"seat": changed[0][0], "cards": cards, "as": as_}
    stock_before, stock_after = old.get("stock"), new.get("stock")
    if played == 0 and stock_before is not None and stock_after is not None:
        if len(changed) == 1 and changed[0][1] == stock_before - stock_after > 0:
            return {"seat": changed[0][0], "drew": changed[0][1]}
        if (not changed and stock_before == stock_after and old.get("turn") is not None
                and old.get("turn") != new.get("turn") and old.get("pile") == new.get("pile")):
            return {"seat": old["turn"], "passed": True}
    return None


def play_words(play: Mapping[str, Any]) -> str:
    """A :func:`derive_play` result in words without its cards: ``Anna played``,
    ``Bo drew 2 cards``, ``Cia passed``."""
    who = str(play.get("name") or f"seat {play.get('seat')}")
    if play.get("passed"):
        return f"{who} passed"
    if play.get("drew"):
        n = play["drew"]
        return f"{who} drew {'a card' if n == 1 else f'{n} cards'}"
    return f"{who} played"


def _round_result(events: Sequence[Mapping[str, Any]], names: Sequence[str]) -> str | None:
    latest = next((v for v in reversed(events) if v.get("verdict") == "round_over"), None)
    if latest is None:
        return None
    head = ("Round blocked" if latest.get("winner") is None
            else f"Round won by {seat_name(names, latest.get('winner'))}")
    scores = round_scores(latest, names)  # the words of the verdict text
    return f"{head}. Scores: {scores}" if scores else head


def _words(v: Mapping[str, Any], names: Sequence[str]) -> str:
    if v.get("text"):
        return str(v["text"])
    try:
        return describe(dict(v), names)
    except Exception:  # a checked verdict of a kind or shape describe() does not expect
        return str(v.get("verdict"))


def scene(
    state: Mapping[str, Any] | None,
    events: Sequence[Mapping[str, Any]],
    status: str | None,
    *,
    table_id: str | None = None,
    connected: bool = True,
    error: str | None = None,
    problem: str | None = None,
    last_play: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Everything a display shows, as a JSON-ready dict (the keys are in the module docstring).

    ``connected``/``error``: the display's own connection to the broker and, when it is down,
    why; ``problem``: why the newest state could not be read (``state`` is then the last one
    that could, or ``None``); ``last_play``: :func:`derive_play`'s answer for this state."""
    checked: dict[str, Any] | None = None
    if state is not None:
        try:
            checked = check_state(dict(state))
        except Unreadable as exc:
            problem = problem or str(exc)
    good: list[dict[str, Any]] = []
    for e in events:
        try:
            good.append(check_event(dict(e)))
        except Unreadable:
            continue
    out: dict[str, Any] = {
        "table": table_id, "title": None, "round": None, "status": status,
        "connected": connected, "seq": 0, "session": None, "banners": [], "stale": False,
        "waiting": checked is None, "headline": None, "pile": None, "bottom": None,
        "match": None, "last_play": None, "notices": [], "calls": [], "seats": [], "out": [],
        "round_result": None, "verdicts": [], "race": None, "timing": None,
        "subtitle": {"online": "referee online", "offline": "referee OFFLINE"}.get(
            status or "", "referee status unknown"),
    }
    banners: list[dict[str, str]] = out["banners"]
    if not connected:
        why = f" ({error})" if error else ""
        tail = " The table shown may be out of date." if checked is not None else ""
        banners.append({"kind": "broker",
                        "text": f"No connection to the broker{why}: reconnecting…{tail}"})
    if problem:
        tail = "; the last readable one is shown" if checked is not None else ""
        banners.append({"kind": "unreadable",
                        "text": f"Unreadable state from the referee ({problem}){tail}"})
    if status == "offline":
        banners.append({"kind": "offline",
                        "text": "REFEREE OFFLINE: the last known state is shown"})
    for alert in table_alerts(checked):
        banners.append({"kind": "alert", "text": alert})
    if checked is None:
        return out
    s = checked
    out["stale"] = not connected or status == "offline" or bool(problem)
    out["seq"], out["session"] = s.get("seq") or 0, s.get("session")
    names = seat_names(s)
    game = s.get("game") or ""
    out["title"] = GAME_TITLES.get(game, game or "Card table")
    out["round"] = s.get("round")

    winners = s.get("winners") or []
    if winners:
        out["headline"] = {"kind": "winner", "names": [seat_name(names, w) for w in winners]}
    elif s.get("turn") is not None:
        out["headline"] = {"kind": "turn", "names": [seat_name(names, s["turn"])]}
    elif s.get("over"):
        out["headline"] = {"kind": "over", "names": []}

    pile = list(s.get("pile") or [])
    out["pile"] = {"cards": pile[-PILE_SHOWN:], "count": len(pile)}
    if game == "banka-bever" or s.get("bottom") is not None:
        out["bottom"] = {"card": s.get("bottom")}
    current = s.get("current")
    if current:
        rank = current.get("rank")
        out["match"] = {"rank": RANK_TEXT.get(rank, str(rank)) if isinstance(rank, int)
                        else str(rank), "suit": current.get("suit"), "stock": s.get("stock")}
    if last_play:
        out["last_play"] = {**dict(last_play), "name": seat_name(names, last_play.get("seat"))}

    notices: list[dict[str, str]] = out["notices"]
    challenge = s.get("challenge") or {}
    if challenge:
        owes = challenge.get("owes")
        notices.append({"kind": "challenge", "text":
                        f"{seat_name(names, challenge.get('seat'))} owes {owes} more "
                        f"card{'s' * (owes != 1)} to {seat_name(names, challenge.get('by'))}"})
    claim = s.get("claim") or {}
    if claim:
        why = str(claim.get("reason") or "").replace("_", " ")
        notices.append({"kind": "claim", "text":
                        f"{seat_name(names, claim.get('seat'))} is collecting the pile"
                        + (f" ({why})" if why else "") + ": slap now or never"})
    if s.get("must_draw") is not None:
        notices.append({"kind": "draw",
                        "text": f"{seat_name(names, s['must_draw'])} must draw a card"})
    called = [c for c in s.get("called") or [] if c < len(names)]
    out["calls"] = [names[c] for c in called]
    if called:
        notices.append({"kind": "lappen", "text": "Lappen called: " + ", ".join(out["calls"])})

    counts = list(s.get("counts") or [])
    totals = s.get("totals")
    outs = set(s.get("out") or [])
    for i, name in enumerate(names):
        notes = []
        if challenge and challenge.get("seat") == i:
            notes.append(f"owes {challenge.get('owes')}")
        if s.get("must_draw") == i:
            notes.append("must draw")
        if i in called:
            notes.append("lappen!")
        if i in outs:
            notes.append("OUT")
        if i in winners:
            notes.append("WINNER")
        out["seats"].append({
            "name": name, "count": counts[i] if i < len(counts) else None,
            "turn": s.get("turn") == i, "out": i in outs, "winner": i in winners,
            "called": i in called,
            "total": totals[i] if totals is not None and i < len(totals) else None,
            "notes": notes,
        })
    out["out"] = [seat_name(names, i) for i in sorted(outs)]
    out["round_result"] = _round_result(good, names)
    out["verdicts"] = [_words(v, names) for v in verdict_order(good)
                       if v.get("verdict") != "round_over"]
    out["race"] = race_scene(RaceWatch().feed(good).latest, names)  # display/race.py
    out["timing"] = timing_scene(s)
    return out
