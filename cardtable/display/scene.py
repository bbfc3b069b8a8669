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
``None`` is a face-down card. ``lang`` is the language of the scene's words (a scene is made in
one language: :mod:`cardtable.i18n`), ``words`` the words the pages draw around the data
(``turn``, ``pile``, ``match``, ``last_play``: templates with ``{cards}`` and ``{card}`` where
the page draws cards; ``totals`` of the seats).
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from cardtable.display.check import Unreadable, check_event, check_state
from cardtable.display.race import RaceWatch, race_scene, timing_scene
from cardtable.i18n import ENGLISH_LANGUAGE, OS_WORDS, Language, language_names
from cardtable.speech import announcement
from referee.cards import RANK_TEXT
from referee.describe import (
    N_,
    button_words,
    describe,
    fill,
    join_names,
    round_scores,
    seat_name,
    seat_names,
    suit_word,
)

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


def table_alerts(state: Mapping[str, Any] | None,
                 lang: Language = ENGLISH_LANGUAGE) -> list[str]:
    """What is wrong at the table right now, in words: the journal, the board and its serial
    link, a pause, stuck and chattering buttons (a checked state's ``alerts`` and ``paused``).
    The service's own alert texts (the journal's) are English (its errors' words); the one a
    full or failing disk makes is said in ``lang`` (:func:`journal_alert`)."""
    if not state:
        return []
    names = seat_names(state, lang)
    alerts = state.get("alerts") or {}
    out = []
    if alerts.get("journal"):
        out.append(journal_alert(alerts["journal"], lang))
    if alerts.get("board") == "offline":
        out.append(lang.gettext("TABLE BOARD OFFLINE: the game waits for it"))
    if alerts.get("board_link"):
        out.append(lang.gettext("TABLE BOARD LINK UNUSABLE: {why}").format(
            why=alerts["board_link"]))
    if alerts.get("camera"):
        out.append(lang.gettext("CAMERA STOPPED ({why}): type the cards at the console").format(
            why=alerts["camera"]))
    if state.get("paused"):
        out.append(lang.gettext("PAUSED by the referee"))
    for stuck in alerts.get("stuck") or []:
        out.append(lang.gettext("{seat}'s {button} is stuck: ignored until released").format(
            seat=seat_name(names, stuck.get("seat"), lang),
            button=button_words(stuck.get("button"), lang)))
    for pad in alerts.get("chatter") or []:
        out.append(lang.gettext("{seat}'s {button} chatters: ignored until it is still").format(
            seat=seat_name(names, pad.get("seat"), lang),
            button=button_words(pad.get("button"), lang)))
    if alerts.get("journal_damaged"):
        out.append(_sentence(alerts["journal_damaged"]))
    return out



#: The alert the service sets while its journal cannot be written (``cardtable.service``,
#: ``_journal_failed``): English, the system's reason and the folder inside.
_JOURNAL_PAUSED = re.compile(r"the journal cannot be written \((?P<why>.+?) at (?P<folder>.+)\): "
                             r"the game is paused until it can", re.DOTALL)  # a folder "… at …"
#: The system's texts of the errors :data:`~cardtable.i18n.OS_WORDS` says in words.
_SYSTEM_TEXTS = {os.strerror(number): words for number, words in OS_WORDS.items()}


def journal_alert(text: str, lang: Language = ENGLISH_LANGUAGE) -> str:
    """The journal's alert in ``lang``: a Swedish table paused by a full disk had shown "The
    journal cannot be written (No space left on device at …)" on every display. The system's
    reason is said in ``lang`` where it is one the catalogs know; any other text as it is."""
    found = _JOURNAL_PAUSED.fullmatch(text)
    if found is None or lang.code == ENGLISH_LANGUAGE.code:
        return _sentence(text)
    why = found["why"]
    reason = lang.gettext("{why} in {folder}").format(
        why=lang.gettext(_SYSTEM_TEXTS[why]) if why in _SYSTEM_TEXTS else why,
        folder=found["folder"])
    return lang.gettext("The journal cannot be written ({reason}): the game is paused until "
                        "it can").format(reason=reason)


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


def play_words(play: Mapping[str, Any], lang: Language = ENGLISH_LANGUAGE) -> str:
    """A :func:`derive_play` result in words, its cards as ``{cards}`` and the card an eight
    was named as as ``{card}`` (for the display to draw): ``Anna played {cards}``, ``Anna
    played {cards} as {card}``, ``Bo drew 2 cards``, ``Cia passed``."""
    who = str(play.get("name") or seat_name((), play.get("seat"), lang))
    if play.get("passed"):
        return lang.gettext("{name} passed").format(name=who)
    if play.get("drew"):
        n = play["drew"]
        return lang.ngettext("{name} drew a card", "{name} drew {n} cards", n).format(name=who,
                                                                                   n=n)
    if play.get("as"):
        return fill(lang.gettext("{name} played {cards} as {card}"), name=who)
    return fill(lang.gettext("{name} played {cards}"), name=who)


