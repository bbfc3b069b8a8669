"""The referee's own web display: the scene of the table as ``referee display --web`` shows
it, made from the service's changes directly (no broker in between), for the page at ``/`` of
``referee run`` and for the operator page (its race, its standings).

:class:`LocalDisplay` is an output and an edge of the service: each change is numbered as the
MQTT feed numbers it (:func:`cardtable.feed.number`) and taken by a
:class:`~cardtable.display.view.TableView`; the scene is built once per turn of the loop after
a burst of changes (never inside the service's step), and published on a
:class:`~cardtable.webserver.SceneStream`. The history (the evening's games and standings) is
read again after each game, off the loop, as the feed's is.
"""

from __future__ import annotations

import asyncio
import uuid
from collections import deque
from typing import TYPE_CHECKING, Any

from cardtable.display.view import RECENT, TableView
from cardtable.display.web import dumps
from cardtable.feed import number
from cardtable.history import HistoryPublisher
from cardtable.webserver import SceneStream, StreamBudget
from referee.model import Verdict

if TYPE_CHECKING:
    from cardtable.service import RefereeService


class LocalDisplay:
    """The table's scene for the web pages of ``referee run`` (see the module's docstring)."""

    #: It submits no input (cardtable.service.Source).
    own_stamps = False

    def __init__(self, table_id: str, budget: StreamBudget | None = None) -> None:
        self.view = TableView(table_id, connected=True, status="online")
        self.stream = SceneStream(budget=budget)
        self.session = uuid.uuid4().hex
        self.seq = 0
        self.history: dict[str, Any] | None = None
        #: Keys added to every scene (the site's ``pairing``: until when the table's own screen
        #: may show the pairing code, in wall-clock seconds; the code itself is never in it).
        self.extra: dict[str, Any] = {}
        self._recent: deque[dict[str, Any]] = deque(maxlen=RECENT)
        self._loop: asyncio.AbstractEventLoop | None = None
        self._due = False
        self._publisher: HistoryPublisher | None = None
        self.publish()

    async def start(self, service: RefereeService) -> None:
        """Read the history now (and after each game)."""
        self._loop = asyncio.get_running_loop()
        self._publisher = HistoryPublisher(service.journal_dir, self.view.table_id,
                                           self._take_history, self._loop)
        self._publisher.refresh()

    async def stop(self) -> None:
        """End the pages' streams."""
        self.stream.close()

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """Take one change of the service (on its loop): the scene follows soon after."""
        self.seq += 1
        dealt = (self.view.state or {}).get("cards_played", 0) > state.get("cards_played", 0)
        events = [v.to_json() for v in verdicts]
        state = dict(state)
        number(state, events, session=self.session, seq=self.seq, table_id=self.view.table_id,
               names=None, recent=self._recent)
        self.view.on_state(state)
        for event in events:
            self.view.on_event(event)
        if self._publisher is not None:
            self._publisher.update(verdicts)
            if dealt:  # a new game: the one before is archived now (read it as such)
                self._publisher.refresh()
        self._soon()

    def _take_history(self, summary: dict[str, Any]) -> None:
        self.history = summary
        self.view.history = summary
        self._soon()

    def _soon(self) -> None:
        """Publish the scene once the loop has run what is ready now (a burst of changes
        makes one scene)."""
        if self._loop is None:
            self.publish()
        elif not self._due:
            self._due = True
            self._loop.call_soon(self.publish)

    def publish(self) -> None:
        """Send the scene of now to every page."""
        self._due = False
        self.stream.publish(dumps(self.scene()))

    def scene(self) -> dict[str, Any]:
        """The scene of now."""
        return {**self.view.scene(), **self.extra}
