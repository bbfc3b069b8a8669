"""Enrolling a physical deck: a person reads all 52 tagged cards on the board's reader, card by
card, into a deck file (:mod:`firmware_bridge.deck`); and checking which card a tag is.

``referee deck enroll`` (:class:`Enrollment` is the logic, :func:`run_enroll` the session)
names the card to read next, saves after every change (so a session can stop and resume),
refuses a card read twice or an unknown tag with a clear message and no change, and lets the
operator correct a misread card (``undo``, ``fix QH``, ``swap QH QD``, ``as QH``, ``skip``,
``check``). ``referee deck check`` (:func:`run_check`) says which card each read tag is.
"""

from __future__ import annotations

import asyncio
import errno
import re
import socket
import sys
import threading
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from firmware_bridge.deck import Deck, tag_text
from referee.cards import Card, full_deck, parse_card
from referee.errors import CardError

#: What a port that cannot be opened most likely means, by its errno.
_PORT_HINTS = {
    errno.ENOENT: "no such port: is the board plugged in? (ls /dev/ttyACM* /dev/ttyUSB*)",
    errno.EACCES: "permission denied: add yourself to the group dialout "
                  "(sudo adduser $USER dialout, then log in again)",
    errno.EBUSY: "busy: another program has the port open",
    errno.ENXIO: "no such device: is the board plugged in? (ls /dev/ttyACM* /dev/ttyUSB*)",
    errno.ENOTTY: "not a serial port (a file, or a terminal that is not the board's)",
    errno.ECONNREFUSED: "nothing answers at that address (is the emulator running?)",
    errno.EISDIR: "is a folder, not a port",
}


def _port_errno(exc: BaseException) -> int | None:
    """The errno of a port that would not open: the exception's own, or the one pyserial puts
    in its words ("Could not configure port: (25, 'Inappropriate ioctl for device')", "[Errno
    -2] Name or service not known")."""
    code = getattr(exc, "errno", None)
    if isinstance(code, int):
        return code
    found = re.search(r"\((-?\d+), '|\[Errno (-?\d+)\]", str(exc))
    return int(found.group(1) or found.group(2)) if found else None


async def open_link(link: Any, port: str, out: Callable[[str], None]) -> bool:
    """Open ``link`` to the board on ``port``; False, after saying why in the person's words,
    when the port cannot be opened (no board, no permission, busy, a bad URL)."""
    try:
        await link.open()
    except Exception as exc:  # noqa: BLE001 - pyserial's errors have no common base but this
        code = _port_errno(exc)
        hint = _PORT_HINTS.get(code or 0)
        if hint is None and (isinstance(exc, socket.gaierror)
                             or code in (socket.EAI_NONAME, socket.EAI_AGAIN)):
            hint = "the host's name did not resolve: check the address"
        out(f"Cannot open {port}: {hint or exc}")
        return False
    return True


@dataclass(frozen=True, slots=True)
class Reply:
    """What a read or a command did: ``ok`` (it did what was asked), ``changed`` (the deck
    changed) and the words for the person."""

    ok: bool
    changed: bool
    message: str


HELP = """\
Read each card the prompt names on the reader. Commands:
  undo         forget the last card enrolled, and ask for it again
  fix CARD     forget CARD's tag (it was misread), and ask for it next
  swap A B     exchange the tags of cards A and B
  as CARD      the next card read is CARD (out of turn)
  skip         ask for the current card later
  check        the next read only says which card it is
  missing      list the cards not enrolled yet
  quit         save and stop (run again to continue)"""


