"""The table's web server: aiohttp, in the asyncio loop of the command that serves (the
referee's own loop under ``referee run``, the display's under ``referee display --web``).

What every page of the project shares is decided here, once:

- :func:`security_headers`: every answer (pages, files, streams, errors) carries a Content
  Security Policy that allows the page's own scripts and styles only (no inline script, no
  other origin, no framing: ``frame-ancestors 'none'``), ``X-Content-Type-Options: nosniff``,
  ``Referrer-Policy: no-referrer`` (a pairing address with its one-time token never leaks in a
  Referer) and ``Cache-Control: no-store`` unless a route says otherwise;
- :class:`StaticFiles`: the pages' files are read into memory at start from a fixed list of
  names; a request's path is only ever looked up in that table, never joined to a folder, so
  no ``../``, encoded dot, backslash or NUL reaches the file system;
- :class:`SceneStream`: server-sent events of the newest scene, at most :data:`MAX_STREAMS`
  pages at once, :data:`MAX_STREAMS_PER_CLIENT` of one client, and never the last
  :data:`STREAM_RESERVE` connections (one more gets 503), each a coroutine, not a thread,
  each scene written to every page's socket at once; a page that falls :data:`MAX_BEHIND`
  bytes behind is cut off and reconnects to the newest (it never works through a backlog);
- :class:`WebServer`: the listening socket, with the request's size bounded
  (:data:`MAX_FIELD`, :data:`MAX_BODY`) and its connections by :class:`ConnectionGuard`: at
  most :func:`max_connections` at once (never so many that the referee's journal could not
  open a file), :data:`MAX_CONNECTIONS_PER_CLIENT` of one address, and a connection that
  has not made its first request within :data:`FIRST_REQUEST_S` is closed (a slow or
  half-open client holds nothing for long).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import json
import logging
import mimetypes
from collections.abc import Awaitable, Callable, Iterable
from pathlib import Path

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

log = logging.getLogger("cardtable.web")


class ClientFaults(logging.Filter):
    """aiohttp logs a request it cannot read (no ``Host``, a header over the limit, a body its
    ``Content-Encoding`` cannot undo) as an ERROR with its traceback, about ten lines a request:
    anyone on the network could fill the table's log. Such a fault is the client's, and was
    answered 400: it is logged in one line, for debugging."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if isinstance(exc, (HttpProcessingError, web.RequestPayloadError)):
            record.msg, record.args = "a request the server could not read: %s", (
                str(exc).strip().replace("\n", " ")[:200],)
            record.levelno, record.levelname = logging.DEBUG, "DEBUG"
            record.exc_info = record.exc_text = None
        return True


_CLIENT_FAULTS = ClientFaults()

#: Pages that may follow one stream at once; one more gets 503 (each costs a coroutine and a
#: socket; bench/display_streams.py serves 500 and more).
MAX_STREAMS = 1000

#: Seconds between keep-alive comments on a quiet stream (a page that went away is noticed
#: at the next one).
KEEPALIVE_S = 15.0

#: How soon (ms) a page reconnects after the stream broke (the browser's EventSource retry).
RETRY_MS = 500

#: Bytes a page may leave untaken in its socket's buffer (some twenty scenes); past them it is
#: cut off and reconnects to the newest scene.
MAX_BEHIND = 64 * 1024

#: The longest request line or header line, in bytes (aiohttp answers 400 above it).
MAX_FIELD = 8190

#: The most header lines of one request.
MAX_HEADERS = 64

#: Seconds an idle kept-alive connection stays open (aiohttp's default is an hour).
KEEPALIVE_IDLE_S = 75.0

#: The largest request body, in bytes (every form of the operator page is far smaller).
MAX_BODY = 64 * 1024

#: Seconds a new connection has to make its first request (headers whole) before it is
#: closed: a browser takes milliseconds; a slowloris client or a half-open one takes forever.
FIRST_REQUEST_S = 10.0

#: Streams one client may follow at once (a client is its address, or behind a reverse proxy
#: on this machine the client the proxy names: :func:`client_of`); one more gets 503. This
#: machine's own browsers are not counted per client (the table's screen, the benchmarks).
MAX_STREAMS_PER_CLIENT = 32

#: Connections one address may hold at once; one more is closed at once (this machine is not
#: counted: a reverse proxy on it carries every client).
MAX_CONNECTIONS_PER_CLIENT = 64

