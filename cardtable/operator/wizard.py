"""The set-up wizard's page, ``/setup/``: the table's name and game, the names of the seats,
each pad learned by pressing it, the card source (the board found by probing the serial ports,
a camera with a preview, or the console), the broker (none needed: the table's own display is
served by the referee), then ``table.toml`` written (:mod:`.setup`).

It is served when ``referee run`` starts without its configuration (:class:`SetupSite`, until
the file is saved; then the referee starts with it), and from a running referee's operator page
(its changes are used once the referee is started again; the pads cannot be learned while the
table holds them). Paired phones only, as the operator page (:mod:`.guard`).

Routes: ``GET /setup/api/state``; ``POST /setup/api/learn`` ``{"seat", "role"}`` (waits for a
press), ``/setup/api/mock-press`` (the mock backend only: presses the next free line, to try
the wizard without hardware), ``/setup/api/probe``, ``/setup/api/save`` ``{"answers"}``;
``GET /setup/api/camera.jpg?source=…`` (a source of :func:`.setup.cameras`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from cardtable.errors import ConfigError
from cardtable.operator.guard import SHOW_CODE_S, GuardedSite, refusal
from cardtable.operator.setup import (
    CANDIDATE_LINES,
    LEARN_S,
    Answers,
    PadLearner,
    answers_of,
    camera_frame,
    cameras,
    probe_board,
    serial_ports,
    write_table,
)
from referee.games import games

if TYPE_CHECKING:
    from cardtable.service import RefereeService

log = logging.getLogger("cardtable.operator")

ROLES = ("slap", "call", "led")


class Wizard:
    """The wizard's routes on ``site``, writing ``path`` (None: nowhere to write: a table
    started without a file, as the full stack's). ``service``: the running table (pads are
    then not learned); ``pin_factory``: the GPIO to learn pads on (made from
    ``GPIOZERO_PIN_FACTORY``, default lgpio, when first needed); ``ports``: more serial ports
    to probe; ``on_saved``: called once the file is written."""

    def __init__(self, site: GuardedSite, path: Path | None, *,
                 service: RefereeService | None = None, pin_factory: Any = None,
                 ports: tuple[str, ...] = (),
                 on_saved: Callable[[Path], None] | None = None) -> None:
        self.site = site
        self.path = path
        self.service = service
        self.factory = pin_factory
        self.ports = ports
        self.on_saved = on_saved
        self._learning = asyncio.Lock()
        r = site.app.router
        r.add_get("/setup", self.to_page)
        r.add_get("/setup/", self.page)
        r.add_get("/setup/{name:[a-z]+\\.(js|css)}", self.asset)
        r.add_get("/setup/api/state", self.state)
        r.add_post("/setup/api/learn", self.learn)
        r.add_post("/setup/api/mock-press", self.mock_press)
        r.add_post("/setup/api/probe", self.probe)
        r.add_get("/setup/api/camera.jpg", self.camera)
        r.add_post("/setup/api/save", self.save)

    async def to_page(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPMovedPermanently("/setup/")

    async def page(self, request: web.Request) -> web.StreamResponse:
        return self.site.page("setup.html")

    async def asset(self, request: web.Request) -> web.StreamResponse:
        return self.site.page(request.match_info["name"])

    def _why_no_learning(self) -> str | None:
        if self.service is not None:
            return ("the running table holds the pads: to learn them again, stop the referee "
                    "and start it with --setup")
        return None

    def _pin_factory(self) -> Any:
        if self.factory is None:
            from hardware.config import HardwareConfig
            from hardware.pins import make_pin_factory

            name = os.environ.get("GPIOZERO_PIN_FACTORY", "lgpio")
            self.factory = make_pin_factory(HardwareConfig(seats=(), pin_factory=name))
        return self.factory

    def _is_mock(self) -> bool:
        factory = self.factory
        if factory is None:
            return os.environ.get("GPIOZERO_PIN_FACTORY") == "mock"
        return type(factory).__name__.endswith("MockFactory")

    async def state(self, request: web.Request) -> web.StreamResponse:
        self.site.paired(request)
        answers = answers_of(self.path) if self.path is not None else Answers()
        if self._is_mock():
            answers.pin_factory = "mock"
        return web.json_response({
            "path": None if self.path is None else str(self.path),
            "exists": self.path is not None and self.path.exists(),
            "answers": answers.to_json(), "running": self.service is not None,
            "learn": self._why_no_learning(), "mock": self._is_mock(),
            "learn_s": LEARN_S, "cameras": cameras(),
            "games": [{"name": g.name, "title": g.title, "min_seats": g.min_seats,
                       "max_seats": g.max_seats} for g in games.values()],
        })

    async def learn(self, request: web.Request) -> web.StreamResponse:
        """Wait for a press on a free line: it is that seat's pad."""
        self.site.change(request)
        got = await self.site.body(request)
        why = self._why_no_learning()
        if why is not None:
            return refusal(409, why)
        seat, role = got.get("seat"), got.get("role", "slap")
        taken = got.get("taken") or []
        if (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < 8
                or role not in ("slap", "call")
                or not all(isinstance(t, int) and not isinstance(t, bool) for t in taken)):
            return refusal(400, "which seat's slap or call pad?")
        if self._learning.locked():
            return refusal(409, "another pad is being learned: press it first")
        try:
            factory = self._pin_factory()
        except Exception as exc:  # no GPIO on this machine, or not allowed
            return refusal(503, f"the GPIO cannot be used here ({exc}); to try the wizard "
                           "without hardware, start it with GPIOZERO_PIN_FACTORY=mock")
        async with self._learning:
            line = await PadLearner(factory).learn(taken)
        if line is None:
            return web.json_response({"ok": False, "text": f"no pad was pressed in "
                                      f"{LEARN_S:g} s: try again"})
        return web.json_response({"ok": True, "line": line,
                                  "text": f"seat {seat + 1}'s {role} pad is GPIO {line}"})

    async def mock_press(self, request: web.Request) -> web.StreamResponse:
        """The mock backend: press the first free line (as a person presses a pad)."""
        self.site.change(request)
        got = await self.site.body(request)
        if not self._is_mock() or self.factory is None:
            return refusal(409, "only the mock backend has pads to press from here")
        taken = set(got.get("taken") or [])
        line = next((n for n in CANDIDATE_LINES if n not in taken), None)
        if line is None:
            return refusal(409, "every line is taken")
        pin = self.factory.pin(line)
        pin.drive_low()
        await asyncio.sleep(0.05)
        pin.drive_high()
        return web.json_response({"ok": True, "text": f"pressed GPIO {line} (mock)"})

    async def probe(self, request: web.Request) -> web.StreamResponse:
        """Ask every serial port for the board."""
        self.site.change(request)
        ports = list(dict.fromkeys([*self.ports, *serial_ports()]))
        in_use = {getattr(e, "port", None) for e in (self.service.edges if self.service
                                                     else [])}
        found = await probe_board([p for p in ports if p not in in_use])
        found += [{"port": p, "board": "the board this table uses now"}
                  for p in ports if p in in_use]
        text = (f"found a board on {', '.join(f['port'] for f in found)}" if found else
                f"no board answered on {len(ports)} serial port{'s' * (len(ports) != 1)}"
                if ports else "this machine has no serial port a board could be on")
        return web.json_response({"ok": bool(found), "text": text, "boards": found,
                                  "ports": ports})

    async def camera(self, request: web.Request) -> web.StreamResponse:
        """A preview frame of one of this machine's cameras (never another file or address)."""
        self.site.paired(request)
        source = request.query.get("source", "")
        answers = answers_of(self.path) if self.path is not None else Answers()
        if source not in (*cameras(), "picamera", answers.camera_source or "/dev/video0"):
            return refusal(400, "not a camera of this machine")
        try:
            jpeg = await asyncio.to_thread(camera_frame, source)
        except ImportError:
            return refusal(503, "the camera extra is not installed "
                           "(python3 -m pip install 'card-referee[camera]')")
        except (OSError, ValueError) as exc:
            return refusal(503, f"{source}: {exc}")
        return web.Response(body=jpeg, headers={"Content-Type": "image/jpeg"})

    async def save(self, request: web.Request) -> web.StreamResponse:
        """Write the answers to the configuration file (checked first)."""
        self.site.change(request)
        got = await self.site.body(request)
        if self.path is None:
            return refusal(409, "this table was started without a configuration file: "
                           "there is none to write")
        try:
            answers = Answers.from_json(got.get("answers"))
            kept = await asyncio.to_thread(write_table, self.path, answers)
        except ConfigError as exc:
            return refusal(400, f"{exc.key}: {exc.reason}" if exc.key else exc.reason)
        except ValueError as exc:
            return refusal(400, str(exc))
        except OSError as exc:
            return refusal(500, f"cannot write {self.path}: {exc.strerror or exc}")
        text = f"saved {self.path.name}"
        if kept is not None:
            text += f" (the one before is kept as {kept.name})"
        text += (": restart the referee to use it" if self.service is not None
                 else ": the table starts now")
        log.warning("set-up: %s", text)
        if self.on_saved is not None:
            asyncio.get_running_loop().call_later(0.3, self.on_saved, self.path)
        return web.json_response({"ok": True, "text": text})


