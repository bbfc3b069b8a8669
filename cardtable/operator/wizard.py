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
``GET /setup/api/camera.jpg?source=…`` (a source of :func:`.setup.cameras`); a deck enrolled
from the camera (:mod:`.enrolment`): ``POST /setup/api/enrol`` ``{"source"}`` starts,
``GET /setup/api/enrol`` says how far it is, ``GET /setup/api/enrol.jpg`` what the camera
sees, ``POST /setup/api/enrol/stop`` stops, ``POST /setup/api/enrol/write`` writes again a deck
the disk refused.
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

from cardtable.config import load_config
from cardtable.display.web import catalog, web_files
from cardtable.errors import ConfigError
from cardtable.i18n import Language, Words, language_names, os_words, said
from cardtable.operator.enrolment import Enrolment
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
    web_camera,
    write_table,
)
from referee.games import games

if TYPE_CHECKING:
    from cardtable.service import RefereeService

log = logging.getLogger("cardtable.operator")

ROLES = ("slap", "call", "led")


def _lines(taken: object) -> set[int] | None:
    """The GPIO lines a page says are taken (a list of whole numbers; none: no list), or None
    for anything else (a number, a list of lists: they had answered 500)."""
    if taken is None:
        return set()
    if not isinstance(taken, list) or not all(
            isinstance(t, int) and not isinstance(t, bool) for t in taken):
        return None
    return set(taken)


def _not_a_deck(path: Path) -> Words | str | None:
    """Why ``path`` is not a deck file the table can read (None: it is one), checked as
    ``referee run`` loads it (:func:`cardtable.wiring.camera_edge`)."""
    try:
        from hardware.camera.reader.templates import EnrolledDeck
    except ImportError:
        return "the camera extra is not installed"
    try:
        EnrolledDeck.load(path)
    except OSError as exc:
        return os_words(exc)
    except ValueError as exc:
        return str(exc).removeprefix(f"{path} ")
    return None


def camera_refused(source: str, exc: Exception, lang: Language) -> web.Response:
    """Why a camera of this machine could not be opened for the page (503), in its words."""
    if isinstance(exc, ImportError):
        return refusal(503, lang.gettext("the camera extra is not installed (python3 -m pip "
                                         "install 'card-referee[camera]')"))
    from hardware.camera.reader.sources import CannotOpen, NoPicamera  # the extra is there

    if isinstance(exc, NoPicamera):
        text = lang.gettext("picamera2 is not installed (on the Pi: apt install "
                            "python3-picamera2, and a venv with --system-site-packages)")
    elif isinstance(exc, CannotOpen):
        text = lang.gettext("the camera {source} cannot be opened: is it plugged in, and not "
                            "in use by another program?").format(source=source)
    elif isinstance(exc, OSError) and exc.errno is not None:
        text = lang.gettext("the camera {source} cannot be opened ({why})").format(
            source=source, why=said(os_words(exc), lang))
    else:  # the camera layer's own words (a video file that is not there)
        text = f"{source}: {exc}"
    return refusal(503, text)