#: Connections the streams never take (at most half the limit), so that the operator page and
#: the wizard can always be reached while the display's pages follow their streams.
STREAM_RESERVE = 64

#: Headers a reverse proxy adds: a request that carries one came through a proxy, whatever
#: address it comes from (a proxy on this machine makes every client look like 127.0.0.1).
PROXY_HEADERS = ("Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Real-IP")

#: The longest client name kept from a proxy's header.
MAX_CLIENT_NAME = 64

#: File descriptors kept for the rest of the process (the journal, the broker, the pads, the
#: board, the console socket …) when the connections are bounded by the process's limit.
RESERVED_FDS = 256


def is_loopback(remote: str | None) -> bool:
    """Whether a client connects from this very machine."""
    try:
        return remote is not None and ipaddress.ip_address(remote).is_loopback
    except ValueError:
        return False


def proxied(request: web.Request) -> bool:
    """Whether ``request`` carries a header a reverse proxy adds."""
    return any(name in request.headers for name in PROXY_HEADERS)


def client_of(request: web.Request) -> str:
    """Whom a request is counted against (wrong pairing codes, streams, asking for the code):
    the client's address, or, for a request from a reverse proxy on this machine, the client
    the proxy names (the last hop of ``X-Forwarded-For`` or ``Forwarded``, which the proxy adds
    itself; else ``X-Real-IP``), so that one client behind the proxy cannot use up what the
    others and the table's own screen are given. A client elsewhere that sends such headers
    itself is counted by its own address."""
    remote = request.remote or "?"
    if not (is_loopback(remote) and proxied(request)):
        return remote
    headers = request.headers
    named = ""
    if "X-Forwarded-For" in headers:
        named = ",".join(headers.getall("X-Forwarded-For")).rsplit(",", 1)[-1]
    elif "Forwarded" in headers:
        last = ",".join(headers.getall("Forwarded")).rsplit(",", 1)[-1]
        for pair in last.split(";"):
            key, _, value = pair.strip().partition("=")
            if key.lower() == "for":
                named = value.strip('"')
    elif "X-Real-IP" in headers:
        named = headers["X-Real-IP"]
    return f"proxied:{named.strip()[:MAX_CLIENT_NAME]}"


def max_connections() -> int:
    """The most connections the server holds at once: a stream per page it allows and some
    more, but never more than the process's file limit leaves after :data:`RESERVED_FDS`
    (a Pi's services have 1 024 by default), so a flood of connections cannot stop the
    journal from opening a file."""
    import resource

    soft, _hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    room = MAX_STREAMS + 100
    if soft != resource.RLIM_INFINITY:
        room = min(room, soft - RESERVED_FDS)
    return max(16, room)


class ConnectionGuard:
    """Wraps the server's protocol factory: a connection over :attr:`limit` is closed at once,
    and one that has made no request :data:`FIRST_REQUEST_S` after it opened is closed then.
    :meth:`served` (called for every request) marks a connection as having made one."""

    def __init__(self, factory: Callable[[], asyncio.Protocol], limit: int,
                 first_request_s: float = FIRST_REQUEST_S, *,
                 per_client: int = MAX_CONNECTIONS_PER_CLIENT,
                 exempt: Callable[[str | None], bool] = is_loopback) -> None:
        self.factory = factory
        self.limit = limit
        self.first_request_s = first_request_s
        #: The most connections of one address (``exempt`` addresses are not counted).
        self.per_client = per_client
        self.exempt = exempt
        #: Open connections per counted address.
        self.by_client: dict[str, int] = {}
        self.open = 0
        #: The most connections open at once, since the start.
        self.peak = 0
        #: Connections refused (over the limit), and closed before their first request.
        self.refused = 0
        self.timed_out = 0
        self._waiting: dict[asyncio.BaseTransport, asyncio.TimerHandle] = {}

    def served(self, transport: asyncio.BaseTransport | None) -> None:
        """A request came whole on ``transport``: it keeps its connection."""
        timer = self._waiting.pop(transport, None) if transport is not None else None
        if timer is not None:
            timer.cancel()

    def __call__(self) -> asyncio.Protocol:
        return _Guarded(self, self.factory())

    def _expire(self, transport: asyncio.BaseTransport) -> None:
        if self._waiting.pop(transport, None) is not None:
            self.timed_out += 1
            transport.close()


