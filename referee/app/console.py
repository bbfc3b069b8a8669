"""The console at the table: inputs and operator commands typed as lines.

:class:`ConsoleEdge` reads them from the terminal (the console card source, and the operator's
pause, correct, deal …); :class:`SocketConsole` takes the same lines over a Unix socket, for a
referee that runs as a service with no terminal, and :func:`console_client` is the other end
of that socket (``referee console``).
"""

from __future__ import annotations

import asyncio
import codecs
import contextlib
import io
import json
import os
import stat
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from referee.cards import parse_card
from referee.errors import CardError
from referee.model import Act, Input

if TYPE_CHECKING:
    from referee.app.service import RefereeService

CONSOLE_HELP = """\
Inputs (seat number first):  lay SEAT [CARD] | slap SEAT | play SEAT CARD [CARD…] [as CARD]
                             draw SEAT [CARD] | pass SEAT | call SEAT | reshuffle SEAT
Operator:                    pause | resume | end | new | deal | correct LINE CARD | state
                             help | quit
"""

#: The input acts a console line starts with, by their own word (``deal`` is an operator word).
_TYPED_ACTS: dict[str, Act] = {act: act for act in (
    "lay", "slap", "play", "draw", "pass", "call", "reshuffle")}


def parse_console_line(text: str, t: int) -> Input | str:
    """Turn a typed line into an Input stamped ``t``, or return an operator command word."""
    words = text.strip().split()
    if not words:
        return ""
    cmd = words[0].lower()
    if cmd in ("pause", "resume", "end", "new", "deal", "state", "help", "quit", "correct"):
        return text.strip()
    act = _TYPED_ACTS.get(cmd)
    if act is None:
        raise ValueError(f"unknown command {words[0]!r}; type 'help'")
    if len(words) < 2 or not words[1].isdigit():
        raise ValueError(f"'{cmd}' needs the seat number first, e.g. '{cmd} 1'")
    seat = int(words[1])
    rest = words[2:]
    try:
        if cmd in ("lay", "draw"):
            card = parse_card(" ".join(rest)) if rest else None
            return Input(t, seat, act, card=card)
        if cmd == "play":
            declared = None
            if "as" in [w.lower() for w in rest]:
                k = [w.lower() for w in rest].index("as")
                declared = parse_card(" ".join(rest[k + 1:]))
                rest = rest[:k]
            if not rest:
                raise ValueError("'play' needs the cards laid, e.g. 'play 0 QH QS'")
            return Input(t, seat, "play", cards=tuple(parse_card(w) for w in rest),
                         as_=declared)
        if cmd == "call":
            return Input(t, seat, "call", call="lappen")
        return Input(t, seat, act)
    except CardError as exc:
        raise ValueError(str(exc)) from None


def _dealt(service: RefereeService) -> str:
    """The reply to ``new``/``end``: the new game, or why it waits."""
    if service.journal_fault is not None:
        return (f"? the journal cannot be written ({service.journal_fault}): the new game is "
                "dealt as soon as it can be")
    return "a new game is dealt"


def _watchable_fd(stream: Any) -> int | None:
    """The descriptor of a terminal, pipe or socket the event loop can watch, else None."""
    try:
        fd = int(stream.fileno())
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    return fd if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else None