class SetupSite(GuardedSite):
    """The wizard alone, for ``referee run`` started without its configuration: ``/`` and
    ``/operator/`` lead to ``/setup/``; :meth:`run` serves until the file is saved."""

    def __init__(self, path: Path, *, host: str = "127.0.0.1", port: int = 0,
                 announce: Callable[[str], None] | None = None, pin_factory: Any = None,
                 ports: tuple[str, ...] = (), clock: Callable[[], float] = time.time) -> None:
        # The paired phones are kept where the table's journals will be (the default folder),
        # so the phone that set the table up stays paired once it runs.
        super().__init__(host=host, port=port, pairing_folder=path.parent / "journals",
                         clock=clock, announce=announce)
        self.saved: asyncio.Future[Path] | None = None
        self.wizard = Wizard(self, path, pin_factory=pin_factory, ports=ports,
                             on_saved=self._saved)
        for where in ("/", "/operator", "/operator/"):
            self.app.router.add_get(where, self._to_setup)
        self.show_code(SHOW_CODE_S * 12)  # nobody is paired before the set-up

    async def _to_setup(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPSeeOther("/setup/")

    def _saved(self, path: Path) -> None:
        if self.saved is not None and not self.saved.done():
            self.saved.set_result(path)

    async def run(self) -> Path | None:
        """Serve until the configuration is saved (its path), or None when the address
        cannot be used."""
        self.saved = asyncio.get_running_loop().create_future()
        if not await self.listen("set-up wizard: {base}setup/ (no configuration yet)"):
            return None
        try:
            return await self.saved
        finally:
            with contextlib.suppress(Exception):
                await self.server.stop()
