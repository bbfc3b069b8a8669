"""What a display knows of one table, kept up to date from the feed's messages: the newest
state it could read, the recent verdicts, the referee's status, the display's own connection
(and why it is down), what it could not read, who just played what, and whether a gap in the
verdicts means that the retained state must be read again."""

from __future__ import annotations

import logging
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from rich.console import RenderableType

from cardtable.display.check import (
    MAX_PAYLOAD,
    Unreadable,
    check_event,
    check_state,
    read_json,
)
from cardtable.display.race import RaceWatch, race_scene
from cardtable.display.render import draw
from cardtable.display.scene import derive_play, scene
from cardtable.display.standings import read_history, standings_scene
from cardtable.feed import Topics
from cardtable.i18n import Language, language, languages

log = logging.getLogger("cardtable.display")

#: How many verdicts a display keeps and shows.
RECENT = 8


def _event_key(v: dict[str, Any]) -> tuple[Any, ...]:
    return (v.get("session"), v.get("seq"), v.get("t"), v.get("verdict"), v.get("seat"),
            v.get("code"))


def _same_table(a: dict[str, Any], b: dict[str, Any]) -> bool:
    return all(a.get(k) == b.get(k) for k in ("counts", "pile", "turn", "stock", "round"))


@dataclass
class TableView:
    """A display's knowledge of one table: the newest state it could read, the recent
    verdicts, the referee's status and the display's own connection. Feed it messages with
    :meth:`on_message`; :meth:`scene` is what it shows."""

    table_id: str
    state: dict[str, Any] | None = None
    status: str | None = None
    connected: bool = False
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT))
    session: str | None = None
    seq: int = 0
    #: Times the display asked for the retained state again (gaps and new sessions).
    rereads: int = 0
    #: Why the display is not connected (the broker's refusal, a network error), if known.
    error: str | None = None
    #: Connections to the broker so far.
    connections: int = 0
    #: Why the newest ``state`` message could not be read (``None``: it could).
    problem: str | None = None
    #: Messages that could not be read (states and verdicts), since the start.
    unreadable: int = 0
    #: Who just played what (:func:`~cardtable.display.scene.derive_play`), if known.
    last_play: dict[str, Any] | None = None
    #: The largest ``state``/``events`` payload read (bytes); larger ones are not parsed.
    max_payload: int = MAX_PAYLOAD
    #: The newest readable ``history`` (the evening's games and standings), if any.
    history: dict[str, Any] | None = None
    #: The slap races seen (display/race.py): the latest one is shown.
    races: RaceWatch = field(default_factory=RaceWatch)
    #: The language this display was told to show (``--lang``); None: the table's.
    lang: str | None = None

    def language(self, code: str | None = None) -> Language:
        """The language of a scene: ``code`` (a page's ``?lang=``) when there are words in it,
        else the display's own (``--lang``), else the table's (its state's ``language``), else
        the system locale's."""
        known = languages()
        for choice in (code, self.lang, (self.state or {}).get("language")):
            if isinstance(choice, str) and choice in known:
                return language(choice)
        return language(None)

    def set_connection(self, connected: bool, error: str | None) -> None:
        """The display's connection to the broker: up or not, and why not."""
        self.connected, self.error = connected, error

    def on_message(self, topic: str, payload: bytes) -> bool:
        """Take one message of the table's topics; True when the state must be re-read.
        Never raises for what the message holds: an unreadable state is kept in
        :attr:`problem` (the last readable state stays), an unreadable verdict is dropped and
        the state re-read."""
        topics = Topics(self.table_id)
        if topic == topics.status:
            text = payload[:16].decode(errors="replace").strip()
            self.status = text if text in ("online", "offline") else None
            return False
        if topic == topics.history:  # the standings (display/standings.py)
            self.history = read_history(payload, self.max_payload) if payload else None
            return False
        if not payload or topic not in (topics.state, topics.events):
            return False
        try:
            obj = read_json(payload, self.max_payload)
        except Unreadable as exc:
            obj = exc
        if topic == topics.state:
            if isinstance(obj, Unreadable):
                self._unreadable(obj)
            else:
                self.on_state(obj)
            return False
        if isinstance(obj, Unreadable):
            log.info("display: unreadable verdict on %s (%s): reading the state again",
                     topic, obj)
            self.unreadable += 1
            return True
        return self.on_event(obj)

    def _unreadable(self, exc: Unreadable) -> None:
        log.info("display: unreadable state on table %s: %s", self.table_id, exc)
        self.unreadable += 1
        self.problem = str(exc)

    def on_state(self, state: Any) -> None:
        """A (retained or fresh) state: checked first (:func:`check_state`; an unreadable one
        only sets :attr:`problem`); a new session starts the verdict list afresh from the
        state's ``recent``; the same session merges ``recent`` in (it fills a gap)."""
        try:
            state = check_state(state)
        except Unreadable as exc:
            self._unreadable(exc)
            return
        self.problem = None
        session = state.get("session")
        seq = state.get("seq") or 0
        previous = self.state
        if session != self.session:
            self.session = session
            self.seq = seq
            self.events.clear()
        elif seq < self.seq and self.state is not None:
            return  # older than what this display already shows
        self.seq = max(self.seq, seq)
        if (previous or {}).get("cards_played", 0) > (state.get("cards_played") or 0):
            self.races.forget()  # a new game: the last race was another game's
        self.races.on_state(state)
        self.state = state
        play = derive_play(previous, state)
        if play is not None or previous is None or not _same_table(previous, state):
            self.last_play = play
        known = {_event_key(e) for e in self.events}
        merged = list(self.events) + [dict(e, session=session) if "session" not in e else e
                                      for e in state.get("recent") or []
                                      if _event_key(e) not in known]
        merged.sort(key=lambda e: e.get("seq") or 0)
        self.events.clear()
        self.events.extend(merged[-RECENT:])
        self.races.feed(self.events)

    def on_event(self, event: Any) -> bool:
        """One verdict; True when it shows that this display missed something (a ``seq`` gap,
        a new ``session``, or a verdict it cannot read), so the state must be re-read."""
        try:
            event = check_event(event)
        except Unreadable:
            self.unreadable += 1
            return True
        session, seq = event.get("session"), event.get("seq")
        if not isinstance(seq, int):
            return False
        if session != self.session or seq > self.seq + 1:
            self.events.append(event)
            self.races.on_verdict(event)
            return True
        if _event_key(event) not in {_event_key(e) for e in self.events}:
            self.events.append(event)
            self.races.on_verdict(event)
        self.seq = max(self.seq, seq)
        return False

    def scene(self, lang: Language | None = None) -> dict[str, Any]:
        """What this display shows (:func:`~cardtable.display.scene.scene`), in ``lang``
        (default: :meth:`language`)."""
        lang = lang or self.language()
        out = scene(self.state, list(self.events), self.status, table_id=self.table_id,
                    connected=self.connected, error=self.error, problem=self.problem,
                    last_play=self.last_play, lang=lang)
        out["standings"] = standings_scene(self.history, lang)
        if not out["waiting"]:
            out["race"] = race_scene(self.races.latest, [s["name"] for s in out["seats"]],
                                     lang)
        return out

    def render(self) -> RenderableType:
        """The scene drawn with rich (:func:`~cardtable.display.render.draw`)."""
        lang = self.language()
        return draw(self.scene(lang), lang)
