"""The web site of ``referee run`` (and ``referee simulate --full-stack --operator``): the
table's own display at ``/`` (open, read-only), and the operator page at ``/operator/`` with its
JSON API under ``/operator/api/`` (paired phones only; docs/security.md, docs/operator.md).

:class:`OperatorSite` is an edge of the service: it starts listening when the service starts
and stops with it, in the service's own asyncio loop. Every change the page asks for goes
through :func:`cardtable.operations.operate`, the console's path, as the paired phone's name.

Guards, in order, on every ``/operator`` request: the ``Host`` must name this machine (an IP
address, ``localhost``, the machine's name or a name of ``[web] hosts``: a page of another
site that points its name at the table, DNS rebinding, gets 421); then, but for pairing
itself, a paired session (401 otherwise); and on every change (POST), the page's own origin
(``Origin`` as the ``Host``: 403 otherwise) and the phone's CSRF token in ``X-CSRF-Token``
(403 otherwise). A refusal is JSON ``{"ok": false, "text": …}`` in words.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import segno
from aiohttp import web

from cardtable.display.web import add_display_routes, web_files
from cardtable.errors import PairingRefused
from cardtable.operations import game_running, operate, read_log
from cardtable.operator.local import LocalDisplay
from cardtable.operator.pairing import Device, Pairing
from cardtable.webserver import StaticFiles, StreamBudget, WebServer, new_app
from referee.games import games
from referee.options import option_specs, options_to_json

if TYPE_CHECKING:
    from cardtable.service import RefereeService

log = logging.getLogger("cardtable.operator")

#: The operator page's own files.
OPERATOR_DIR = Path(__file__).with_name("web")

#: Files of the display the operator page loads too (the race, the standings).
SHARED = ("race.js", "race.css", "standings.js", "standings.css")

COOKIE = "referee_session"

#: How long the table's display shows the pairing code after it was asked for (seconds).
SHOW_CODE_S = 300.0

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def lan_address() -> str:
    """This machine's address for phones on its network, from its own name (no packet sent);
    ``127.0.0.1`` when the name gives none."""
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
    except OSError:
        return "127.0.0.1"
    for info in infos:
        address = str(info[4][0])
        if not address.startswith("127."):
            return address
    return "127.0.0.1"


def host_names() -> set[str]:
    """The names this machine answers to without further configuration."""
    name = socket.gethostname().lower()
    return {"localhost", name, f"{name}.local"}


def is_loopback(remote: str | None) -> bool:
    """Whether a client connects from this very machine (the table's own screen)."""
    try:
        return remote is not None and ipaddress.ip_address(remote).is_loopback
    except ValueError:
        return False


def _refusal(status: int, text: str) -> web.Response:
    return web.json_response({"ok": False, "text": text}, status=status)


class OperatorSite:
    """The table's web site, an edge of the service (see the module's docstring).

    ``host``/``port``: where to listen (port 0 picks a free one); ``hosts``: more names the
    ``Host`` header may give; ``pairing_folder``: where the paired phones are kept (None: in
    memory); ``clock``: wall-clock seconds (the tests move it)."""

    #: It submits no input (cardtable.service.Source).
    own_stamps = False

    def __init__(self, service: RefereeService, *, host: str = "127.0.0.1", port: int = 0,
                 hosts: tuple[str, ...] = (), pairing_folder: Path | None = None,
                 clock: Callable[[], float] = time.time,
                 announce: Callable[[str], None] | None = None,
                 max_streams: int | None = None) -> None:
        self.service = service
        self.clock = clock
        self.announce = announce
        self.budget = StreamBudget(max_streams)
        self.display = LocalDisplay(service.config.table_id, self.budget)
        self.pairing = Pairing(pairing_folder, clock())
        self.allowed_hosts = host_names() | {h.lower() for h in hosts}
        #: The table's display shows the code until then (wall-clock seconds).
        self.show_code_until = 0.0
        self.files = StaticFiles(OPERATOR_DIR)
        shared = web_files()
        self.shared = {name: shared.files[name] for name in SHARED}
        app = new_app()
        app.middlewares.append(self._guard)
        add_display_routes(app, "/", lambda request: self.display.stream)
        self._routes(app)
        self.server = WebServer(app, host, port)
        self.server.on_stop.append(self.display.stream.close)
        if not self.pairing.devices:  # the first phone: the table's screen shows the code
            self.show_code(SHOW_CODE_S)
        #: Why the pages are not served (None: they are, or not started yet).
        self.error: str | None = None

    # -- the edge ------------------------------------------------------------------------------
    async def start(self, service: RefereeService) -> None:
        """Listen, and say where (with the pairing code and address). An address that cannot
        be used is said in the log, and the table goes on without its pages (refereeing comes
        first)."""
        await self.display.start(service)
        try:
            await self.server.start()
        except OSError as exc:
            self.error = (f"cannot serve the table's pages on {self.server.host}:"
                          f"{self.server.port} ({exc.strerror or exc}); the table goes on "
                          "without them ([web] bind and port)")
            log.error("%s", self.error)
            if self.announce is not None:
                self.announce(self.error)
            return
        self._announce()

    def show_code(self, seconds: float) -> None:
        """Let the table's own screen show the pairing code for ``seconds`` (0: stop now)."""
        self.show_code_until = self.clock() + seconds if seconds > 0 else 0.0
        self.display.extra["pairing"] = self.show_code_until or None
        self.display.publish()

    async def stop(self) -> None:
        """Stop listening; end the pages' streams."""
        await self.display.stop()
        await self.server.stop()

    def update(self, verdicts: list[Any], state: dict[str, Any]) -> None:
        """As an output of the service: the display follows the table."""
        self.display.update(verdicts, state)

    @property
    def url(self) -> str:
        """The address of the site as this machine reaches it."""
        return self.server.url

    def public_base(self) -> str:
        """The address phones use: this machine's network address when listening on every
        address, else the address listened on."""
        host = self.server.host
        if host in ("0.0.0.0", "::", ""):
            host = lan_address()
        shown = f"[{host}]" if ":" in host else host
        return f"http://{shown}:{self.server.port}/"

    def pairing_url(self) -> str:
        """The QR code's address: the pairing page with the one-time token."""
        code = self.pairing.current(self.clock())
        return f"{self.public_base()}operator/pair?token={code.token}"

    def _announce(self) -> None:
        code = self.pairing.current(self.clock())
        lines = [f"operator page: {self.public_base()}operator/ (the table's display: "
                 f"{self.public_base()})",
                 f"pairing code {code.code}, or open {self.pairing_url()}"]
        for line in lines:  # said on the terminal already when there is an announce
            log.log(logging.INFO if self.announce else logging.WARNING, "%s", line)
        if self.announce is not None:
            qr = segno.make(self.pairing_url(), error="m")
            self.announce("\n".join([*lines, _terminal_qr(qr)]))

    # -- guards --------------------------------------------------------------------------------
    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path.startswith("/operator"):
            host = (request.host or "").lower()
            name = host.rsplit(":", 1)[0] if not host.endswith("]") else host
            name = name.strip("[]")
            if not self._host_ok(name):
                return _refusal(421, "this page answers to the table's own address only")
        return await handler(request)

    def _host_ok(self, name: str) -> bool:
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            return name in self.allowed_hosts

    def _device(self, request: web.Request) -> Device | None:
        return self.pairing.device(request.cookies.get(COOKIE), self.clock())

    def _paired(self, request: web.Request) -> Device:
        device = self._device(request)
        if device is None:
            raise web.HTTPUnauthorized(
                text='{"ok": false, "text": "this phone is not paired with the table"}',
                content_type="application/json")
        return device

    def _change(self, request: web.Request) -> Device:
        """A change: paired, from the page's own origin, with the phone's CSRF token."""
        device = self._paired(request)
        origin = request.headers.get("Origin")
        if origin is None or urlsplit(origin).netloc.lower() != (request.host or "").lower():
            raise web.HTTPForbidden(
                text='{"ok": false, "text": "refused: the request did not come from the '
                'operator page"}', content_type="application/json")
        if not self.pairing.csrf_ok(device, request.headers.get("X-CSRF-Token")):
            raise web.HTTPForbidden(
                text='{"ok": false, "text": "refused: the page\'s token is not this '
                'phone\'s (reload the page)"}', content_type="application/json")
        return device

    @staticmethod
    async def _body(request: web.Request) -> dict[str, Any]:
        try:
            body = await request.json()
        except ValueError:
            raise web.HTTPBadRequest(text='{"ok": false, "text": "not JSON"}',
                                     content_type="application/json") from None
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text='{"ok": false, "text": "not a JSON object"}',
                                     content_type="application/json")
        return body

    def _set_cookie(self, response: web.StreamResponse, device: Device) -> None:
        response.set_cookie(COOKIE, self.pairing.cookie(device), max_age=30 * 24 * 3600,
                            httponly=True, samesite="Strict", path="/")

    # -- routes --------------------------------------------------------------------------------
    def _routes(self, app: web.Application) -> None:
        r = app.router
        r.add_get("/pairing.json", self.pairing_json)
        r.add_get("/pairing.svg", self.pairing_svg)
        r.add_get("/operator", self.to_page)
        r.add_get("/operator/", self.page)
        r.add_get("/operator/{name:[a-z]+\\.(js|css)}", self.asset)
        r.add_get("/operator/pair", self.pair_link)
        r.add_get("/operator/api/session", self.session)
        r.add_post("/operator/api/pair", self.pair)
        r.add_post("/operator/api/show-code", self.ask_code)
        r.add_get("/operator/api/table", self.table)
        r.add_get("/operator/api/games", self.games)
        r.add_get("/operator/api/history", self.history)
        r.add_get("/operator/api/devices", self.devices)
        r.add_post("/operator/api/command", self.command)
        r.add_post("/operator/api/unpair", self.unpair)
        r.add_post("/operator/api/rename", self.rename)
        r.add_get("/operator/api/pairing", self.pairing_for_phone)

    async def to_page(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPMovedPermanently("/operator/")

    async def page(self, request: web.Request) -> web.StreamResponse:
        return self.files.response("operator.html")

    async def asset(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name in self.shared:
            body, kind = self.shared[name]
            return web.Response(body=body, headers={"Content-Type": kind})
        return self.files.response(name)

    async def pairing_json(self, request: web.Request) -> web.StreamResponse:
        """The code for the table's own screen: answered to this machine only, while pairing
        is asked for (404 otherwise: a display elsewhere never shows it)."""
        now = self.clock()
        if not is_loopback(request.remote) or now >= self.show_code_until:
            raise web.HTTPNotFound()
        code = self.pairing.current(now)
        return web.json_response({"code": code.code, "until": min(code.until,
                                                                  self.show_code_until),
                                  "url": f"{self.public_base()}operator/"})

    async def pairing_svg(self, request: web.Request) -> web.StreamResponse:
        if not is_loopback(request.remote) or self.clock() >= self.show_code_until:
            raise web.HTTPNotFound()
        return web.Response(body=_svg(self.pairing_url()),
                            headers={"Content-Type": "image/svg+xml"})

    async def pair_link(self, request: web.Request) -> web.StreamResponse:
        """The QR code's address: pair with its one-time token, then on to the page."""
        try:
            device = self.pairing.pair(token=request.query.get("token", ""),
                                       client=request.remote or "?", now=self.clock())
        except PairingRefused as exc:
            raise web.HTTPSeeOther(f"/operator/?refused={exc.args[0][:80]}") from None
        response = web.HTTPSeeOther("/operator/")
        self._set_cookie(response, device)
        self.show_code(0)
        raise response

    async def session(self, request: web.Request) -> web.StreamResponse:
        device = self._device(request)
        if device is None:
            return web.json_response({"paired": False})
        response = web.json_response({"paired": True, "name": device.name, "id": device.id,
                                      "csrf": device.csrf,
                                      "table": self.service.config.table_id})
        self._set_cookie(response, device)  # signed again: a phone in use stays paired
        return response

    async def pair(self, request: web.Request) -> web.StreamResponse:
        origin = request.headers.get("Origin")
        if origin is None or urlsplit(origin).netloc.lower() != (request.host or "").lower():
            return _refusal(403, "refused: the request did not come from the operator page")
        body = await self._body(request)
        try:
            device = self.pairing.pair(code=str(body.get("code", "")), name=body.get("name"),
                                       client=request.remote or "?", now=self.clock())
        except PairingRefused as exc:
            return _refusal(403, str(exc))
        self.show_code(0)
        response = web.json_response({"ok": True, "text": f"paired as {device.name}",
                                      "csrf": device.csrf, "name": device.name})
        self._set_cookie(response, device)
        return response

    async def ask_code(self, request: web.Request) -> web.StreamResponse:
        """An unpaired phone asks the table's display to show the code (for a while)."""
        self.show_code(SHOW_CODE_S)
        code = self.pairing.current(self.clock())
        log.warning("operator: pairing code %s (asked for by %s)", code.code, request.remote)
        return web.json_response({"ok": True, "text": "the table's display shows the code"})

    async def pairing_for_phone(self, request: web.Request) -> web.StreamResponse:
        """A paired phone shows the code and QR code to pair another phone."""
        self._paired(request)
        code = self.pairing.current(self.clock())
        return web.json_response({"code": code.code, "url": self.pairing_url(),
                                  "svg": _svg(self.pairing_url()).decode()})

    async def table(self, request: web.Request) -> web.StreamResponse:
        self._paired(request)
        return web.json_response(self.table_json(), dumps=_dumps)

    def table_json(self) -> dict[str, Any]:
        """What the operator page shows of the table now."""
        svc = self.service
        cfg, conf = svc.config, svc.configured
        state = svc.state()
        spec = games[cfg.game]
        return {
            "table": cfg.table_id, "game": cfg.game, "title": spec.title,
            "seats": list(state.get("seats") or cfg.seats), "card_source": cfg.card_source,
            "options": options_to_json(cfg.options),
            "configured": {"game": conf.game, "seats": list(conf.seats),
                           "dealer": conf.dealer, "options": options_to_json(conf.options)},
            "running": game_running(svc), "over": bool(state.get("over")),
            "paused": svc.paused, "can_deal": (spec.in_rounds
                                               and state.get("phase") == "round_over"),
            "other_game": svc.other_game, "journal_fault": svc.journal_fault,
            "last_card": self._last_card(), "scene": self.display.scene(),
            "pads": self._pads(),
        }

    def _pads(self) -> int | None:
        wired = self.service.configured.raw.get("seats")
        return len(wired) if isinstance(wired, list) and wired else None

    def _last_card(self) -> dict[str, Any] | None:
        """The last card laid or drawn, as the card source read it: its journal line."""
        table = self.service.table
        if table is None:
            return None
        seats = list(table.header.seats)
        for k in range(len(table.inputs) - 1, -1, -1):
            inp = table.inputs[k]
            if inp.act in ("lay", "draw"):
                card = inp.card
                if card is None:  # a virtual deck: the card the referee turned
                    return None
                return {"line": k + 2, "seat": inp.seat, "name": seats[inp.seat],
                        "act": inp.act, "card": str(card),
                        "source": self.service.config.card_source}
        return None

    async def games(self, request: web.Request) -> web.StreamResponse:
        self._paired(request)
        return web.json_response({"games": [
            {"name": g.name, "title": g.title, "min_seats": g.min_seats,
             "max_seats": g.max_seats, "options": [s.to_json() for s in option_specs(g.options)]}
            for g in games.values()], "pads": self._pads()})

    async def history(self, request: web.Request) -> web.StreamResponse:
        self._paired(request)
        return web.json_response({"history": self.display.history,
                                  "log": read_log(self.service, 20)}, dumps=_dumps)

    async def devices(self, request: web.Request) -> web.StreamResponse:
        device = self._paired(request)
        return web.json_response({"you": device.id, "devices": [
            d.public() for d in self.pairing.devices.values()]})

    async def command(self, request: web.Request) -> web.StreamResponse:
        device = self._change(request)
        body = await self._body(request)
        name = body.get("command")
        if not isinstance(name, str):
            return _refusal(400, "which command?")
        args = body.get("args") or {}
        if not isinstance(args, dict):
            return _refusal(400, "the command's arguments: names and values")
        outcome = operate(self.service, name, by=device.name, args=args,
                          confirmed=body.get("confirmed") is True)
        await asyncio.sleep(0.05)  # let the service take it, so the answer's table is new
        return web.json_response(outcome.to_json())

    async def unpair(self, request: web.Request) -> web.StreamResponse:
        self._change(request)
        body = await self._body(request)
        try:
            gone = self.pairing.unpair(str(body.get("id", "")))
        except PairingRefused as exc:
            return _refusal(404, str(exc))
        return web.json_response({"ok": True, "text": f"{gone.name} is no longer paired"})

    async def rename(self, request: web.Request) -> web.StreamResponse:
        device = self._change(request)
        body = await self._body(request)
        self.pairing.rename(device, body.get("name"))
        return web.json_response({"ok": True, "text": f"this phone is {device.name}"})


def _dumps(obj: Any) -> str:
    import json

    return json.dumps(obj, ensure_ascii=False, default=str)


def _svg(url: str) -> bytes:
    """The QR code of ``url`` as an SVG picture (segno)."""
    import io

    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="svg", scale=6, border=2, dark="#000",
                                    light="#fff", xmldecl=False, svgns=True)
    return out.getvalue()


def _terminal_qr(qr: Any) -> str:
    """The QR code in text, for a terminal (two rows of modules per line)."""
    import io

    out = io.StringIO()
    qr.terminal(out=out, compact=True, border=2)
    return out.getvalue()
