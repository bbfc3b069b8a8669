"""What every page that changes the table shares (the operator page and the set-up wizard):
who may use it, and how a phone gets to (docs/security.md).

:class:`GuardedSite` holds the table's :class:`~cardtable.operator.pairing.Pairing` and serves
the pairing routes under ``/operator/api/`` and ``/pairing.json``/``/pairing.svg`` (the code,
to the table's own screen only: a browser on this machine, never a reverse proxy's client).
Guards, in order, on every ``/operator``, ``/setup`` and ``/pairing.*`` request: the ``Host``
must name this machine (an IP address, ``localhost``, the machine's name
or a name of ``[web] hosts``; anything else, as a page of another site that points its name at
the table by DNS rebinding, gets 421); then, but for pairing itself, a paired session (401);
and on every change (POST), the page's own origin (``Origin`` as the ``Host``: 403) and the
phone's CSRF token in ``X-CSRF-Token`` (403). A refusal is JSON ``{"ok": false, "text": …}``.
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import ipaddress
import json
import logging
import socket
import time
from collections import deque
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any
from urllib.parse import quote, urlsplit

import segno
from aiohttp import web

from cardtable.display.web import asked_language
from cardtable.errors import PairingRefused
from cardtable.i18n import Language, language, said
from cardtable.operator.pairing import SESSION_TTL_S, Device, Pairing
from cardtable.webserver import (
    StaticFiles,
    WebServer,
    client_of,
    is_loopback,
    new_app,
    proxied,
)

log = logging.getLogger("cardtable.operator")

#: The operator pages' own files (and the files of the display they load too).
OPERATOR_DIR = Path(__file__).with_name("web")

COOKIE = "referee_session"

#: How long the table's screen shows the pairing code after it was asked for (seconds).
SHOW_CODE_S = 300.0

#: How often one client may ask for the code to be shown, per :data:`ASK_WINDOW_S` seconds.
ASK_PER_CLIENT = 5
ASK_WINDOW_S = 60.0
#: Clients whose asking is remembered at once (the oldest is forgotten).
MAX_ASKING = 1024

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def lan_address() -> str:
    """This machine's address for phones on its network: the one its default route leaves
    from, else one its own name gives (no packet is sent); ``127.0.0.1`` when neither gives
    one. Raspberry Pi OS names the machine 127.0.1.1 in /etc/hosts, so the name alone put
    127.x in the QR code, where no phone can reach."""
    for address in (routed_address(), *named_addresses()):
        if address is not None and not address.startswith("127."):
            return address
    return "127.0.0.1"


def routed_address() -> str | None:
    """The address packets to the wider network leave from, or None (no route): a UDP
    socket's ``connect`` picks the route and sends nothing."""
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        s.connect(("192.0.2.1", 9))  # TEST-NET-1 (RFC 5737): only the route is asked for
        return str(s.getsockname()[0])
    return None


def named_addresses() -> list[str]:
    """The IPv4 addresses this machine's own name resolves to."""
    try:
        infos = socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)
    except OSError:
        return []
    return [str(info[4][0]) for info in infos]


def host_names() -> set[str]:
    """The names this machine answers to without further configuration."""
    name = socket.gethostname().lower()
    return {"localhost", name, f"{name}.local"}


def is_table_screen(request: web.Request) -> bool:
    """Whether ``request`` comes from the table's own screen: a browser on this very machine,
    not a client of a reverse proxy on it."""
    return is_loopback(request.remote) and not proxied(request)


def refusal(status: int, text: str) -> web.Response:
    """A refusal in words, as every API answer of the pages is shaped."""
    return web.json_response({"ok": False, "text": text}, status=status)


#: The cookie that carries why a pairing link was refused to the page it leads to.
REFUSED_COOKIE = "refused"

#: Seconds a change's body has to come whole after its headers (the server's guard times only
#: the headers: a body sent a byte at a time had held its connection for ever).
BODY_S = 10.0


def _refused(kind: type[web.HTTPException], text: str) -> web.HTTPException:
    return kind(text=json.dumps({"ok": False, "text": text}), content_type="application/json")


def dumps(obj: Any) -> str:
    """JSON for an answer (UTF-8 text, anything unknown as its words)."""
    return json.dumps(obj, ensure_ascii=False, default=str)


