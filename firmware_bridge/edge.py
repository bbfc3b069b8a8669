"""The table board as an edge (and an output) of ``cardtable.service.RefereeService``.

Card reads become inputs of the seat the card came from (the top of its known stack or a card
of its known hand) or else of the seat whose turn it is: a ``lay`` in the pile games, a one-card
``play`` in Vändåtta (a read at the stock reader is a ``draw``). Board buttons become ``slap``
inputs of the seat they belong to (``[board] buttons``). Times are the board's own edge times,
mapped onto the table clock by the link's clock sync. When the link is lost (no frame for a
while, the port failed because the board was unplugged, the board never answered, or the line
is unusable) the referee pauses and the verdict stream says ``board_offline`` with the reason;
on its return the game resumes (the board kept its events and delivers each exactly once). An
unusable line is said on its own too (``board_link_unusable`` / ``board_link_usable``, which the
service keeps as ``alerts.board_link``), and so is a frame the link refused on its content
(``board_error``). Each of these is also logged. The board's seat LEDs follow the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any

from firmware_bridge.deck import Deck
from firmware_bridge.events import BoardError, BoardEvent, LinkEvent, LinkHealth, LinkStatus
from firmware_bridge.link import Link
from referee.games import games
from referee.model import Input, Verdict

log = logging.getLogger("firmware_bridge.edge")

TURN_RGB = (0, 64, 0)
WIN_RGB = (0, 0, 96)
OFF_RGB = (0, 0, 0)


class BoardEdge:
    """Reads cards and buttons from the board; lights its seat LEDs.

    A source of the arbiter (``referee.arbiter``): its events are stamped on the board, so it
    says how far it has handed them in (:meth:`progress`): up to a heartbeat that found nothing
    pending on the board, less the clock sync's error bound. Heartbeats come every 200 ms, so
    a board at the table keeps most releases at the settle window (docs/timing.md)."""

    #: The arbiter's name for this source.
    source = "board"

    def __init__(self, port: str, *, deck: Deck | None = None,
                 buttons: tuple[int, ...] = (), stock_reader: int = 1,
                 link: Link | None = None) -> None:
        self.port = port
        self.deck = deck
        self.buttons = buttons
        self.stock_reader = stock_reader
        self.link = link
        self.service: Any = None
        self._paused_by_us = False
        self._lit: dict[int, tuple[int, int, int]] = {}
        self._retry: asyncio.Task[None] | None = None
        #: How often a port that could not be opened is tried again.
        self.retry_s = 1.0

    async def start(self, service: Any) -> None:
        """Open the serial link (the referee does not wait for the board to answer). A port
        that cannot be opened yet (the board unplugged, a wrong path) is reported as
        ``board_offline`` with the reason, the game waits, and the port is tried again every
        ``retry_s`` seconds."""
        self.service = service
        if self.link is None:
            self.link = self._new_link()
        else:
            self.link.add_listener(self._on_event)
        try:
            await self.link.open()
        except (OSError, ValueError) as exc:  # serial.SerialException is an OSError
            self._on_event(LinkStatus("board_offline", service.clock.now(),
                                      f"cannot open {self.port}: {exc}"))
            self._retry = asyncio.create_task(self._reopen())

    def _new_link(self) -> Link:
        link = Link(self.port, deck=self.deck, clock=self.service.clock.now)
        link.add_listener(self._on_event)
        return link

    async def _reopen(self) -> None:
        while True:
            await asyncio.sleep(self.retry_s)
            link = self._new_link()
            try:
                await link.open()
            except (OSError, ValueError):
                continue
            self.link = link  # its board_online event resumes the game
            return

    def progress(self) -> int | None:
        """The table time up to which the board has handed in every event it stamped, or None
        while it cannot say (no link, offline, no quiet heartbeat yet)."""
        if self.link is None or not self.link.online:
            return None
        return self.link.progress_ns

    async def stop(self) -> None:
        """Close the link (and stop trying to open it)."""
        if self._retry is not None:
            self._retry.cancel()
        if self.link is not None:
            with contextlib.suppress(Exception):
                await self.link.close()

    # -- board → referee -------------------------------------------------------------------
    def _on_event(self, ev: LinkEvent) -> None:
        svc = self.service
        if isinstance(ev, LinkHealth):
            (log.warning if ev.kind == "board_link_unusable" else log.info)("%s", ev.reason)
            svc.notice(ev.kind, reason=ev.reason, damaged=ev.damaged, frames=ev.frames)
            return
        if isinstance(ev, LinkStatus):
            if ev.kind == "board_offline":
                log.warning("the table board is offline: %s", ev.reason)
            else:
                log.info("the table board is online (%s)", ev.reason)
            svc.notice(ev.kind, reason=ev.reason)
            if ev.kind == "board_offline" and not svc.paused:
                self._paused_by_us = True
                svc.pause()
            elif ev.kind == "board_online" and self._paused_by_us:
                self._paused_by_us = False
                svc.resume()
            return
        if isinstance(ev, BoardError):
            log.warning("table board error %d: %s", ev.code, ev.text)
            svc.notice("board_error", code=ev.code, text=ev.text)
            return
        inp = self.to_input(ev, svc.state())
        if inp is not None:
            svc.submit(inp)

    def to_input(self, ev: BoardEvent, state: dict[str, Any]) -> Input | None:
        """The journal input for a board event given the table state (None: no input)."""
        if ev.kind == "button":
            if not ev.pressed:
                return None
            button = ev.button if ev.button is not None else -1
            if not 0 <= button < len(self.buttons):
                self.service.notice("unknown_button", button=button)
                return None
            return Input(ev.t, self.buttons[button], "slap")
        if ev.card is None:
            self.service.notice("unknown_tag", tag=ev.tag_hex, reader=ev.reader)
            return None
        in_rounds = games[str(state.get("game"))].in_rounds
        drawing = in_rounds and ev.reader == self.stock_reader
        seat = None if drawing else self._owner(ev.card, state)
        if seat is None:
            seat = state.get("must_draw")
        if seat is None:
            seat = state.get("turn")
        if seat is None:
            self.service.notice("ignored", card=str(ev.card), reason="nobody is to play",
                                why="nobody_to_play")
            return None
        if in_rounds:
            if drawing:
                return Input(ev.t, seat, "draw", card=ev.card)
            return Input(ev.t, seat, "play", cards=(ev.card,))
        return Input(ev.t, seat, "lay", card=ev.card)

    def _owner(self, card: Any, state: dict[str, Any]) -> int | None:
        """The seat the card came from, when the referee knows it (the top of a known stack,
        or a card in a known hand): a single reader at the centre cannot tell who laid a card,
        and the seat whose turn it is may have changed (a slap) since the player reached out."""
        table = getattr(self.service, "table", None)
        return None if table is None else table.engine.holder(card)

    # -- referee → board -------------------------------------------------------------------
    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """Light the seat to act (or the winner of a pile) on the board's LEDs."""
        if self.link is None or not self.link.online:
            return
        want: dict[int, tuple[int, int, int]] = {}
        winners = [v.get("seat") for v in verdicts if v.verdict == "pile_won"]
        if state.get("winners"):
            want = {w: WIN_RGB for w in state["winners"]}
        elif winners and winners[-1] is not None:
            want = {winners[-1]: WIN_RGB}
        elif state.get("turn") is not None:
            want = {state["turn"]: TURN_RGB}
        for seat in set(self._lit) | set(want):
            rgb = want.get(seat, OFF_RGB)
            if self._lit.get(seat, OFF_RGB) != rgb:
                self.link.set_led(seat, rgb)
                self._lit[seat] = rgb