class ConsoleEdge:
    """Typed inputs and operator commands from a text stream (standard input by default)."""

    def __init__(self, stream: Any = None, echo: Callable[[str], None] | None = None) -> None:
        self.stream = stream or sys.stdin
        self.echo = echo or (lambda text: print(text, flush=True))
        self._task: asyncio.Task[None] | None = None

    async def start(self, service: RefereeService) -> None:
        """Read lines in the background."""
        self._task = asyncio.create_task(self._read(service))

    async def _read(self, service: RefereeService) -> None:
        """Hand each line to :meth:`handle` until the end of the stream.

        A terminal or pipe is watched by the event loop itself (``add_reader``, and a read
        only once it is readable), so no thread sits blocked in ``readline``: such a thread
        kept the process alive after SIGTERM or ``quit`` until someone pressed Enter. A
        regular file (or an in-memory stream) never blocks and is read line by line."""
        loop = asyncio.get_running_loop()
        chunks: asyncio.Queue[bytes] = asyncio.Queue()
        fd = _watchable_fd(self.stream)
        if fd is not None:
            try:
                loop.add_reader(fd, lambda: None)
                loop.remove_reader(fd)
            except (OSError, ValueError):  # e.g. /dev/null, which epoll refuses
                fd = None
        if fd is None:
            for line in iter(self.stream.readline, ""):
                self.handle(service, line)
                await asyncio.sleep(0)
            return

        def readable() -> None:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                data = b""
            if not data:
                loop.remove_reader(fd)
            chunks.put_nowait(data)

        loop.add_reader(fd, readable)
        decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
        pending = ""
        try:
            while True:
                data = await chunks.get()
                pending += decoder.decode(data, final=not data)
                *lines, pending = pending.split("\n")
                for line in lines:
                    self.handle(service, line + "\n")
                if not data:
                    if pending:
                        self.handle(service, pending)
                    return
        finally:
            loop.remove_reader(fd)

    def handle(self, service: RefereeService, line: str) -> None:
        """Act on one typed line."""
        try:
            parsed = parse_console_line(line, service.clock.now())
        except ValueError as exc:
            self.echo(f"? {exc}")
            return
        if isinstance(parsed, Input):
            service.submit(parsed)
            return
        words = parsed.split()
        if not words:
            return
        cmd = words[0].lower()
        try:
            if cmd == "pause":
                service.pause()
            elif cmd == "resume":
                service.resume()
            elif cmd == "end":
                service.end_game()
                self.echo(_dealt(service))
            elif cmd == "new":
                service.start_game()
                self.echo(_dealt(service))
            elif cmd == "deal":
                service.deal_round()
            elif cmd == "state":
                self.echo(json.dumps(service.state(), ensure_ascii=False))
            elif cmd == "help":
                self.echo(CONSOLE_HELP)
            elif cmd == "quit":
                service.stop()
            elif cmd == "correct":
                if len(words) < 3 or not words[1].isdigit():
                    raise ValueError("usage: correct LINE CARD (LINE as numbered in the journal)")
                self.echo(service.correct(int(words[1]), " ".join(words[2:])))
        except ValueError as exc:
            self.echo(f"? {exc}")

    async def stop(self) -> None:
        """Stop reading."""
        if self._task is not None:
            self._task.cancel()


class SocketConsole:
    """The operator console on a Unix socket, for a referee that runs as a service with no
    terminal: ``referee console --socket PATH`` connects to it. Each line sent is handled like
    a typed console line; the replies end with a line holding a single ``.``. ``quit`` closes
    the connection (not the referee)."""

    END = "."

    def __init__(self, path: str | os.PathLike[str]) -> None:
        self.path = Path(path)
        self._server: asyncio.AbstractServer | None = None

    async def start(self, service: RefereeService) -> None:
        """Listen on the socket (a stale socket file from a crash is replaced)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_socket():
            self.path.unlink()

        async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            replies: list[str] = []
            console = ConsoleEdge(stream=None, echo=replies.append)
            try:
                while line := await reader.readline():
                    text = line.decode("utf-8", "replace")
                    if text.strip().lower() == "quit":
                        break
                    replies.clear()
                    console.handle(service, text)
                    writer.write("".join(f"{r}\n" for r in [*replies, self.END]).encode())
                    await writer.drain()
            except ConnectionError:
                pass
            finally:
                writer.close()

        self._server = await asyncio.start_unix_server(client, path=str(self.path))
        os.chmod(self.path, 0o660)  # the referee's group may steer the table

    async def stop(self) -> None:
        """Stop listening and remove the socket file."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        with contextlib.suppress(OSError):
            self.path.unlink()


def console_client(path: str, commands: list[str], stdin: Any = None,
                   out: Callable[[str], None] = print) -> int:
    """Send console lines to a running referee's socket and print its replies."""
    import socket

    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        reader = sock.makefile("r", encoding="utf-8")
        lines = commands or iter((stdin or sys.stdin).readline, "")
        for line in lines:
            sock.sendall((line.rstrip("\n") + "\n").encode())
            if line.strip().lower() == "quit":
                break
            for reply in iter(reader.readline, ""):
                if reply.rstrip("\n") == SocketConsole.END:
                    break
                out(reply.rstrip("\n"))
    return 0