def qr_svg(url: str) -> bytes:
    """The QR code of ``url`` as an SVG picture (segno)."""
    out = io.BytesIO()
    segno.make(url, error="m").save(out, kind="svg", scale=6, border=2, dark="#000",
                                    light="#fff", xmldecl=False, svgns=True)
    return out.getvalue()


def terminal_qr(url: str) -> str:
    """The QR code of ``url`` in text, for a terminal (two rows of modules per line)."""
    out = io.StringIO()
    segno.make(url, error="m").terminal(out=out, compact=True, border=2)
    return out.getvalue()


class GuardedSite:
    """A site of pages that change the table (see the module's docstring).

    ``host``/``port``: where to listen (port 0 picks a free one); ``hosts``: more names the
    ``Host`` header may give; ``pairing_folder``: where the paired phones are kept (None: in
    memory); ``clock``: wall-clock seconds (the tests move it); ``announce``: told where the
    pages are and the pairing code (the terminal), besides the log."""

    def __init__(self, *, host: str = "127.0.0.1", port: int = 0, hosts: tuple[str, ...] = (),
                 pairing_folder: Path | None = None, clock: Callable[[], float] = time.time,
                 announce: Callable[[str], None] | None = None) -> None:
        self.clock = clock
        self.announce = announce
        self.pairing = Pairing(pairing_folder, clock())
        self.allowed_hosts = host_names() | {h.lower() for h in hosts}
        #: The table's screen shows the code until then (wall-clock seconds).
        self.show_code_until = 0.0
        self._asked: dict[str, deque[float]] = {}
        self.files = StaticFiles(OPERATOR_DIR)
        self.app = new_app()
        self.app.middlewares.append(self._guard)
        r = self.app.router
        r.add_get("/pairing.json", self.pairing_json)
        r.add_get("/pairing.svg", self.pairing_svg)
        r.add_get("/operator/pair", self.pair_link)
        r.add_get("/operator/api/session", self.session)
        r.add_post("/operator/api/pair", self.pair)
        r.add_post("/operator/api/show-code", self.ask_code)
        r.add_get("/operator/api/pairing", self.pairing_for_phone)
        r.add_get("/operator/api/devices", self.devices)
        r.add_post("/operator/api/unpair", self.unpair)
        r.add_post("/operator/api/rename", self.rename)
        self.server = WebServer(self.app, host, port)
        #: Why the pages are not served (None: they are, or not started yet).
        self.error: str | None = None
        self.error_errno: int | None = None  # why the address could not be used
        #: Whether :meth:`listen` could listen (None: it has not tried yet).
        self.listening: bool | None = None
        #: The table's language (its pages' words, unless a page asks for another).
        self.language: str | None = None

    def lang(self, request: web.Request) -> Language:
        """The words a request is answered in: those it asks for (``?lang=sv``), else the
        table's language, else the system locale's."""
        return language(asked_language(request) or self.language)

    # -- serving -------------------------------------------------------------------------------
    async def listen(self, what: str) -> bool:
        """Listen; say where, with the pairing code. An address that cannot be used is said
        (False): refereeing goes on without the pages."""
        try:
            await self.server.start()
        except OSError as exc:
            self.error = (f"cannot serve the table's pages on {self.server.host}:"
                          f"{self.server.port} ({exc.strerror or exc}); [web] bind and port "
                          "(or --bind and --port) say where")
            self.error_errno = exc.errno
            self.listening = False
            # said once: an announce is the terminal (its line had been logged there too)
            log.log(logging.DEBUG if self.announce else logging.ERROR, "%s", self.error)
            if self.announce is not None:
                self.announce(self.error)
            return False
        self.listening = True
        code = self.pairing.current(self.clock())
        code.logged = True
        lines = [what.format(base=self.public_base()),
                 f"pairing code {code.code}, or open {self.pairing_url()}"]
        for line in lines:  # an announce says them (a terminal, or systemd's journal from
            # stdout): logged too, they had been printed twice on the terminal
            log.log(logging.DEBUG if self.announce else logging.WARNING, "%s", line)
        if self.announce is not None:
            self.announce("\n".join([*lines, terminal_qr(self.pairing_url())]))
        return True

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
        """The QR code's address: the pairing link with the one-time token."""
        code = self.pairing.current(self.clock())
        return f"{self.public_base()}operator/pair?token={code.token}"

    def show_code(self, seconds: float) -> None:
        """Let the table's own screen show the pairing code for ``seconds`` (0: stop now)."""
        self.show_code_until = self.clock() + seconds if seconds > 0 else 0.0

    # -- guards --------------------------------------------------------------------------------
    @web.middleware
    async def _guard(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        if request.path.startswith(("/operator", "/setup", "/pairing.")):
            host = (request.host or "").lower()
            name = host.strip("[]") if host.endswith("]") else host.rsplit(":", 1)[0]
            if not self._host_ok(name.strip("[]")):
                return refusal(421, "this page answers to the table's own address only")
        return await handler(request)

    def _host_ok(self, name: str) -> bool:
        try:
            ipaddress.ip_address(name)
            return True
        except ValueError:
            return name in self.allowed_hosts

    def device_of(self, request: web.Request) -> Device | None:
        """The paired phone a request comes from, or None."""
        return self.pairing.device(request.cookies.get(COOKIE), self.clock())

    def paired(self, request: web.Request) -> Device:
        """The paired phone a request comes from (401 otherwise)."""
        device = self.device_of(request)
        if device is None:
            raise _refused(web.HTTPUnauthorized, self.lang(request).gettext(
                "this phone is not paired with the table"))
        return device

    @staticmethod
    def _same_origin(request: web.Request) -> bool:
        origin = request.headers.get("Origin")
        return origin is not None and (
            urlsplit(origin).netloc.lower() == (request.host or "").lower())

    def change(self, request: web.Request) -> Device:
        """A change: paired, from the page's own origin, with the phone's CSRF token."""
        device = self.paired(request)
        lang = self.lang(request)
        if not self._same_origin(request):
            raise _refused(web.HTTPForbidden, lang.gettext(
                "refused: the request did not come from the operator page"))
        if not self.pairing.csrf_ok(device, request.headers.get("X-CSRF-Token")):
            raise _refused(web.HTTPForbidden, lang.gettext(
                "refused: the page's token is not this phone's (reload the page)"))
        return device

    async def body(self, request: web.Request) -> dict[str, Any]:
        """A change's JSON object (400 in words otherwise; 408 for a body that does not come
        whole within :data:`BODY_S`)."""
        try:
            async with asyncio.timeout(BODY_S):
                text = await request.text()
        except TimeoutError:
            slow = _refused(web.HTTPRequestTimeout, self.lang(request).gettext(
                "the request came too slowly"))
            slow.force_close()  # closed once aiohttp's lingering (10 s) has read what trickles
            raise slow from None
        except (web.RequestPayloadError, ValueError):  # a body its Content-Encoding cannot undo
            raise _refused(web.HTTPBadRequest, self.lang(request).gettext("not JSON")) from None
        try:
            got = json.loads(text)
        except (ValueError, RecursionError):  # RecursionError: arrays nested 20 000 deep
            raise _refused(web.HTTPBadRequest, self.lang(request).gettext("not JSON")) from None
        if not isinstance(got, dict):
            raise _refused(web.HTTPBadRequest, self.lang(request).gettext("not a JSON object"))
        return got

    def _set_cookie(self, response: web.StreamResponse, device: Device) -> None:
        response.set_cookie(COOKIE, self.pairing.cookie(device), max_age=SESSION_TTL_S,
                            httponly=True, samesite="Strict", path="/")

    # -- pairing -------------------------------------------------------------------------------
    def page(self, name: str) -> web.Response:
        """One of the pages' own files."""
        return self.files.response(name)

    async def pairing_json(self, request: web.Request) -> web.StreamResponse:
        """The code for the table's own screen: answered to this machine only, while pairing
        is asked for; ``"code": null`` to any other browser and while it is not asked for.
        Every display asks whenever it is told a phone may pair (a page cannot tell whether it
        is the table's screen: a Pi names itself 127.0.1.1), and a 404 would be a line in its
        browser's console each time; the same answer either way says nothing."""
        now = self.clock()
        if not is_table_screen(request) or now >= self.show_code_until:
            return web.json_response({"code": None})
        code = self.pairing.current(now)
        return web.json_response({"code": code.code,
                                  "until": min(code.until, self.show_code_until),
                                  "url": f"{self.public_base()}operator/"})

    async def pairing_svg(self, request: web.Request) -> web.StreamResponse:
        if not is_table_screen(request) or self.clock() >= self.show_code_until:
            raise web.HTTPNotFound()
        return web.Response(body=qr_svg(self.pairing_url()),
                            headers={"Content-Type": "image/svg+xml"})

    async def pair_link(self, request: web.Request) -> web.StreamResponse:
        """The QR code's address: pair with its one-time token, then on to the page."""
        try:
            device = self.pairing.pair(token=request.query.get("token", ""),
                                       client=client_of(request), now=self.clock(),
                                       unnamed=self.lang(request).gettext("phone {n}"))
        except PairingRefused as exc:
            # The reason rides in a cookie, which only this site can set: in the query, any
            # site could link to the page with words of its own shown as the table's refusal.
            refused = web.HTTPSeeOther("/operator/")
            refused.set_cookie(REFUSED_COOKIE, quote(said(exc, self.lang(request))[:200], safe=""),
                               max_age=60, path="/operator/", samesite="Strict")
            raise refused from None
        response = web.HTTPSeeOther("/operator/")
        self._set_cookie(response, device)
        self.show_code(0)
        raise response

    async def session(self, request: web.Request) -> web.StreamResponse:
        device = self.device_of(request)
        lang = self.lang(request).code
        if device is None:  # the table's own screen shows the code (the others are told 404)
            return web.json_response({"paired": False, "lang": lang,
                                      "table_screen": is_table_screen(request)})
        response = web.json_response({"paired": True, "name": device.name, "id": device.id,
                                      "csrf": device.csrf, "lang": lang})
        self._set_cookie(response, device)  # signed again: a phone in use stays paired
        return response

    async def pair(self, request: web.Request) -> web.StreamResponse:
        lang = self.lang(request)
        if not self._same_origin(request):
            return refusal(403, lang.gettext(
                "refused: the request did not come from the operator page"))
        got = await self.body(request)
        try:
            device = self.pairing.pair(code=str(got.get("code", "")), name=got.get("name"),
                                       client=client_of(request), now=self.clock(),
                                       unnamed=lang.gettext("phone {n}"))
        except PairingRefused as exc:
            return refusal(403, said(exc, lang))
        self.show_code(0)
        response = web.json_response({"ok": True,
                                      "text": lang.gettext("paired as {name}").format(
                                          name=device.name),
                                      "csrf": device.csrf, "name": device.name})
        self._set_cookie(response, device)
        return response

    async def ask_code(self, request: web.Request) -> web.StreamResponse:
        """An unpaired phone asks the table's screen to show the code (for a while): from the
        page's own origin (another site's page cannot make the screen show it), at most
        :data:`ASK_PER_CLIENT` times a minute per client; the code goes to the log once."""
        lang = self.lang(request)
        if not self._same_origin(request):
            return refusal(403, lang.gettext(
                "refused: the request did not come from the operator page"))
        now = self.clock()
        client = client_of(request)
        asked = self._asked.setdefault(client, deque())
        while asked and asked[0] <= now - ASK_WINDOW_S:
            asked.popleft()
        if len(asked) >= ASK_PER_CLIENT:
            return refusal(429, lang.gettext(
                "asked too often: the table's display shows the code already"))
        asked.append(now)
        if len(self._asked) > MAX_ASKING:
            self._asked.pop(next(iter(self._asked)))
        self.show_code(SHOW_CODE_S)
        self.pairing.log_code(now, f"asked for by {client}")
        return web.json_response({"ok": True, "text": lang.gettext(
            "the table's display shows the code")})

    async def pairing_for_phone(self, request: web.Request) -> web.StreamResponse:
        """A paired phone shows the code and QR code to pair another phone."""
        self.paired(request)
        code = self.pairing.current(self.clock())
        return web.json_response({"code": code.code, "url": self.pairing_url(),
                                  "svg": qr_svg(self.pairing_url()).decode()})

    async def devices(self, request: web.Request) -> web.StreamResponse:
        device = self.paired(request)
        return web.json_response({"you": device.id, "devices": [
            d.public() for d in self.pairing.devices.values()]})

    async def unpair(self, request: web.Request) -> web.StreamResponse:
        self.change(request)
        got = await self.body(request)
        lang = self.lang(request)
        try:
            gone = self.pairing.unpair(str(got.get("id", "")))
        except PairingRefused as exc:
            return refusal(404, said(exc, lang))
        return web.json_response({"ok": True, "text": lang.gettext(
            "{name} is no longer paired").format(name=gone.name)})

    async def rename(self, request: web.Request) -> web.StreamResponse:
        device = self.change(request)
        got = await self.body(request)
        self.pairing.rename(device, got.get("name"))
        return web.json_response({"ok": True, "text": self.lang(request).gettext(
            "this phone is {name}").format(name=device.name)})