class _Guarded(asyncio.Protocol):
    """One connection as :class:`ConnectionGuard` sees it, in front of the server's own
    protocol (aiohttp's, whose methods cannot be replaced): everything is passed on once the
    connection is let in."""

    def __init__(self, guard: ConnectionGuard, inner: asyncio.Protocol) -> None:
        self.guard = guard
        self.inner = inner
        self.transport: asyncio.BaseTransport | None = None
        #: The address this connection is counted against (None: not counted).
        self.counted: str | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        guard = self.guard
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else None
        counted = None if guard.exempt(address) else str(address)
        if guard.open >= guard.limit or (
                counted is not None and guard.by_client.get(counted, 0) >= guard.per_client):
            guard.refused += 1
            transport.close()
            return
        if counted is not None:
            guard.by_client[counted] = guard.by_client.get(counted, 0) + 1
            self.counted = counted
        guard.open += 1
        guard.peak = max(guard.peak, guard.open)
        self.transport = transport
        guard._waiting[transport] = asyncio.get_running_loop().call_later(
            guard.first_request_s, guard._expire, transport)
        self.inner.connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        if self.transport is None:
            return  # refused: the server never saw it
        self.guard.open -= 1
        if self.counted is not None:
            left = self.guard.by_client.pop(self.counted, 1) - 1
            if left > 0:
                self.guard.by_client[self.counted] = left
        self.guard.served(self.transport)  # its timer, if it still had one, goes too
        self.inner.connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        if self.transport is not None:
            self.inner.data_received(data)

    def eof_received(self) -> bool | None:
        return self.inner.eof_received() if self.transport is not None else None

    def pause_writing(self) -> None:
        self.inner.pause_writing()

    def resume_writing(self) -> None:
        self.inner.resume_writing()


#: Where an application keeps its server's :class:`ConnectionGuard` (set by :class:`WebServer`).
GUARD = web.AppKey("connection_guard", ConnectionGuard)

#: The Content Security Policy of every answer: the page's own files only.
CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
       "connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")

SECURITY_HEADERS = {
    "Content-Security-Policy": CSP,
    "X-Content-Type-Options": "nosniff",
    "X-Frame-Options": "DENY",
    "Referrer-Policy": "no-referrer",
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Resource-Policy": "same-origin",
}

#: Content types of the files the pages are made of.
TYPES = {".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8",
         ".css": "text/css; charset=utf-8", ".svg": "image/svg+xml",
         ".png": "image/png", ".json": "application/json; charset=utf-8",
         ".webmanifest": "application/manifest+json"}

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _secure(response: web.StreamResponse) -> None:
    for name, value in SECURITY_HEADERS.items():
        response.headers.setdefault(name, value)
    response.headers.setdefault("Cache-Control", "no-store")


