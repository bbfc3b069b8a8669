"""The table check: one page that answers "is this table ready?" (``/operator/`` → Check).

- every pad pressed lights its seat on the page, with the time its edge was stamped and how
  long the press took to reach the referee (every input handed in is seen through the
  service's ``watchers``; pressed while the game is paused, a press is not a slap);
- each seat's LED lit for a moment (the GPIO LEDs and the board's);
- the board link: online or not, the board's name, the clock sync's error bound and drift;
- the camera: its newest frame with the card outline it found and the card it read drawn on
  it (the frame the running camera edge read last: a camera cannot be opened twice);
- the broker (connected or not) and the pages following the table's display now.

Routes (paired phones; the changes with their token): ``GET /operator/api/check``,
``POST /operator/api/check/led`` ``{"seat": n}``, ``GET /operator/api/check/camera.jpg``.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import TYPE_CHECKING, Any

from aiohttp import web

from referee.describe import format_time
from referee.model import Input

if TYPE_CHECKING:
    from cardtable.operator.site import OperatorSite
    from cardtable.service import RefereeService

#: The acts a pad or a board button hands in.
PRESSES = ("slap", "call")

#: How long a seat's LED stays lit when asked (seconds).
LED_S = 1.5


class TableCheck:
    """The table check of one site (see the module's docstring)."""

    def __init__(self, site: OperatorSite, service: RefereeService) -> None:
        self.site = site
        self.service = service
        self._lock = threading.Lock()
        #: The newest press of each (seat, act): its edge time (table clock, ns) and the
        #: delay until the referee had it (ns), and when it came (wall clock).
        self.presses: dict[tuple[int, str], tuple[int, int, float]] = {}
        service.watchers.append(self._seen)
        r = site.app.router
        r.add_get("/operator/api/check", self.status)
        r.add_post("/operator/api/check/led", self.led)
        r.add_get("/operator/api/check/camera.jpg", self.camera)

    def _seen(self, inp: Input) -> None:
        """A pad or button pressed (on the edge's thread)."""
        if inp.act in PRESSES:
            delay = max(0, self.service.clock.now() - inp.t)
            with self._lock:
                self.presses[(inp.seat, inp.act)] = (inp.t, delay, time.time())

    def _edges(self, kind: str) -> list[Any]:
        return [e for e in self.service.edges if type(e).__name__ == kind]

    def report(self) -> dict[str, Any]:
        """Everything the check page shows, now."""
        svc = self.service
        seats = list(svc.state().get("seats") or svc.config.seats)
        wired = svc.config.raw.get("seats")
        pads = len(wired) if isinstance(wired, list) else 0
        with self._lock:
            presses = dict(self.presses)
        start = svc.table.inputs[0].t if svc.table is not None and svc.table.inputs else 0
        now = time.time()
        rows = []
        for seat in range(max(len(seats), pads)):
            row: dict[str, Any] = {"seat": seat, "name": seats[seat] if seat < len(seats)
                                   else None, "pad": seat < pads}  # None: the page names it
            for act in PRESSES:
                got = presses.get((seat, act))
                row[act] = None if got is None else {
                    "at": format_time(max(0, got[0] - start)), "t": got[0],
                    "delay_ms": round(got[1] / 1e6, 3), "ago_s": round(now - got[2], 1)}
            rows.append(row)
        return {"paused": svc.paused, "seats": rows, "leds": self._leds(),
                "board": self._board(), "camera": self._camera(), "broker": self._broker(),
                "displays": self.site.budget.open, "card_source": svc.config.card_source,
                "web_error": self.site.error}

    def _leds(self) -> dict[str, bool]:
        return {"gpio": any(type(o).__name__ == "SeatLeds" for o in self.service.outputs),
                "board": bool(self._edges("BoardEdge"))}

    def _board(self) -> dict[str, Any] | None:
        found = self._edges("BoardEdge")
        if not found:
            return None
        edge = found[0]
        link = edge.link
        out: dict[str, Any] = {"port": edge.port, "online": bool(link and link.online),
                               "name": None, "synced": False, "error_us": None,
                               "drift_ppm": None, "exchanges": 0}
        if link is None:
            return out
        board = link.board
        out["name"] = getattr(board, "name", None)
        clock = link.clock
        out["exchanges"] = getattr(clock, "exchanges", 0)
        if getattr(clock, "synced", False):
            out["synced"] = True
            try:
                out["error_us"] = round(clock.error_bound_ns() / 1000, 1)
                fit = clock.estimate
                out["drift_ppm"] = round((fit.ns_per_tick / clock.tick_ns - 1) * 1e6, 1)
            except Exception:  # a fit in the middle of being replaced: said next time
                pass
        return out

    def _camera(self) -> dict[str, Any] | None:
        found = self._edges("CameraEdge")
        if not found:
            return None
        edge = found[0]
        read = getattr(edge, "last_read", None)
        return {"frames": edge.frames_read,
                "card": None if read is None or read.card is None else str(read.card),
                "confidence": None if read is None else round(float(read.confidence), 2),
                "outline": read is not None and read.quad is not None}

    def _broker(self) -> dict[str, Any] | None:
        found: list[Any] = [o for o in self.service.outputs
                            if type(o).__name__ == "FeedOutput"]
        if not found:
            return None
        feed = found[0].feed
        return {"url": feed.broker.url(), "connected": feed.connected}

    # -- routes --------------------------------------------------------------------------------
    async def status(self, request: web.Request) -> web.StreamResponse:
        self.site.paired(request)
        return web.json_response(self.report())

    async def led(self, request: web.Request) -> web.StreamResponse:
        """Light one seat's LED (GPIO and board) for :data:`LED_S` seconds."""
        self.site.change(request)
        got = await self.site.body(request)
        seat = got.get("seat")
        n = len(self.service.config.seats)
        lang = self.site.lang(request)
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < n:
            return web.json_response({"ok": False, "text": lang.gettext("no seat {seat!r}").format(
                seat=seat)}, status=400)
        lit = []
        out: Any
        for out in self.service.outputs:
            if type(out).__name__ == "SeatLeds":
                out.on(seat)
                lit.append("GPIO")
        for edge in self._edges("BoardEdge"):
            if edge.link is not None and edge.link.online:
                edge.link.set_led(seat, (255, 255, 255))
                lit.append("board")
        if not lit:
            return web.json_response({"ok": False,
                                      "text": lang.gettext("this table has no seat LEDs")})
        asyncio.get_running_loop().call_later(LED_S, self._restore)
        name = self.service.config.seats[seat]
        return web.json_response({"ok": True, "text": lang.gettext(
            "{name}'s LED is lit ({where})").format(name=name, where=", ".join(lit))})

    def _restore(self) -> None:
        """The LEDs show the game again."""
        state = self.service.state()
        for out in self.service.outputs:
            if type(out).__name__ in ("SeatLeds", "BoardEdge"):
                try:
                    out.update([], state)
                except Exception:  # an LED that failed is said by its own output
                    pass

    async def camera(self, request: web.Request) -> web.StreamResponse:
        """The camera's newest frame with its read drawn on it (JPEG)."""
        self.site.paired(request)
        found = self._edges("CameraEdge")
        frame = getattr(found[0], "last_frame", None) if found else None
        read = getattr(found[0], "last_read", None) if found else None
        if frame is None:
            raise web.HTTPNotFound(text="no camera frame yet")
        import cv2

        from cardtable.operator.setup import draw_read

        image = frame.image.copy()
        if read is not None:
            draw_read(image, read)
        ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])
        if not ok:
            raise web.HTTPInternalServerError(text="the frame could not be encoded")
        return web.Response(body=bytes(jpeg.tobytes()), headers={"Content-Type": "image/jpeg"})