def _round_result(events: Sequence[Mapping[str, Any]], names: Sequence[str],
                  lang: Language) -> str | None:
    latest = next((v for v in reversed(events) if v.get("verdict") == "round_over"), None)
    if latest is None:
        return None
    scores = round_scores(latest, names, lang)  # the words of the verdict text
    if latest.get("winner") is None:
        if scores:
            return lang.gettext("Round blocked. Scores: {scores}").format(scores=scores)
        return lang.gettext("Round blocked")
    winner = seat_name(names, latest.get("winner"), lang)
    if scores:
        return lang.gettext("Round won by {name}. Scores: {scores}").format(name=winner,
                                                                           scores=scores)
    return lang.gettext("Round won by {name}").format(name=winner)


def _words(v: Mapping[str, Any], names: Sequence[str], lang: Language) -> str:
    """A verdict in words, made here from its codes and numbers (the feed's ``text``, the
    English words of an older referee, only for what this display cannot word)."""
    try:
        words = describe(dict(v), names, lang)
    except Exception:  # a checked verdict of a kind or shape describe() does not expect
        words = None
    if words is None or words.startswith(f"{v.get('verdict')}: "):  # a kind it does not know
        return str(v.get("text") or v.get("verdict"))
    return words


#: Each kind of headline in words (the scene's ``words.turn``).
HEADLINES = {"winner": N_("Winner: {names}"), "shared": N_("Shared win: {names}"),
             "turn": N_("{name} to play"), "over": N_("Game over")}