class Enrollment:
    """The enrollment walk: which card to read next, what each read and command does."""

    def __init__(self, deck: Deck, order: Sequence[Card] | None = None) -> None:
        self.deck = deck
        order = list(order) if order is not None else full_deck()
        self._queue: list[Card] = [c for c in order if deck.tag_for(c) is None]
        self._history: list[tuple[Card, bytes]] = []
        self._as: Card | None = None
        self._check = False

    @property
    def expected(self) -> Card | None:
        """The card the next read is taken as (``None`` when all are enrolled)."""
        if self._as is not None:
            return self._as
        return self._queue[0] if self._queue else None

    @property
    def done(self) -> bool:
        """All 52 cards are enrolled."""
        return self.deck.complete

    def prompt(self) -> str:
        """What to do now."""
        n = len(self.deck)
        if self._check:
            return f"[{n}/52] Read any card to see which it is."
        card = self.expected
        if card is None:
            return f"[{n}/52] All cards are enrolled."
        return f"[{n}/52] Read the {card.name()} ({card})."

    def read(self, tag: bytes) -> Reply:
        """A tag was read."""
        tag = bytes(tag)
        known = self.deck.card_for(tag)
        if self._check or self.expected is None:
            self._check = False
            if known is None:
                return Reply(False, False, f"Unknown tag {tag_text(tag)}: not in this deck.")
            return Reply(True, False, f"That is the {known.name()} ({known}).")
        if known is not None:
            last = self._history[-1][0] if self._history else None
            if known == last:
                return Reply(False, False, f"The {known.name()} ({known}) again: it is already "
                             f"enrolled. Lift it and read the {self.expected.name()}.")
            return Reply(False, False,
                         f"This tag is already the {known.name()} ({known}) — a card read "
                         f"twice? Nothing changed. Read the {self.expected.name()}, or type "
                         f"'fix {known}' if the {known.name()} was misread.")
        card = self.expected
        self.deck.add(tag, card)
        self._history.append((card, tag))
        if self._as is not None:
            self._as = None
        if card in self._queue:
            self._queue.remove(card)
        return Reply(True, True, f"{card} ✓ ({tag_text(tag)}).")

    def command(self, text: str) -> Reply:
        """An operator command (see :data:`HELP`)."""
        words = text.strip().split(None, 1)
        if not words:
            return Reply(True, False, "")
        verb, rest = words[0].lower(), (words[1] if len(words) > 1 else "")
        try:
            if verb == "undo":
                return self._undo()
            if verb == "fix":
                return self._fix(parse_card(rest))
            if verb == "as":
                card = parse_card(rest)
                if self.deck.tag_for(card) is not None:
                    return Reply(False, False, f"The {card.name()} is enrolled already; "
                                 f"'fix {card}' first to enroll it again.")
                self._as = card
                return Reply(True, False, f"The next card read is taken as the {card.name()}.")
            if verb == "swap":
                a_text, _, b_text = rest.partition(" ")
                return self._swap(parse_card(a_text), parse_card(b_text))
            if verb == "skip":
                if not self._queue:
                    return Reply(False, False, "Nothing to skip.")
                self._as = None
                self._queue.append(self._queue.pop(0))
                return Reply(True, False, "Skipped; it comes again at the end.")
            if verb == "check":
                self._check = True
                return Reply(True, False, "The next read only says which card it is.")
            if verb == "missing":
                missing = self.deck.missing()
                return Reply(True, False, "Missing: " + (" ".join(map(str, missing)) or "none"))
            if verb in ("help", "?"):
                return Reply(True, False, HELP)
        except CardError as exc:
            return Reply(False, False, str(exc))
        return Reply(False, False, f"Unknown command {verb!r}; type 'help'.")

    def _undo(self) -> Reply:
        while self._history:
            card, tag = self._history.pop()
            if self.deck.tag_for(card) == tag:
                self.deck.remove(card)
                self._queue.insert(0, card)
                self._as = None
                return Reply(True, True, f"Forgot the {card.name()} ({tag_text(tag)}).")
        return Reply(False, False, "Nothing to undo.")

    def _fix(self, card: Card) -> Reply:
        tag = self.deck.remove(card)
        if tag is None:
            return Reply(False, False, f"The {card.name()} has no tag yet.")
        if card in self._queue:
            self._queue.remove(card)
        self._queue.insert(0, card)
        self._as = None
        return Reply(True, True, f"Forgot the {card.name()}'s tag {tag_text(tag)}; read it now.")

    def _swap(self, a: Card, b: Card) -> Reply:
        ta, tb = self.deck.tag_for(a), self.deck.tag_for(b)
        if ta is None or tb is None:
            which = a if ta is None else b
            return Reply(False, False, f"The {which.name()} has no tag to swap.")
        self.deck.remove(a)
        self.deck.remove(b)
        self.deck.add(tb, a)
        self.deck.add(ta, b)
        return Reply(True, True, f"Swapped: {a} is now {tag_text(tb)}, {b} is {tag_text(ta)}.")