class Wizard:
    """The wizard's routes on ``site``, writing ``path`` (None: nowhere to write: a table
    started without a file, as the full stack's). ``service``: the running table (pads are
    then not learned); ``pin_factory``: the GPIO to learn pads on (made from
    ``GPIOZERO_PIN_FACTORY``, default lgpio, when first needed); ``ports``: more serial ports
    to probe; ``on_saved``: called once the file is written; ``camera_opener``: opens a camera
    to enrol a deck from (default: the camera extra's ``open_source``)."""

    def __init__(self, site: GuardedSite, path: Path | None, *,
                 service: RefereeService | None = None, pin_factory: Any = None,
                 ports: tuple[str, ...] = (),
                 on_saved: Callable[[Path], None] | None = None,
                 camera_opener: Callable[[str], Any] | None = None) -> None:
        self.site = site
        self.path = path
        self.service = service
        self.factory = pin_factory
        self.ports = ports
        self.on_saved = on_saved
        self._learning = asyncio.Lock()
        self.enrolment = Enrolment(path.parent if path is not None else Path("."),
                                   opener=camera_opener)
        r = site.app.router
        r.add_get("/setup", self.to_page)
        r.add_get("/setup/", self.page)
        r.add_get("/setup/{name:[a-z0-9]+\\.(js|css)}", self.asset)
        r.add_get("/setup/catalog.json", catalog)
        r.add_get("/setup/api/state", self.state)
        r.add_post("/setup/api/learn", self.learn)
        r.add_post("/setup/api/mock-press", self.mock_press)
        r.add_post("/setup/api/probe", self.probe)
        r.add_get("/setup/api/camera.jpg", self.camera)
        r.add_post("/setup/api/save", self.save)
        r.add_get("/setup/api/enrol", self.enrol_status)
        r.add_post("/setup/api/enrol", self.enrol)
        r.add_post("/setup/api/enrol/stop", self.enrol_stop)
        r.add_post("/setup/api/enrol/write", self.enrol_write)
        r.add_get("/setup/api/enrol.jpg", self.enrol_picture)

    async def to_page(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPMovedPermanently("/setup/")

    async def page(self, request: web.Request) -> web.StreamResponse:
        return self.site.page("setup.html")

    async def asset(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name == "i18n.js":  # the pages' words, shared with the display
            return web_files().response(name)
        return self.site.page(name)

    def _why_no_learning(self, lang: Language) -> str | None:
        if self.service is not None:
            return lang.gettext("the running table holds the pads: to learn them again, stop "
                                "the referee and start it with --setup")
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
            "learn": self._why_no_learning(self.site.lang(request)), "mock": self._is_mock(),
            "languages": language_names(),
            "learn_s": LEARN_S, "cameras": cameras(),
            "enrolment": self.enrolment.status(self.site.lang(request)),
            "enrol": self._why_no_enrolment(self.site.lang(request)),
            "games": [{"name": g.name, "title": g.title, "min_seats": g.min_seats,
                       "max_seats": g.max_seats} for g in games.values()],
        })

    async def learn(self, request: web.Request) -> web.StreamResponse:
        """Wait for a press on a free line: it is that seat's pad."""
        self.site.change(request)
        got = await self.site.body(request)
        lang = self.site.lang(request)
        why = self._why_no_learning(lang)
        if why is not None:
            return refusal(409, why)
        seat, role = got.get("seat"), got.get("role", "slap")
        taken = _lines(got.get("taken"))
        if (isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < 8
                or role not in ("slap", "call") or taken is None):
            return refusal(400, lang.gettext("which seat's slap or call pad?"))
        if all(n in taken for n in CANDIDATE_LINES):  # nothing to watch: said at once
            return refusal(409, lang.gettext("every line is taken"))
        if self._learning.locked():
            return refusal(409, lang.gettext("another pad is being learned: press it first"))
        try:
            factory = self._pin_factory()
        except Exception as exc:  # no GPIO on this machine, or not allowed
            return refusal(503, lang.gettext(
                "the GPIO cannot be used here ({why}); to try the wizard without hardware, "
                "start it with GPIOZERO_PIN_FACTORY=mock").format(why=exc))
        async with self._learning:
            line = await PadLearner(factory).learn(taken)
        if line is None:
            return web.json_response({"ok": False, "text": lang.gettext(
                "no pad was pressed in {seconds} s: try again").format(seconds=f"{LEARN_S:g}")})
        text = (lang.gettext("seat {number}'s slap pad is GPIO {line}") if role == "slap" else
                lang.gettext("seat {number}'s call pad is GPIO {line}"))
        return web.json_response({"ok": True, "line": line,
                                  "text": text.format(number=seat + 1, line=line)})

    async def mock_press(self, request: web.Request) -> web.StreamResponse:
        """The mock backend: press the first free line (as a person presses a pad)."""
        self.site.change(request)
        got = await self.site.body(request)
        lang = self.site.lang(request)
        if not self._is_mock() or self.factory is None:
            return refusal(409, lang.gettext("only the mock backend has pads to press from here"))
        taken = _lines(got.get("taken"))
        if taken is None:
            return refusal(400, lang.gettext("which lines are taken?"))
        line = next((n for n in CANDIDATE_LINES if n not in taken), None)
        if line is None:
            return refusal(409, lang.gettext("every line is taken"))
        pin = self.factory.pin(line)
        pin.drive_low()
        await asyncio.sleep(0.05)
        pin.drive_high()
        return web.json_response({"ok": True, "text": lang.gettext(
            "pressed GPIO {line} (mock)").format(line=line)})

    async def probe(self, request: web.Request) -> web.StreamResponse:
        """Ask every serial port for the board."""
        self.site.change(request)
        lang = self.site.lang(request)
        ports = list(dict.fromkeys([*self.ports, *serial_ports()]))
        in_use = {getattr(e, "port", None) for e in (self.service.edges if self.service
                                                     else [])}
        found = await probe_board([p for p in ports if p not in in_use])
        found += [{"port": p, "board": lang.gettext("the board this table uses now")}
                  for p in ports if p in in_use]
        text = (lang.gettext("found a board on {ports}").format(
                    ports=", ".join(f["port"] for f in found)) if found else
                lang.ngettext("no board answered on {n} serial port",
                              "no board answered on {n} serial ports", len(ports)).format(
                    n=len(ports)) if ports else
                lang.gettext("this machine has no serial port a board could be on"))
        return web.json_response({"ok": bool(found), "text": text, "boards": found,
                                  "ports": ports})

    async def camera(self, request: web.Request) -> web.StreamResponse:
        """A preview frame of one of this machine's cameras (never another file or address)."""
        self.site.paired(request)
        source = request.query.get("source", "")
        if not web_camera(source):  # never a file or an address, whatever the file says
            return refusal(400, self.site.lang(request).gettext("not a camera of this machine"))
        try:
            jpeg = await asyncio.to_thread(camera_frame, source)
        except (ImportError, OSError, ValueError) as exc:
            return camera_refused(source, exc, self.site.lang(request))
        return web.Response(body=jpeg, headers={"Content-Type": "image/jpeg"})

    def _why_no_enrolment(self, lang: Language) -> str | None:
        if self.path is None:
            return lang.gettext("this table was started without a configuration file: there "
                                "is nowhere to keep a deck")
        if self.service is not None and self.service.config.card_source == "camera":
            return lang.gettext("the running table watches the camera: to enrol a deck, stop "
                                "the referee and start it with --setup")
        return None

    async def enrol_status(self, request: web.Request) -> web.StreamResponse:
        """How far the enrolment is (:meth:`.enrolment.Enrolment.status`)."""
        self.site.paired(request)
        return web.json_response(self.enrolment.status(self.site.lang(request)))

    async def enrol(self, request: web.Request) -> web.StreamResponse:
        """Start enrolling a deck from one of this machine's cameras."""
        self.site.change(request)
        got = await self.site.body(request)
        lang = self.site.lang(request)
        why = self._why_no_enrolment(lang)
        if why is not None:
            return refusal(409, why)
        source = got.get("source")
        if not isinstance(source, str) or not web_camera(source):
            return refusal(400, lang.gettext("not a camera of this machine"))
        try:
            await asyncio.to_thread(self.enrolment.start, source)
        except RuntimeError:
            return refusal(409, lang.gettext("a deck is being enrolled: finish or stop it "
                                             "first"))
        except (ImportError, OSError, ValueError) as exc:
            return camera_refused(source, exc, lang)
        return web.json_response({"ok": True, **self.enrolment.status(lang)})

    async def enrol_stop(self, request: web.Request) -> web.StreamResponse:
        """Stop the enrolment: nothing is written."""
        self.site.change(request)
        await self.site.body(request)
        self.enrolment.stop()
        return web.json_response({"ok": True})

    async def enrol_write(self, request: web.Request) -> web.StreamResponse:
        """Write again a deck the disk refused at the end of its enrolment."""
        self.site.change(request)
        await self.site.body(request)
        try:
            await asyncio.to_thread(self.enrolment.write_again)
        except RuntimeError:
            return refusal(409, self.site.lang(request).gettext(
                "there is no enrolled deck waiting to be written"))
        return web.json_response({"ok": True, **self.enrolment.status(self.site.lang(request))})

    async def enrol_picture(self, request: web.Request) -> web.StreamResponse:
        """What the camera saw last while enrolling (404 before its first frame)."""
        self.site.paired(request)
        jpeg = await asyncio.to_thread(self.enrolment.picture)
        if jpeg is None:
            return refusal(404, self.site.lang(request).gettext("no picture yet"))
        return web.Response(body=jpeg, headers={"Content-Type": "image/jpeg",
                                                "Cache-Control": "no-store"})

    async def save(self, request: web.Request) -> web.StreamResponse:
        """Write the answers to the configuration file (checked first)."""
        self.site.change(request)
        got = await self.site.body(request)
        lang = self.site.lang(request)
        if self.path is None:
            return refusal(409, lang.gettext("this table was started without a configuration "
                                             "file: there is none to write"))
        if self.enrolment.running():  # its deck would be lost, or written after the file
            return refusal(409, lang.gettext("a deck is being enrolled: finish or stop it "
                                             "first"))
        try:
            saved = answers_of(self.path)
            answers = Answers.from_json(got.get("answers"), saved=saved)
            deck = answers.camera_deck
            if (answers.card_source == "camera" and deck is not None
                    and deck != saved.camera_deck):
                why = await asyncio.to_thread(_not_a_deck, self.path.parent / deck)
                if why is not None:
                    return refusal(400, lang.gettext(
                        "camera_deck: {deck} cannot be used ({why}): enrol the deck "
                        "again").format(deck=deck, why=said(why, lang)))
            kept = await asyncio.to_thread(write_table, self.path, answers)
        except ConfigError as exc:
            return refusal(400, f"{exc.key}: {exc.reason}" if exc.key else exc.reason)
        except ValueError as exc:
            return refusal(400, str(exc))
        except OSError as exc:
            return refusal(500, lang.gettext("cannot write {path}: {why}").format(
                path=self.path, why=said(os_words(exc), lang)))
        if kept is None:
            text = (lang.gettext("saved {name}: restart the referee to use it")
                    if self.service is not None else
                    lang.gettext("saved {name}: the table starts now")).format(
                name=self.path.name)
        else:
            text = (lang.gettext("saved {name} (the one before is kept as {kept}): restart "
                                 "the referee to use it") if self.service is not None else
                    lang.gettext("saved {name} (the one before is kept as {kept}): the table "
                                 "starts now")).format(name=self.path.name, kept=kept.name)
        log.warning("set-up: %s", text)
        if self.on_saved is not None:
            asyncio.get_running_loop().call_later(0.3, self.on_saved, self.path)
        return web.json_response({"ok": True, "text": text})


