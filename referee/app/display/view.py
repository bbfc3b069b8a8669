"""What a display knows of one table, kept up to date from the feed's messages: the newest
state, the recent verdicts, the referee's status and the display's own connection, and whether a
gap in the verdicts means that the retained state must be read again."""

from __future__ import annotations

import json
import logging
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from rich.console import RenderableType

from referee.app.display.render import render
from referee.app.feed import Topics

log = logging.getLogger("referee.app.display")

#: How many verdicts a display keeps and shows.
RECENT = 8


def _event_key(v: Mapping[str, Any]) -> tuple[Any, ...]:
    return (v.get("session"), v.get("seq"), v.get("t"), v.get("verdict"), v.get("seat"),
            v.get("code"))


@dataclass
class TableView:
    """A display's knowledge of one table: the newest state, the recent verdicts, the referee's
    status and the display's own connection. Feed it messages with :meth:`on_message`."""

    table_id: str
    state: dict[str, Any] | None = None
    status: str | None = None
    connected: bool = False
    events: deque[dict[str, Any]] = field(default_factory=lambda: deque(maxlen=RECENT))
    session: str | None = None
    seq: int = 0
    #: Times the display asked for the retained state again (gaps and new sessions).
    rereads: int = 0

    def on_message(self, topic: str, payload: bytes) -> bool:
        """Take one message of the table's topics; True when the state must be re-read."""
        topics = Topics(self.table_id)
        if topic == topics.status:
            self.status = payload.decode(errors="replace").strip() or None
            return False
        try:
            obj = json.loads(payload) if payload else None
        except ValueError:
            log.warning("display: unreadable JSON on %s", topic)
            return False
        if not isinstance(obj, dict):
            return False
        if topic == topics.state:
            self.on_state(obj)
            return False
        if topic == topics.events:
            return self.on_event(obj)
        return False

    def on_state(self, state: dict[str, Any]) -> None:
        """A (retained or fresh) state: a new session starts the verdict list afresh from the
        state's ``recent``; the same session merges ``recent`` in (it fills a gap)."""
        session = state.get("session")
        raw_seq = state.get("seq")
        seq = raw_seq if isinstance(raw_seq, int) else 0
        if session != self.session:
            self.session = session
            self.seq = seq
            self.events.clear()
        elif seq < self.seq and self.state is not None:
            return  # older than what this display already shows
        self.seq = max(self.seq, seq)
        self.state = state
        known = {_event_key(e) for e in self.events}
        merged = list(self.events) + [dict(e, session=session) if "session" not in e else e
                                      for e in state.get("recent") or []
                                      if _event_key(e) not in known]
        merged.sort(key=lambda e: e.get("seq") or 0)
        self.events.clear()
        self.events.extend(merged[-RECENT:])

    def on_event(self, event: dict[str, Any]) -> bool:
        """One verdict; True when it shows that this display missed something (a ``seq`` gap or
        a new ``session``), so the state must be re-read."""
        session, seq = event.get("session"), event.get("seq")
        if not isinstance(seq, int):
            return False
        if session != self.session or seq > self.seq + 1:
            self.events.append(event)
            return True
        if _event_key(event) not in {_event_key(e) for e in self.events}:
            self.events.append(event)
        self.seq = max(self.seq, seq)
        return False

    def render(self) -> RenderableType:
        """:func:`render` of what this display knows."""
        return render(self.state, list(self.events), self.status, table_id=self.table_id,
                      connected=self.connected)