async def run_enroll(
    deck_path: str | Path,
    port: str,
    *,
    lines: AsyncIterator[str] | None = None,
    out: Callable[[str], None] = print,
    reader: int | None = None,
    baudrate: int = 115200,
    name: str | None = None,
    connect_timeout: float = 10.0,
    link_options: dict[str, Any] | None = None,
) -> int:
    """Enroll the deck in ``deck_path`` (resumed if the file exists) from the board on
    ``port``; typed commands come from ``lines`` (default: stdin). Returns an exit status:
    0 when all 52 cards are enrolled or the person quit, 2 if the board never answered."""
    from firmware_bridge.events import BoardEvent, LinkHealth, LinkStatus
    from firmware_bridge.link import Link
    from firmware_bridge.protocol import BuzzerPattern

    path = Path(deck_path)
    deck = Deck.load(path) if path.exists() else Deck(name or path.stem)
    if name:
        deck.name = name
    walk = Enrollment(deck)
    if lines is None:
        lines = _stdin_lines()
    link = Link(port, baudrate=baudrate, **(link_options or {}))
    if not await open_link(link, port, out):
        return 2
    try:
        out(f"Waiting for the board on {port} …")
        try:
            await link.wait_online(connect_timeout)
        except TimeoutError:
            out(f"No board answered on {port} within {connect_timeout:g} s.")
            return 2
        board = link.board
        out(f"Board online: {board.name if board else '?'}. Deck {str(path)!r}, "
            f"{len(deck)} of 52 enrolled. Type 'help' for commands.")
        out(walk.prompt())
        line_task: asyncio.Task[str | None] | None = None
        event_task: asyncio.Task[Any] | None = None
        try:
            while not walk.done:
                if line_task is None:
                    line_task = asyncio.ensure_future(_next_line(lines))
                if event_task is None:
                    event_task = asyncio.ensure_future(link.next_event())
                done, _ = await asyncio.wait({line_task, event_task},
                                             return_when=asyncio.FIRST_COMPLETED)
                if event_task in done:
                    ev = event_task.result()
                    event_task = None
                    if isinstance(ev, LinkStatus):
                        out("Board offline: " + ev.reason if ev.kind == "board_offline"
                            else "Board back online.")
                        continue
                    if isinstance(ev, LinkHealth):
                        out(ev.reason[0].upper() + ev.reason[1:] + ".")
                        continue
                    if not isinstance(ev, BoardEvent) or ev.kind != "card":
                        continue
                    if reader is not None and ev.reader != reader:
                        continue
                    reply = walk.read(ev.tag or b"")
                    _feedback(link, reply, BuzzerPattern)
                    _report(reply, walk, path, out)
                if line_task in done:
                    text = line_task.result()
                    line_task = None
                    if text is None or text.strip().lower() in ("quit", "exit", "q"):
                        out(f"Stopped with {len(deck)} of 52 enrolled; saved to {path}. "
                            "Run again to continue.")
                        deck.save(path)
                        return 0
                    reply = walk.command(text)
                    _report(reply, walk, path, out)
        finally:
            for task in (line_task, event_task):
                if task is not None:
                    task.cancel()
        deck.save(path)
        out(f"All 52 cards enrolled; saved to {path}.")
        return 0
    finally:
        await link.close()


def _report(reply: Reply, walk: Enrollment, path: Path, out: Callable[[str], None]) -> None:
    if reply.changed:
        walk.deck.save(path)
    if reply.message:
        out(reply.message)
    if not walk.done:
        out(walk.prompt())


def _feedback(link: Any, reply: Reply, patterns: Any) -> None:
    if link.online:
        if reply.ok:
            link.buzz(patterns.CHIRP, 2500, 60)
        else:
            link.buzz(patterns.ALARM, 800, 300)


async def _next_line(lines: AsyncIterator[str]) -> str | None:
    try:
        return await anext(lines)
    except StopAsyncIteration:
        return None


async def _stdin_lines() -> AsyncIterator[str]:
    loop = asyncio.get_running_loop()
    queue: asyncio.Queue[str | None] = asyncio.Queue()

    def pump() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(queue.put_nowait, line)
        loop.call_soon_threadsafe(queue.put_nowait, None)

    threading.Thread(target=pump, daemon=True, name="stdin").start()
    while True:
        line = await queue.get()
        if line is None:
            return
        yield line


async def run_check(deck_path: str | Path, port: str, *, out: Callable[[str], None] = print,
                    baudrate: int = 115200, count: int | None = None,
                    connect_timeout: float = 10.0) -> int:
    """Say which card each read tag is (``Unknown tag`` for tags not in the deck)."""
    from firmware_bridge.events import BoardEvent
    from firmware_bridge.link import Link

    deck = Deck.load(deck_path)
    link = Link(port, baudrate=baudrate, deck=deck)
    if not await open_link(link, port, out):
        return 2
    try:
        try:
            await link.wait_online(connect_timeout)
        except TimeoutError:
            out(f"No board answered on {port} within {connect_timeout:g} s.")
            return 2
        out(f"Deck {deck.name!r}: {len(deck)} cards. Read cards (Ctrl-C to stop).")
        seen = 0
        while count is None or seen < count:
            ev = await link.next_event()
            if isinstance(ev, BoardEvent) and ev.kind == "card":
                seen += 1
                if ev.card is None:
                    out(f"reader {ev.reader}: unknown tag {ev.tag_hex}: not in this deck")
                else:
                    out(f"reader {ev.reader}: {ev.card} ({ev.card.name()})")
    finally:
        await link.close()
    return 0