class SetupSite(GuardedSite):
    """The wizard alone, for ``referee run`` started without its configuration: ``/`` and
    ``/operator/`` lead to ``/setup/``; :meth:`run` serves until the file is saved."""

    def __init__(self, path: Path, *, host: str = "127.0.0.1", port: int = 0,
                 hosts: tuple[str, ...] = (), journal_dir: Path | None = None,
                 announce: Callable[[str], None] | None = None, pin_factory: Any = None,
                 ports: tuple[str, ...] = (), clock: Callable[[], float] = time.time,
                 camera_opener: Callable[[str], Any] | None = None) -> None:
        # The paired phones are kept where the table's journals will be (``journal_dir``,
        # default the folder the wizard offers), so the phone that set the table up stays
        # paired once it runs.
        super().__init__(host=host, port=port, hosts=hosts,
                         pairing_folder=journal_dir or path.parent / "journals", clock=clock,
                         announce=announce)
        self.saved: asyncio.Future[Path] | None = None
        self.wizard = Wizard(self, path, pin_factory=pin_factory, ports=ports,
                             on_saved=self._saved, camera_opener=camera_opener)
        for where in ("/", "/operator", "/operator/"):
            self.app.router.add_get(where, self._to_setup)
        self.show_code(SHOW_CODE_S * 12)  # nobody is paired before the set-up

    async def _to_setup(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPSeeOther("/setup/")

    def _saved(self, path: Path) -> None:
        try:  # the phones paired here follow the table to its journal folder
            self.pairing.keep_in(load_config(path).journal_dir)
        except ConfigError as exc:  # checked before it was written: not expected
            log.warning("set-up: %s", exc)
        if self.saved is not None and not self.saved.done():
            self.saved.set_result(path)

    async def run(self) -> Path | None:
        """Serve until the configuration is saved (its path), or None when the address
        cannot be used."""
        self.saved = asyncio.get_running_loop().create_future()
        state = (f"changing {self.wizard.path.name}" if self.wizard.path is not None
                 and self.wizard.path.exists() else "no configuration yet")
        if not await self.listen(f"set-up wizard: {{base}}setup/ ({state})"):
            return None
        try:
            return await self.saved
        finally:
            # a deck still being enrolled lets the camera go before the table opens it
            self.wizard.enrolment.stop()
            await asyncio.to_thread(self.wizard.enrolment.join, 5.0)
            with contextlib.suppress(Exception):
                await self.server.stop()
