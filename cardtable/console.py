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
import logging
import os
import stat
import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cardtable.i18n import Language, language
from cardtable.operations import operate
from referee.cards import parse_card
from referee.describe import describe, describe_input, format_time
from referee.errors import CardError
from referee.games import game as game_named
from referee.model import Act, Input, Verdict

if TYPE_CHECKING:
    from cardtable.service import RefereeService

log = logging.getLogger("cardtable.console")

CONSOLE_HELP = """\
Inputs (seat number first):  lay SEAT [CARD] | slap SEAT | play SEAT CARD [CARD…] [as CARD]
                             draw SEAT [CARD] | pass SEAT | call SEAT | reshuffle SEAT
Operator:                    pause | resume | end | new | deal | state | help | quit
                             correct CARD (the last card laid or drawn was CARD)
                             correct LINE CARD (the card of journal line LINE was CARD)
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
    if len(words) < 2 or not words[1].isdecimal():
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


def _watchable_fd(stream: Any) -> int | None:
    """The descriptor of a terminal, pipe or socket the event loop can watch, else None."""
    try:
        fd = int(stream.fileno())
        mode = os.fstat(fd).st_mode
    except (AttributeError, OSError, ValueError, io.UnsupportedOperation):
        return None
    return fd if stat.S_ISCHR(mode) or stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) else None


class ConsoleEdge:
    """Typed inputs and operator commands from a text stream (standard input by default).

    Each line gets an answer: the verdicts an input led to (a refusal starts with ``?``), or
    the result of an operator command. On a terminal it greets with a banner, shows a prompt,
    and shows every verdict of the table as a line in plain words (it is then also an output
    of the service)."""

    #: Lines are stamped with the service clock as they are read: nothing of it comes late.
    own_stamps = False

    def __init__(self, stream: Any = None, echo: Callable[[str], None] | None = None, *,
                 who: str = "console") -> None:
        self.stream = stream or sys.stdin
        #: Who types here, for the operator log (:mod:`cardtable.operations`).
        self.who = who
        self.echo = echo or (lambda text: print(text, flush=True))
        self._task: asyncio.Task[None] | None = None
        self.interactive = bool(getattr(self.stream, "isatty", lambda: False)())
        self._answering = False
        self._service: RefereeService | None = None

    async def start(self, service: RefereeService) -> None:
        """Greet (on a terminal) and read lines in the background."""
        self._service = service
        if self.interactive:
            spec = game_named(service.config.game)
            self.echo(f"{spec.title} at table {service.config.table_id}: "
                      f"{', '.join(service.config.seats)}. Type 'help' for the commands, "
                      "'quit' to stop the referee.")
            if service.other_game is not None:
                self.echo(f"Note: {service.other_game}.")
            self._prompt()
        self._task = asyncio.create_task(self._read(service))

    def _prompt(self) -> None:
        if self.interactive:
            print("> ", end="", flush=True)

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """As an output: show the table's verdicts on the terminal, in plain words (not those
        of the console's own inputs, which :meth:`answer` shows)."""
        if not self.interactive or self._answering:
            return
        seats = state.get("seats") or []
        lang = self._language()
        for v in verdicts:
            self.echo(f"{format_time(self._game_time(v.t))}  "
                      f"{describe(v.to_json(), seats, lang)}")

    def _language(self) -> Language:
        """The table's language (``[table] language``): the words of the verdicts shown."""
        return language(self._service.config.language if self._service is not None else "en")

    def _game_time(self, t: int) -> int:
        """``t`` as the time into the game: from its first input (the table clock itself
        counts from the machine's start)."""
        table = self._service.table if self._service is not None else None
        start = table.inputs[0].t if table is not None and table.inputs else t
        return max(0, t - start)

    async def _read(self, service: RefereeService) -> None:
        """Answer each line until the end of the stream.

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
                await self.answer(service, line)
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
                    await self.answer(service, line + "\n")
                if not data:
                    if pending:
                        await self.answer(service, pending)
                    return
        finally:
            loop.remove_reader(fd)

    async def answer(self, service: RefereeService, line: str) -> bool:
        """Act on one line and echo what came of it; False if it was refused or not
        understood (its answer then starts with ``?``)."""
        self._service = service  # a socket's console is never started: its table's language
        try:
            try:
                parsed = parse_console_line(line, service.clock.now())
            except ValueError as exc:
                self.echo(f"? {exc}")
                return False
            if not isinstance(parsed, Input):
                return self.handle(service, line)
            self._answering = True
            try:
                judged, verdicts = await service.judge(parsed)
            finally:
                self._answering = False
            return self._show_outcome(service, parsed, judged, verdicts)
        except Exception as exc:  # a bug must not end the console: say it, log it, go on
            log.exception("console line %r", line[:200])
            self.echo(f"? that line could not be handled ({type(exc).__name__}); it is in "
                      "the referee's log")
            return False
        finally:
            self._prompt()

    def _show_outcome(self, service: RefereeService, inp: Input, judged: bool,
                      verdicts: list[Verdict]) -> bool:
        seats = list(service.config.seats)
        lang = self._language()
        ok = judged
        for v in verdicts:
            refused = not judged or (v.verdict in ("illegal", "desync")
                                     and v.get("seat") == inp.seat)
            ok = ok and not refused
            self.echo(("? " if refused else "") + describe(v.to_json(), seats, lang))
        if judged and not verdicts:
            if inp.act == "lay" and inp.card is None:  # a virtual deck: the referee turned it
                pile = service.state().get("pile") or []
                inp = replace(inp, card=parse_card(pile[-1]) if pile and pile[-1] else None)
            self.echo(f"ok: {describe_input(inp.to_json(), seats, hidden=False, tr=lang)}")
        return ok

    def handle(self, service: RefereeService, line: str) -> bool:
        """Act on one typed line without waiting for an input's judgement (inputs are handed
        in); False if it was refused or not understood."""
        self._service = service
        try:
            parsed = parse_console_line(line, service.clock.now())
        except ValueError as exc:
            self.echo(f"? {exc}")
            return False
        if isinstance(parsed, Input):
            service.submit(parsed)
            return True
        words = parsed.split()
        if not words:
            return True
        cmd = words[0].lower()
        if cmd == "state":
            self.echo(json.dumps(service.state(), ensure_ascii=False))
            return True
        if cmd == "help":
            self.echo(CONSOLE_HELP)
            return True
        if cmd == "quit":
            self.echo(self._language().gettext("stopping the referee"))
            service.stop()
            return True
        args: dict[str, Any] = {}
        if cmd == "correct" and len(words) > 1:
            if words[1].isdecimal() and len(words) > 2:
                args = {"line": int(words[1]), "card": " ".join(words[2:])}
            else:
                args = {"card": " ".join(words[1:])}
        outcome = operate(service, cmd, by=self.who, args=args, lang=self._language())
        self.echo(outcome.line())
        return outcome.ok

    async def stop(self) -> None:
        """Stop reading."""
        if self._task is not None:
            self._task.cancel()


class SocketConsole:
    """The operator console on a Unix socket, for a referee that runs as a service with no
    terminal: ``referee console --socket PATH`` connects to it. Each line sent is answered like
    a typed console line; the answer ends with a line holding a single ``.``; a refusal starts
    with ``?``. ``quit`` closes the connection (not the referee).

    Bounded, so that no client can starve the others or the referee: at most
    :attr:`max_clients` connections at once (one more is told so and closed), a connection
    idle for :attr:`idle_s` seconds is closed, and a line longer than :attr:`max_line`
    bytes is refused with an answer and the connection closed."""

    #: Lines are stamped with the service clock as they are read: nothing of it comes late.
    own_stamps = False

    END = "."

    def __init__(self, path: str | os.PathLike[str], *, max_clients: int = 8,
                 idle_s: float = 120.0, max_line: int = 4096) -> None:
        self.path = Path(path)
        self.max_clients = max_clients
        self.idle_s = idle_s
        self.max_line = max_line
        self.clients = 0
        self._server: asyncio.AbstractServer | None = None

    async def start(self, service: RefereeService) -> None:
        """Listen on the socket (a stale socket file from a crash is replaced)."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.path.is_socket():
            self.path.unlink()

        async def client(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            replies: list[str] = []

            async def send(lines: list[str]) -> None:
                writer.write("".join(f"{r}\n" for r in [*lines, self.END]).encode())
                await writer.drain()

            if self.clients >= self.max_clients:
                with contextlib.suppress(ConnectionError):
                    await send([f"? too many console connections ({self.max_clients}); "
                                "try again later"])
                writer.close()
                return
            self.clients += 1
            console = ConsoleEdge(stream=io.StringIO(), echo=replies.append,
                                  who="console socket")
            try:
                while True:
                    try:
                        line = await asyncio.wait_for(reader.readline(), self.idle_s)
                    except TimeoutError:
                        await send([f"? closed after {self.idle_s:g} s without a line"])
                        break
                    except (ValueError, asyncio.LimitOverrunError):
                        await send([f"? a line longer than {self.max_line} bytes is not "
                                    "a console line; closing"])
                        break
                    if not line:
                        break
                    text = line.decode("utf-8", "replace")
                    if text.lower().split()[:1] == ["quit"]:
                        break  # here quit closes this connection, whatever follows it
                    replies.clear()
                    await console.answer(service, text)
                    await send(replies)
            except ConnectionError:
                pass
            finally:
                self.clients -= 1
                writer.close()

        # The socket file is made 0660 as it is bound (the referee's group may steer the
        # table), never wider for a moment: the umask is the process's, set only for the bind.
        old = os.umask(0o117)
        try:
            self._server = await asyncio.start_unix_server(client, path=str(self.path),
                                                           limit=self.max_line)
        finally:
            os.umask(old)
        os.chmod(self.path, 0o660)

    async def stop(self) -> None:
        """Stop listening and remove the socket file."""
        if self._server is not None:
            self._server.close()
            await self._server.wait_closed()
        with contextlib.suppress(OSError):
            self.path.unlink()


def console_client(path: str, commands: list[str], stdin: Any = None,
                   out: Callable[[str], None] = print) -> int:
    """Send console lines to a running referee's socket and print its answers; 0 if every
    line was taken, 1 if one was refused or not understood (its answer starts with ``?``)."""
    import socket

    status = 0
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as sock:
        sock.connect(path)
        reader = sock.makefile("r", encoding="utf-8")
        lines = commands or iter((stdin or sys.stdin).readline, "")
        for line in lines:
            try:
                sock.sendall((line.rstrip("\n") + "\n").encode())
            except (BrokenPipeError, ConnectionResetError):
                # The referee refused the connection (too many) and closed it: its answer
                # may still be waiting to be read.
                try:
                    said = [r.rstrip("\n") for r in iter(reader.readline, "")]
                except OSError:
                    said = []
                for reply in said or ["? the referee closed the connection"]:
                    out(reply)
                return 1
            if line.strip().lower() == "quit":
                break
            ended = False
            for reply in iter(reader.readline, ""):
                if reply.rstrip("\n") == SocketConsole.END:
                    ended = True
                    break
                if reply.startswith("?"):
                    status = 1
                out(reply.rstrip("\n"))
            if not ended:
                out("? the referee closed the connection")
                return 1
    return status