@web.middleware
async def security_headers(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Add :data:`SECURITY_HEADERS` to every answer, errors included (a stream gets them before
    its headers are sent: see :func:`prepared`); a handler's unexpected exception is logged and
    answered with a JSON refusal (500), as every refusal of the pages is shaped."""
    guard = request.config_dict.get(GUARD)
    if guard is not None:
        guard.served(request.transport)
    try:
        response = await handler(request)
    except (web.HTTPNotFound, web.HTTPMethodNotAllowed) as exc:
        if "/api/" in request.path and exc.content_type != "application/json":
            # an API's every answer is a JSON refusal (aiohttp's own is a line of text)
            exc.text = json.dumps({"ok": False, "text": exc.reason.lower()})
            exc.content_type = "application/json"
        _secure(exc)
        raise
    except web.HTTPException as exc:
        _secure(exc)
        raise
    except Exception:  # a bug: said in the log, answered as a refusal (not aiohttp's page)
        log.exception("web: %s %s failed", request.method, request.path)
        response = web.json_response(
            {"ok": False, "text": "the referee could not answer this (its log says why)"},
            status=500)
    if not response.prepared:
        _secure(response)
    return response


async def prepared(response: web.StreamResponse, request: web.Request) -> None:
    """Send a streamed answer's headers, with :data:`SECURITY_HEADERS`."""
    _secure(response)
    await response.prepare(request)


class StaticFiles:
    """The files of a page, read once into memory from ``folder`` by name: ``names`` (every
    file of the folder with a known type when None). :meth:`response` answers a name of that
    table; any other name is 404, whatever it holds."""

    def __init__(self, folder: Path, names: Iterable[str] | None = None) -> None:
        if names is None:
            names = sorted(p.name for p in folder.iterdir()
                           if p.is_file() and p.suffix in TYPES)
        self.files: dict[str, tuple[bytes, str]] = {}
        for name in names:
            path = folder / name
            kind = TYPES.get(path.suffix) or mimetypes.guess_type(name)[0]
            self.files[name] = (path.read_bytes(), kind or "application/octet-stream")

    def __contains__(self, name: object) -> bool:
        return name in self.files

    def response(self, name: str) -> web.Response:
        """The file ``name`` (404 if it is not one of the table)."""
        found = self.files.get(name)
        if found is None:
            raise web.HTTPNotFound(text="no such page")
        body, kind = found
        return web.Response(body=body, headers={"Content-Type": kind})


class StreamBudget:
    """How many pages may follow streams at once, shared by the streams of one server (the
    hall's tables share one): :attr:`limit` (:data:`MAX_STREAMS` when None), :attr:`open`,
    and per client (:func:`client_of`) :attr:`per_client`, this machine's own browsers
    aside."""

    def __init__(self, limit: int | None = None, *,
                 per_client: int = MAX_STREAMS_PER_CLIENT) -> None:
        self.limit = limit
        self.per_client = per_client
        self.open = 0
        #: Streams open per client (this machine's own browsers are not counted).
        self.clients: dict[str, int] = {}

    def full(self) -> bool:
        """No page more may follow now."""
        return self.open >= (MAX_STREAMS if self.limit is None else self.limit)

    def refuse(self, client: str | None, guard: ConnectionGuard | None) -> str | None:
        """Why one more stream of ``client`` (None: this machine's own) is refused now, or
        None: the budget is spent, the client has its share, or the streams would take the
        connections kept for the other pages (:data:`STREAM_RESERVE`)."""
        if self.full():
            return "too many pages follow this display"
        if guard is not None and self.open >= guard.limit - min(STREAM_RESERVE,
                                                                guard.limit // 2):
            return "too many pages follow this display"
        if client is not None and self.clients.get(client, 0) >= self.per_client:
            return "this device follows this display too many times"
        return None

    def take(self, client: str | None) -> None:
        """One more stream of ``client``."""
        self.open += 1
        if client is not None:
            self.clients[client] = self.clients.get(client, 0) + 1

    def give_back(self, client: str | None) -> None:
        """A stream of ``client`` ended."""
        self.open -= 1
        if client is not None:
            left = self.clients.pop(client, 1) - 1
            if left > 0:
                self.clients[client] = left


def _chunk(data: bytes) -> bytes:
    """``data`` as one chunk of HTTP/1.1 chunked transfer coding (a stream's answer is sent
    so: its length is not known)."""
    return b"%x\r\n%s\r\n" % (len(data), data)


#: What a quiet stream sends every :data:`KEEPALIVE_S` seconds.
_KEEPALIVE = _chunk(b": keep-alive\n\n")


class SceneStream:
    """The newest scene (JSON bytes), numbered, for every page that follows it: call
    :meth:`publish` on the server's loop; :meth:`serve` is the ``events`` route of one page.
    ``budget``: the pages a server lets follow at once (its own when not given).

    A scene is made into its bytes on the wire once and handed to every page's socket at once
    (no task per page and scene: 500 pages cost 500 socket writes). A page whose socket holds
    more than :data:`MAX_BEHIND` bytes it has not taken (it stopped reading, or reads slower
    than the table changes) is cut off: its browser reconnects (``retry``) and gets the newest
    scene at once, so it never works through a backlog and memory stays bounded."""

    def __init__(self, body: bytes = b"{}", *, budget: StreamBudget | None = None) -> None:
        self.version = 0
        self.body = body
        self.closed = False
        self.budget = budget or StreamBudget()
        #: Each following page's socket, and the event set when it is gone.
        self._pages: dict[asyncio.BaseTransport, asyncio.Event] = {}

    @property
    def streams(self) -> int:
        """Pages following this stream now."""
        return len(self._pages)

    def publish(self, body: bytes) -> None:
        """Make ``body`` the newest scene and send it to every page (on the server's loop)."""
        self.version += 1
        self.body = body
        frame = _chunk(b"data: " + body + b"\n\n")
        for transport, gone in list(self._pages.items()):
            self._send(transport, gone, frame)

    @staticmethod
    def _send(transport: asyncio.BaseTransport, gone: asyncio.Event, frame: bytes) -> None:
        if not isinstance(transport, asyncio.WriteTransport) or transport.is_closing():
            gone.set()
            return
        if transport.get_write_buffer_size() > MAX_BEHIND:  # not reading: cut off
            transport.abort()
            gone.set()
            return
        transport.write(frame)

    def close(self) -> None:
        """End every stream."""
        self.closed = True
        for gone in self._pages.values():
            gone.set()

    async def serve(self, request: web.Request) -> web.StreamResponse:
        """Stream the scenes to one page: the newest at once, then each newer one."""
        client: str | None = client_of(request)
        if client is not None and is_loopback(client):
            client = None  # this machine's own browser (a proxy's clients are named)
        why = ("the display has closed" if self.closed else
               self.budget.refuse(client, request.config_dict.get(GUARD)))
        if why is not None:
            raise web.HTTPServiceUnavailable(text=why)
        response = web.StreamResponse(headers={
            "Content-Type": "text/event-stream; charset=utf-8", "X-Accel-Buffering": "no"})
        await prepared(response, request)
        transport = request.transport
        if transport is None:  # gone before its headers went out
            return response
        gone = asyncio.Event()
        self._pages[transport] = gone
        self.budget.take(client)
        try:
            first = f"retry: {RETRY_MS}\n\n".encode()
            if self.version:
                first += b"data: " + self.body + b"\n\n"
            self._send(transport, gone, _chunk(first))
            while not gone.is_set():
                try:
                    async with asyncio.timeout(KEEPALIVE_S):
                        await gone.wait()
                except TimeoutError:  # a page that went away is noticed here
                    self._send(transport, gone, _KEEPALIVE)
        finally:
            self._pages.pop(transport, None)
            self.budget.give_back(client)
        return response


class WebServer:
    """An aiohttp application served on ``host:port`` (port 0 picks a free one) in the running
    loop: ``await start()``, then :attr:`url`; ``await stop()``. ``on_stop`` callbacks run
    before the connections are closed (e.g. to end the streams)."""

    def __init__(self, app: web.Application, host: str = "127.0.0.1", port: int = 0) -> None:
        self.app = app
        self.host = host
        self.port = port
        self.on_stop: list[Callable[[], None]] = []
        self._runner: web.AppRunner | None = None
        self._listening: asyncio.Server | None = None
        #: The connections' guard (:class:`ConnectionGuard`), once started.
        self.guard: ConnectionGuard | None = None
        #: The most connections at once (:func:`max_connections` when None), and the seconds
        #: a connection has for its first request.
        self.max_connections: int | None = None
        self.first_request_s = FIRST_REQUEST_S
        #: Addresses whose connections are not counted per client (this machine's own).
        self.exempt: Callable[[str | None], bool] = is_loopback

    async def start(self) -> WebServer:
        """Listen (raises :class:`OSError` when the address cannot be used)."""
        logging.getLogger("aiohttp.server").addFilter(_CLIENT_FAULTS)  # once: a set
        runner = web.AppRunner(self.app, access_log=None, shutdown_timeout=2.0,
                               handler_cancellation=True, max_line_size=MAX_FIELD,
                               max_field_size=MAX_FIELD, max_headers=MAX_HEADERS,
                               keepalive_timeout=KEEPALIVE_IDLE_S)
        guard = ConnectionGuard(asyncio.Protocol, self.max_connections or max_connections(),
                                self.first_request_s, exempt=self.exempt)
        self.app[GUARD] = guard  # before the application is frozen
        await runner.setup()
        server = runner.server
        assert server is not None
        guard.factory = server
        try:
            self._listening = await asyncio.get_running_loop().create_server(
                guard, self.host, self.port, reuse_address=True)
        except BaseException:
            await runner.cleanup()
            raise
        self._runner, self.guard = runner, guard
        sockets = self._listening.sockets or ()
        if sockets:  # port 0: the one the system picked
            self.port = int(sockets[0].getsockname()[1])
        return self

    @property
    def url(self) -> str:
        """``http://host:port/`` (an IPv6 address in brackets)."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    async def stop(self) -> None:
        """End the streams, stop listening and close every connection."""
        for callback in self.on_stop:
            with contextlib.suppress(Exception):
                callback()
        if self._listening is not None:
            self._listening.close()
            self._listening = None
        if self._runner is not None:
            runner, self._runner = self._runner, None
            await runner.cleanup()


def new_app(*, max_body: int = MAX_BODY) -> web.Application:
    """An application with the project's middleware (:func:`security_headers`)."""
    return web.Application(middlewares=[security_headers], client_max_size=max_body)
