"""The camera as a card source of ``cardtable.service.RefereeService``.

A thread reads frames from the source, the recogniser reads each one, the
:class:`~hardware.camera.reader.lays.LayTracker` turns the reads into lays, and each lay becomes an
input on the service's loop, stamped with the capture time of the first frame that showed the
card (on the table clock): a ``lay`` of the seat the card came from when the referee knows it,
else of the seat whose turn it is (the pile games), a one-card ``play`` in Vändåtta (the
camera films the discard pile). A top card that stays unreadable for ``unclear_s`` while
something new seems to lie there is reported once as an ``ignored`` notice asking the operator
to type the card at the console. A source that fails (unplugged, the video ended) is logged
and said once to the table (``camera_offline`` with the reason, ``alerts.camera`` on every
display, until a frame comes again: ``camera_online``); it is opened again every second.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
import time
from collections.abc import Callable
from typing import Any, Protocol

from hardware.camera.reader.lays import FRAMES, Lay, LayTracker
from hardware.camera.reader.recognise import Read, Recogniser
from hardware.camera.reader.sources import Frame, SourceError
from hardware.threads import background
from referee.games import games
from referee.model import Input

log = logging.getLogger("hardware.camera.edge")


class FrameSource(Protocol):
    """Anything with frames (each with its CLOCK_MONOTONIC capture time) and a close."""

    def frames(self) -> Any:
        """An iterator of :class:`~hardware.camera.reader.sources.Frame`."""

    def close(self) -> None:
        """Release the camera."""


class CameraEdge:
    """Lays seen by the camera, as inputs of the service."""

    #: Seconds between attempts to open a camera that failed or cannot be opened.
    retry_s = 1.0
    #: Seconds :meth:`stop` waits for the reading thread to let the camera go.
    stop_s = 5.0

    def __init__(self, open_source: Callable[[], FrameSource], recogniser: Recogniser, *,
                 frames: int = FRAMES, unclear_s: float = 1.5,
                 to_table: Callable[[int], int] | None = None) -> None:
        self.open_source = open_source
        self.recogniser = recogniser
        self.tracker = LayTracker(frames)
        self.unclear_s = unclear_s
        self.to_table = to_table
        self.service: Any = None
        self.loop: asyncio.AbstractEventLoop | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._source: FrameSource | None = None
        self._unclear_since: int | None = None
        self._gone = False  # camera_offline was said, and no frame came since
        self._asked = False
        self._progress: int | None = None
        #: (capture time, lay) of each lay seen, and delivery delay in ns (for benches)
        self.seen: list[tuple[Lay, int]] = []
        self.frames_read = 0
        #: The newest frame and what was read in it (None before the first).
        self.last_frame: Frame | None = None
        self.last_read: Read | None = None

    async def start(self, service: Any) -> None:
        """Start the reading thread."""
        self.service = service
        self.loop = asyncio.get_running_loop()
        self._thread = threading.Thread(target=self._run, name="camera", daemon=True)
        self._thread.start()

    async def stop(self) -> None:
        """Stop reading and release the camera."""
        self._stop.set()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, self.stop_s)
            if self._thread.is_alive():  # a driver that hangs in a read or a close
                log.warning("the camera did not let go within %g s (its driver does not "
                            "answer): the table stops without waiting for it", self.stop_s)

    # -- the reading thread -------------------------------------------------------------------
    def _run(self) -> None:
        background()  # reading frames is steady work: never ahead of the judging loop
        while not self._stop.is_set():
            try:
                self._source = self.open_source()
            except (SourceError, OSError) as exc:
                log.warning("the camera cannot be opened: %s", exc)
                self._offline(str(exc))
                if self._stop.wait(self.retry_s):
                    return
                continue
            try:
                for frame in self._source.frames():
                    if self._stop.is_set():
                        break
                    self.process(frame, self.recogniser.read(frame.image))
                    self._online()  # after a frame was read: a reader that fails never flaps
                else:
                    if not self._stop.is_set():
                        self._offline("no more frames")
            except Exception as exc:  # a camera failing mid-stream: log it, open it again
                log.warning("the camera stopped: %s", exc)
                self._offline(str(exc) or type(exc).__name__)
            finally:
                with contextlib.suppress(Exception):
                    self._source.close()
            if self._stop.wait(self.retry_s):
                return

    def _offline(self, reason: str) -> None:
        """Tell the table once that the camera stopped (every display's alerts say so until it
        is back): the cards can be typed at the console meanwhile."""
        if not self._gone and self.service is not None:
            self._gone = True
            self._call(self.service.notice, "camera_offline", reason=reason)

    def _online(self) -> None:
        if self._gone:
            self._gone = False
            self._call(self.service.notice, "camera_online")

    def process(self, frame: Frame, read: Read) -> Lay | None:
        """One frame's read; hands a completed lay to the service's loop."""
        self.frames_read += 1
        self.last_frame, self.last_read = frame, read  # for the table check's picture
        lay = self.tracker.feed(frame.t, read.card)
        if read.card is None and read.quad is not None:
            if self._unclear_since is None:
                self._unclear_since = frame.t
            elif (not self._asked
                  and frame.t - self._unclear_since > self.unclear_s * 1e9):
                self._asked = True
                self._call(self.service.notice, "ignored", reason=(
                    "the camera gives no colour, so red and black suits cannot be told apart: "
                    "set it to colour; if a card was laid, type it at the console"
                    if read.reason == "no colour" else
                    "the camera cannot read the top card; if a card was laid, "
                    "type it at the console"))
        elif read.card is not None:
            self._unclear_since, self._asked = None, False
        if lay is not None:
            self.seen.append((lay, time.monotonic_ns() - lay.t))
            self._call(self._deliver, lay)
        # Every lay still to come is stamped at or after this (handed in after the lays above).
        pending = self.tracker.pending_since
        self._call(self._advance, frame.t if pending is None else pending - 1)
        return lay

    def _call(self, fn: Callable[..., Any], *args: Any, **kw: Any) -> None:
        if self.loop is None:
            fn(*args, **kw)
            return
        with contextlib.suppress(RuntimeError):  # the loop has closed
            self.loop.call_soon_threadsafe(lambda: fn(*args, **kw))

    # -- on the service's loop ----------------------------------------------------------------
    #: The name of this edge as a source of the arbiter (``cardtable.service.Source``).
    source = "camera"

    def progress(self) -> int | None:
        """The table time up to which every lay this camera will see has been submitted (None
        before the first frame)."""
        return None if self._progress is None else self.table_time(self._progress)

    def _advance(self, mono_ns: int) -> None:
        self._progress = mono_ns if self._progress is None else max(self._progress, mono_ns)

    def _deliver(self, lay: Lay) -> None:
        svc = self.service
        inp = self.to_input(lay, svc.state())
        if inp is not None:
            svc.submit(inp)

    def table_time(self, mono_ns: int) -> int:
        """A capture time on the table clock."""
        if self.to_table is not None:
            return self.to_table(mono_ns)
        return int(self.service.clock.from_monotonic(mono_ns))

    def to_input(self, lay: Lay, state: dict[str, Any]) -> Input | None:
        """The journal input for a lay given the table state (None: nobody is to play)."""
        t = self.table_time(lay.t)
        table = getattr(self.service, "table", None)
        seat = None if table is None else table.engine.holder(lay.card)
        if seat is None:
            seat = state.get("turn")
        if seat is None:
            self.service.notice("ignored", card=str(lay.card), reason="nobody is to play",
                                why="nobody_to_play")
            return None
        if games[str(state.get("game"))].in_rounds:
            return Input(t, seat, "play", cards=(lay.card,))
        return Input(t, seat, "lay", card=lay.card)