def headline_words(head: Mapping[str, Any] | None, lang: Language) -> str:
    """The scene's headline in words: ``Anna to play``, ``Winner: Bo``, ``Game over``."""
    if not head:
        return ""
    names = list(head.get("names") or [])
    if head.get("kind") == "winner":
        key = "winner" if len(names) == 1 else "shared"
        return lang.gettext(HEADLINES[key]).format(names=join_names(names, lang))
    if head.get("kind") == "turn" and names:
        return lang.gettext(HEADLINES["turn"]).format(name=names[0])
    return lang.gettext(HEADLINES["over"])


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
    lang: Language = ENGLISH_LANGUAGE,
) -> dict[str, Any]:
    """Everything a display shows, as a JSON-ready dict (the keys are in the module docstring),
    in the words of ``lang``.

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
        "subtitle": lang.gettext({"online": N_("referee online"),
                                  "offline": N_("referee OFFLINE")}.get(
            status or "", N_("referee status unknown"))),
        "lang": lang.code, "words": {}, "said": None, "languages": language_names(),
    }
    banners: list[dict[str, str]] = out["banners"]
    if not connected:
        if error:
            text = lang.gettext("No connection to the broker ({error}): reconnecting…").format(
                error=error)
        else:
            text = lang.gettext("No connection to the broker: reconnecting…")
        if checked is not None:
            text += " " + lang.gettext("The table shown may be out of date.")
        banners.append({"kind": "broker", "text": text})
    if problem:
        text = (lang.gettext("Unreadable state from the referee ({problem}); the last readable "
                             "one is shown") if checked is not None else
                lang.gettext("Unreadable state from the referee ({problem})"))
        banners.append({"kind": "unreadable", "text": text.format(problem=problem)})
    if status == "offline":
        banners.append({"kind": "offline",
                        "text": lang.gettext("REFEREE OFFLINE: the last known state is shown")})
    for alert in table_alerts(checked, lang):
        banners.append({"kind": "alert", "text": alert})
    if checked is None:
        out["words"] = {"turn": lang.gettext("Waiting for the referee…")}
        return out
    s = checked
    out["stale"] = not connected or status == "offline" or bool(problem)
    out["seq"], out["session"] = s.get("seq") or 0, s.get("session")
    names = seat_names(s, lang)
    game = s.get("game") or ""
    out["title"] = GAME_TITLES.get(game, game or lang.gettext("Card table"))
    out["round"] = s.get("round")

    winners = s.get("winners") or []
    if winners:
        out["headline"] = {"kind": "winner",
                           "names": [seat_name(names, w, lang) for w in winners]}
    elif s.get("turn") is not None:
        out["headline"] = {"kind": "turn", "names": [seat_name(names, s["turn"], lang)]}
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
        out["last_play"] = {**dict(last_play),
                            "name": seat_name(names, last_play.get("seat"), lang)}

    notices: list[dict[str, str]] = out["notices"]
    challenge = s.get("challenge") or {}
    if challenge:
        owes = challenge.get("owes")
        notices.append({"kind": "challenge", "text": lang.ngettext(
            "{seat} owes {n} more card to {by}", "{seat} owes {n} more cards to {by}",
            owes if isinstance(owes, int) else 0).format(
                seat=seat_name(names, challenge.get("seat"), lang), n=owes,
                by=seat_name(names, challenge.get("by"), lang))})
    claim = s.get("claim") or {}
    if claim:
        why = CLAIMS.get(str(claim.get("reason") or ""))
        who = seat_name(names, claim.get("seat"), lang)
        text = (lang.gettext("{seat} is collecting the pile ({why}): slap now or never").format(
                    seat=who, why=lang.gettext(why)) if why else
                lang.gettext("{seat} is collecting the pile: slap now or never").format(
                    seat=who))
        notices.append({"kind": "claim", "text": text})
    if s.get("must_draw") is not None:
        notices.append({"kind": "draw", "text": lang.gettext("{seat} must draw a card").format(
            seat=seat_name(names, s["must_draw"], lang))})
    called = [c for c in s.get("called") or [] if c < len(names)]
    out["calls"] = [names[c] for c in called]
    if called:
        notices.append({"kind": "lappen", "text": lang.gettext("Lappen called: {names}").format(
            names=", ".join(out["calls"]))})

    counts = list(s.get("counts") or [])
    totals = s.get("totals")
    outs = set(s.get("out") or [])
    for i, name in enumerate(names):
        notes = []
        if challenge and challenge.get("seat") == i:
            notes.append(lang.gettext("owes {n}").format(n=challenge.get("owes")))
        if s.get("must_draw") == i:
            notes.append(lang.gettext("must draw"))
        if i in called:
            notes.append(lang.gettext("lappen!"))
        if i in outs:
            notes.append(lang.gettext("OUT"))
        if i in winners:
            notes.append(lang.gettext("WINNER"))
        out["seats"].append({
            "name": name, "count": counts[i] if i < len(counts) else None,
            "turn": s.get("turn") == i, "out": i in outs, "winner": i in winners,
            "called": i in called,
            "total": totals[i] if totals is not None and i < len(totals) else None,
            "notes": notes,
        })
        total = out["seats"][-1]["total"]
        if isinstance(total, int):
            out["seats"][-1]["total_words"] = lang.ngettext("{n} pt", "{n} pts", total).format(
                n=total)
    out["out"] = [seat_name(names, i, lang) for i in sorted(outs)]
    out["round_result"] = _round_result(good, names, lang)
    out["verdicts"] = [_words(v, names, lang) for v in verdict_order(good)
                       if v.get("verdict") != "round_over"]
    out["race"] = race_scene(RaceWatch().feed(good).latest, names, lang)  # display/race.py
    out["timing"] = timing_scene(s, lang)
    out["words"] = scene_words(out, lang)
    out["said"] = said(good, out, names, lang)
    return out


def said(events: Sequence[Mapping[str, Any]], sc: Mapping[str, Any], names: Sequence[str],
         lang: Language) -> dict[str, Any] | None:
    """What the newest change says, aloud or as a sound, once (the scene's ``said``):
    ``seq`` (of that change), ``text`` (the words of its verdict that matters most, or None)
    and ``sound`` (:data:`cardtable.speech.SOUNDS`, or None), as the table's speaker says it
    (:func:`cardtable.speech.announcement`)."""
    numbered = [v for v in events if isinstance(v.get("seq"), int)]
    if not numbered:
        return None
    newest = max(v["seq"] for v in numbered)
    change = [v for v in numbered if v["seq"] == newest]
    pile = next((v for v in reversed(numbered)
                 if v.get("verdict") == "pile_won" and v["seq"] <= newest), None)
    race = sc.get("race") or {}
    said = announcement(change, names, lang, pile=pile,
                        photo_finish=bool(race.get("photo_finish")))
    return {"seq": newest, "text": said.text, "sound": said.sound}


#: Why a pile is being collected (a claim's ``reason``), in words.
CLAIMS = {"challenge": N_("challenge"), "payment_failed": N_("payment failed"),
          "last_player": N_("last player")}


def scene_words(sc: Mapping[str, Any], lang: Language) -> dict[str, Any]:
    """The words the displays draw around a scene's data, in its language: ``turn`` (the
    headline), ``pile`` (``Pile``, and ``count``: ``5 cards``), ``bottom`` (a template with
    ``{card}``), ``match`` (``{suit}`` where the page draws the suit), ``stock``,
    ``last_play`` (:func:`play_words`, under ``Last play:``), ``where``."""
    pile = sc.get("pile") or {"count": 0}
    count = pile.get("count") or 0
    words: dict[str, Any] = {
        "turn": headline_words(sc.get("headline"), lang),
        "pile_count": lang.ngettext("{n} card", "{n} cards", count).format(n=count),
        "where": (lang.gettext("table {table}").format(table=sc["table"]) if sc.get("table")
                  else ""),
    }
    match = sc.get("match")
    if match:
        # The rank as the cards print it (A, K, Q, J), as the pile shows them.
        words["match"] = fill(lang.gettext("Play on: {rank} or {suit}"), rank=match.get("rank"))
        words["suit"] = suit_word(match.get("suit"), lang)
        if match.get("stock") is not None:
            words["stock"] = lang.gettext("stock {n}").format(n=match["stock"])
    if sc.get("round") is not None:
        words["round"] = lang.gettext("round {n}").format(n=sc["round"])
    if sc.get("last_play"):
        words["last_play"] = fill(lang.gettext("Last play: {play}"),
                                  play=play_words(sc["last_play"], lang))
    return words
