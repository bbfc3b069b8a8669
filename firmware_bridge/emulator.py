"""A virtual table board on a pseudo-terminal, speaking the real protocol, with faults on demand.

:class:`VirtualBoard` opens a pty pair (``os.openpty``); the host opens the slave end
(``board.path``, e.g. ``/dev/pts/7``) exactly as it would open ``/dev/ttyACM0``, through the real
pyserial stack. The board side is :class:`BoardCore`, the same protocol logic a firmware runs:
HELLO, heartbeats, time-sync replies, card reads and button edges sent reliably (kept and resent
until acknowledged, however long the host is away), LED/buzzer/reader commands applied in order.

Its clock is a :class:`BoardClock`: microsecond ticks in 32 bits that run ``drift_ppm`` fast or
slow against the host's monotonic clock and start at any value (``tick_start``, e.g. just before
the wrap). :class:`Faults` damages the bytes on the line: corrupted, dropped, duplicated and
delayed bytes, in either direction (:meth:`VirtualBoard.set_faults` changes them while it
runs), and :meth:`VirtualBoard.mute` pulls the cable. Faults beyond a damaged line:
:meth:`VirtualBoard.unplug` / :meth:`~VirtualBoard.replug` take the device away and bring it
back (a new pty, the ``link_path`` symlink following it; the board keeps its events, as one
powered on its own does), :meth:`~VirtualBoard.inject` puts raw bytes on the line (noise, an
oversized frame), :meth:`~VirtualBoard.inject_frame` a frame with a good CRC around any type
and payload, and :meth:`~VirtualBoard.send_event` a reliable event that contradicts the
board's own HELLO (a reader or button it does not have).

Scripts (:class:`Script`, JSON) lay cards and press buttons at given board times.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import random
import re
import time
import tty
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from firmware_bridge.link import negotiate
from firmware_bridge.protocol import (
    ALL,
    MIN_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
    Ack,
    Button,
    Buzzer,
    CardRead,
    DecodeError,
    Error,
    ErrorCode,
    Frame,
    Heartbeat,
    Hello,
    Led,
    Message,
    Reader,
    Role,
    StreamDecoder,
    TimeSyncReply,
    TimeSyncRequest,
    encode_frame,
    is_reliable,
    raw_frame,
)
from firmware_bridge.reliable import SEQ_MOD, Receiver, Sender
from referee.errors import RefereeError

if TYPE_CHECKING:
    from firmware_bridge.deck import Deck
    from referee.cards import Card

TICK_MASK = 0xFFFF_FFFF


#: How much of its own history the board keeps for the tests and the console to look at:
#: the newest this many of each kind (a board emulated for hours kept every frame it ever
#: sent or took, 140 KB a minute in bench/soak.py).
KEPT = 1000


def _keep(history: list[Any], item: Any) -> None:
    """Append ``item``, and drop the oldest once ``history`` holds twice :data:`KEPT`."""
    history.append(item)
    if len(history) > 2 * KEPT:
        del history[:-KEPT]


@dataclass(slots=True)
class BoardClock:
    """The board's crystal: ticks (µs) against host nanoseconds, with drift and any start."""

    drift_ppm: float = 0.0
    tick_start: int = 0
    host_start: int = 0

    def ticks(self, host_ns: int) -> int:
        """Unwrapped ticks at host time ``host_ns``."""
        return self.tick_start + int((host_ns - self.host_start) * (1 + self.drift_ppm * 1e-6)
                                     // 1000)

    def raw(self, host_ns: int) -> int:
        """The 32-bit tick value the board shows at ``host_ns``."""
        return self.ticks(host_ns) & TICK_MASK

    def host_ns(self, ticks: int) -> float:
        """The host time at which the board's (unwrapped) count reaches ``ticks``."""
        return self.host_start + (ticks - self.tick_start) * 1000 / (1 + self.drift_ppm * 1e-6)


@dataclass(slots=True)
class Faults:
    """What happens to each byte on the line (probabilities per byte)."""

    corrupt: float = 0.0
    drop: float = 0.0
    duplicate: float = 0.0
    delay: float = 0.0
    delay_ms: float = 5.0
    #: ``both``, ``to_host`` or ``to_board``.
    direction: str = "both"
    seed: int | None = None

    def any(self) -> bool:
        """True if any fault is switched on."""
        return bool(self.corrupt or self.drop or self.duplicate or self.delay)


class FaultyLine:
    """One direction of the serial line: applies faults, keeps byte order, releases bytes on
    time. ``latency()`` (ns, optional) delays each write, as a wire or USB would."""

    def __init__(self, faults: Faults | None, rng: random.Random,
                 latency: Callable[[], int] | None = None) -> None:
        self.faults = faults
        self.rng = rng
        self.latency = latency
        self.queue: deque[tuple[int, bytes]] = deque()
        self.stats = {"corrupted": 0, "dropped": 0, "duplicated": 0, "delayed": 0}

    def push(self, data: bytes, now: int, *, clean: bool = False) -> None:
        """Bytes written at ``now`` (``clean``: past the faults, as they are)."""
        if not data:
            return
        f = self.faults
        start = now + (self.latency() if self.latency else 0)
        release = max(self.queue[-1][0], start) if self.queue else start
        if clean or f is None or not f.any():
            self.queue.append((release, data))
            return
        rng = self.rng
        seg = bytearray()
        for byte in data:
            if f.delay and rng.random() < f.delay:
                if seg:
                    self.queue.append((release, bytes(seg)))
                    seg = bytearray()
                release += int(rng.uniform(0, f.delay_ms) * 1e6)
                self.stats["delayed"] += 1
            if f.drop and rng.random() < f.drop:
                self.stats["dropped"] += 1
                continue
            if f.corrupt and rng.random() < f.corrupt:
                byte ^= rng.randrange(1, 256)
                self.stats["corrupted"] += 1
            seg.append(byte)
            if f.duplicate and rng.random() < f.duplicate:
                seg.append(byte)
                self.stats["duplicated"] += 1
        if seg:
            self.queue.append((release, bytes(seg)))

    def due(self, now: int) -> bytes:
        """Bytes that have arrived by ``now``."""
        out = bytearray()
        while self.queue and self.queue[0][0] <= now:
            out += self.queue.popleft()[1]
        return bytes(out)

    def next_release(self) -> int | None:
        """When the next bytes arrive (``None``: nothing on the line)."""
        return self.queue[0][0] if self.queue else None


class BoardCore:
    """The board's protocol state machine (what a firmware does), without I/O.

    ``now()`` is the host clock the emulated world runs on; the board only ever sees its own
    ticks through ``clock``.
    """

    def __init__(
        self,
        clock: BoardClock,
        now: Callable[[], int],
        *,
        boot_id: int | None = None,
        readers: int = 4,
        buttons: int = 8,
        seats: int = 8,
        name: str = "virtual board",
        heartbeat_s: float = 0.2,
        lost_after_s: float = 1.2,
        hello_s: float = 0.5,
        backlog_limit: int | None = None,
    ) -> None:
        self.clock = clock
        self.now = now
        self.boot_id = boot_id if boot_id is not None else int.from_bytes(os.urandom(4), "little")
        self.readers, self.buttons, self.seats, self.name = readers, buttons, seats, name
        self.heartbeat_ns = int(heartbeat_s * 1e9)
        self.lost_after_ns = int(lost_after_s * 1e9)
        self.hello_ns = int(hello_s * 1e9)
        self.sender = Sender(backlog_limit=backlog_limit)
        self.receiver: Receiver[Message] = Receiver(ordered=True)
        self.decoder = StreamDecoder()
        self.host_boot: int | None = None
        self.handshaken = False
        self._last_rx: int | None = None
        self._was_online = False
        self._useq = 0
        self._out = bytearray()
        self._next_heartbeat = 0
        self._next_hello_request = 0
        self._overflow_reported = 0
        # What the host asked for:
        self.leds: dict[int, Led] = {}
        self.buzzes: list[Buzzer] = []
        self.readers_on: dict[int, bool] = {r: True for r in range(readers)}
        self.commands: list[Message] = []
        self.events_sent: list[CardRead | Button] = []
        self.bad_frames = 0
        #: ERROR frames the host sent (what it refused of ours, and why).
        self.errors: list[Error] = []

    @property
    def host_online(self) -> bool:
        """True while the board has a handshaken host that it heard from lately."""
        return (self.handshaken and self._last_rx is not None
                and self.now() - self._last_rx <= self.lost_after_ns)

    def ticks(self) -> int:
        """The board's 32-bit tick count now."""
        return self.clock.raw(self.now())

    def _send_now(self, msg: Message) -> None:
        seq = self._useq
        self._useq = (self._useq + 1) % SEQ_MOD
        self._out += encode_frame(seq, msg)

    def _hello(self, reply: bool) -> None:
        self._send_now(Hello(Role.BOARD, self.boot_id, self.sender.oldest(), reply=reply,
                             ticks=self.ticks(), readers=self.readers, buttons=self.buttons,
                             seats=self.seats, name=self.name))

    def boot(self) -> None:
        """Power on: announce with a HELLO."""
        self._hello(False)
        self._next_heartbeat = self.now() + self.heartbeat_ns

    # -- board events ------------------------------------------------------------------------

    def card_read(self, tag: bytes, reader: int = 0, ticks: int | None = None) -> bool:
        """A tag came under reader ``reader`` (ignored while that reader is switched off);
        ``ticks``: the board time of the read (default now)."""
        if not self.readers_on.get(reader, False):
            return False
        return self._event(CardRead(reader, tag, self.ticks() if ticks is None else
                                    ticks & TICK_MASK))

    def button(self, button: int, pressed: bool, ticks: int | None = None) -> bool:
        """Button edge at board time ``ticks`` (default now)."""
        return self._event(Button(button, pressed, self.ticks() if ticks is None else
                                   ticks & TICK_MASK))

    def send_event(self, msg: CardRead | Button) -> bool:
        """Send a board event reliably exactly as given, even one this board could not make (a
        reader or button it does not have): fault injection."""
        return self._event(msg)

    def _event(self, msg: CardRead | Button) -> bool:
        if not self.sender.submit(msg):
            return False
        _keep(self.events_sent, msg)
        return True

    # -- input -------------------------------------------------------------------------------

    def receive(self, data: bytes) -> None:
        """Bytes that arrived from the host."""
        for item in self.decoder.feed(data):
            if isinstance(item, DecodeError):
                self.bad_frames += 1
                continue
            self._last_rx = self.now()
            self._on_frame(item)
        for ack in self.receiver.take_acks():
            self._send_now(ack)

    def _on_frame(self, frame: Frame) -> None:
        msg = frame.msg
        if isinstance(msg, Hello):
            if msg.role != Role.HOST:
                return
            ours = (MIN_PROTOCOL_VERSION, PROTOCOL_VERSION)
            if negotiate(ours, (msg.min_version, msg.version)) is None:
                self._send_now(Error(ErrorCode.VERSION, frame.seq, "no common protocol version"))
                return
            if msg.boot_id != self.host_boot:
                self.receiver.reset(msg.next_seq)
                self.host_boot = msg.boot_id
            self.handshaken = True
            if not msg.reply:
                self._hello(True)
                # The host (re)starts its handshake: it came back, perhaps after an outage this
                # board did not notice. Everything unacknowledged goes out again at once,
                # oldest first, right behind the HELLO.
                self.sender.resend_all_now(self.now())
        elif isinstance(msg, TimeSyncRequest):
            rx = self.ticks()
            self._send_now(TimeSyncReply(frame.seq, rx, self.ticks()))
        elif isinstance(msg, Ack):
            self.sender.on_ack(msg, self.now())
        elif isinstance(msg, Heartbeat):
            if msg.boot_id != self.host_boot:
                self.handshaken = False
                self._ask_hello()
        elif isinstance(msg, Error):
            _keep(self.errors, msg)
        elif is_reliable(msg):
            if not self.handshaken:
                self._ask_hello()
                return
            self.receiver.note(frame.seq)
            for cmd in self.receiver.accept(frame.seq, msg):
                self._apply(cmd)

    def _ask_hello(self) -> None:
        now = self.now()
        if now >= self._next_hello_request:
            self._hello(False)
            self._next_hello_request = now + self.hello_ns

    def _apply(self, cmd: Message) -> None:
        _keep(self.commands, cmd)
        if isinstance(cmd, Led):
            for seat in (range(self.seats) if cmd.seat == ALL else (cmd.seat,)):
                self.leds[seat] = cmd
        elif isinstance(cmd, Buzzer):
            _keep(self.buzzes, cmd)
        elif isinstance(cmd, Reader):
            for r in (range(self.readers) if cmd.reader == ALL else (cmd.reader,)):
                self.readers_on[r] = cmd.on

    # -- timers ------------------------------------------------------------------------------

    def poll(self) -> None:
        """Heartbeats and (re)sends that are due."""
        now = self.now()
        if now >= self._next_heartbeat:
            self._send_now(Heartbeat(self.boot_id, self.ticks(), self.sender.pending))
            self._next_heartbeat = now + self.heartbeat_ns
        if self.sender.overflowed > self._overflow_reported:
            lost = self.sender.overflowed - self._overflow_reported
            self._overflow_reported = self.sender.overflowed
            self._send_now(Error(ErrorCode.QUEUE_OVERFLOW, 0, f"{lost} events dropped"))
        online = self.host_online
        if online and not self._was_online:
            self.sender.resend_all_now(now)
        self._was_online = online
        if online:
            for wire in self.sender.poll(now):
                self._out += wire

    def next_deadline(self) -> int:
        """Host time of the next timer."""
        times = [self._next_heartbeat]
        if self.host_online:
            if self.sender.has_ready():
                return self.now()
            dl = self.sender.next_deadline()
            if dl is not None:
                times.append(dl)
            if self._last_rx is not None:
                times.append(self._last_rx + self.lost_after_ns + 1)
        return min(times)

    def take_output(self) -> bytes:
        """Bytes to put on the line."""
        out = bytes(self._out)
        self._out.clear()
        return out


# --------------------------------------------------------------------------------------------
# Scripts


@dataclass(frozen=True, slots=True)
class ScriptStep:
    """One scripted act at ``at`` seconds of board time after the script starts."""

    at: float
    kind: str  # "tag", "button", "mute"
    reader: int = 0
    tag: bytes = b""
    button: int = 0
    pressed: bool = True
    duration: float = 0.0


class ScriptError(RefereeError, ValueError):
    """A script that cannot be read."""


class LinkPathError(RefereeError, FileExistsError):
    """Something other than this emulator's own pty symlink is at the ``link_path``."""


#: Where a pty's slave end lives (Linux, then macOS): a symlink pointing there is one an
#: emulator made, stale if that emulator was killed, and may be taken over.
_PTY_TARGET = re.compile(r"/dev/(pts/\d+|ttys\d+)")


def _is_pty_link(path: Path) -> bool:
    try:
        return _PTY_TARGET.fullmatch(os.readlink(path)) is not None
    except OSError:  # not a symlink
        return False


@dataclass(slots=True)
class Script:
    """Card reads, button edges and cable pulls at board times (seconds from the start).

    JSON: ``{"events": [...]}`` or a bare list, each item one of::

        {"at": 0.5, "lay": "QH", "reader": 0}      a card from the deck under reader 0
        {"at": 0.6, "tag": "04A1B2C3D4E5F6"}       any tag id, in hex
        {"at": 1.0, "button": 3, "pressed": true}  one button edge
        {"at": 1.2, "press": 3, "hold": 0.08}      press, and release after hold seconds
        {"at": 2.0, "mute": 1.5}                   the cable is pulled for 1.5 s
    """

    steps: list[ScriptStep] = field(default_factory=list)

    @classmethod
    def from_json(cls, obj: Any, deck: Deck | None = None) -> Script:
        """Read a script; ``lay`` needs a deck (the synthetic deck if none is given)."""
        from firmware_bridge.deck import synthetic_deck
        from referee.cards import parse_card
        from referee.errors import CardError

        items = obj.get("events") if isinstance(obj, dict) else obj
        if not isinstance(items, list):
            raise ScriptError("a script is a list of events or {\"events\": [...]}")
        deck = deck or synthetic_deck()
        steps: list[ScriptStep] = []
        for n, item in enumerate(items, 1):
            if not isinstance(item, dict) or "at" not in item:
                raise ScriptError(f"event {n}: an object with 'at' (seconds) is needed")
            at = item["at"]
            if not isinstance(at, int | float) or isinstance(at, bool) or at < 0:
                raise ScriptError(f"event {n}: 'at' must be a number of seconds >= 0")
            reader = int(item.get("reader", 0))
            if "lay" in item:
                try:
                    card = parse_card(item["lay"])
                except CardError as exc:
                    raise ScriptError(f"event {n}: {exc}") from None
                tag = deck.tag_for(card)
                if tag is None:
                    raise ScriptError(f"event {n}: {card} has no tag in the deck")
                steps.append(ScriptStep(float(at), "tag", reader=reader, tag=tag))
            elif "tag" in item:
                try:
                    tag = bytes.fromhex(str(item["tag"]))
                except ValueError:
                    raise ScriptError(f"event {n}: tag {item['tag']!r} is not hex") from None
                if not 1 <= len(tag) <= 16:
                    raise ScriptError(f"event {n}: a tag id is 1..16 bytes")
                steps.append(ScriptStep(float(at), "tag", reader=reader, tag=tag))
            elif "button" in item:
                steps.append(ScriptStep(float(at), "button", button=int(item["button"]),
                                        pressed=bool(item.get("pressed", True))))
            elif "press" in item:
                hold = float(item.get("hold", 0.08))
                steps.append(ScriptStep(float(at), "button", button=int(item["press"])))
                steps.append(ScriptStep(float(at) + hold, "button", button=int(item["press"]),
                                        pressed=False))
            elif "mute" in item:
                steps.append(ScriptStep(float(at), "mute", duration=float(item["mute"])))
            else:
                raise ScriptError(f"event {n}: one of lay, tag, button, press, mute is needed")
        steps.sort(key=lambda s: s.at)
        return cls(steps)

    @classmethod
    def load(cls, path: str | Path, deck: Deck | None = None) -> Script:
        """Read a script file."""
        try:
            obj = json.loads(Path(path).read_text(encoding="utf-8"))
        except UnicodeDecodeError:
            raise ScriptError(f"{path}: not a script (not UTF-8 text)") from None
        except json.JSONDecodeError as exc:
            raise ScriptError(f"{path}: not JSON: {exc}") from None
        return cls.from_json(obj, deck)


# --------------------------------------------------------------------------------------------
# The board on a pty


class VirtualBoard:
    """A :class:`BoardCore` on a pseudo-terminal, driven by the asyncio loop it starts in."""

    def __init__(
        self,
        *,
        deck: Deck | None = None,
        faults: Faults | None = None,
        drift_ppm: float = 0.0,
        tick_start: int | None = None,
        seed: int | None = None,
        now: Callable[[], int] = time.monotonic_ns,
        out_limit: int = 65536,
        link_path: str | Path | None = None,
        **core_options: Any,
    ) -> None:
        self.rng = random.Random(seed)
        self.deck = deck
        self.now = now
        start = self.rng.randrange(1 << 32) if tick_start is None else tick_start
        self.clock = BoardClock(drift_ppm, start, now())
        if "boot_id" not in core_options:
            core_options["boot_id"] = self.rng.randrange(1 << 32)
        self.core = BoardCore(self.clock, now, **core_options)
        self.faults = faults
        frng = random.Random(faults.seed if faults and faults.seed is not None
                             else self.rng.randrange(1 << 30))
        to_host = faults if faults and faults.direction in ("both", "to_host") else None
        to_board = faults if faults and faults.direction in ("both", "to_board") else None
        self.line_out = FaultyLine(to_host, frng)
        self.line_in = FaultyLine(to_board, frng)
        self.out_limit = out_limit
        self.overrun = 0
        self.muted = False
        self.plugged = False
        #: A symlink kept pointing at the current pty (what udev's /dev/serial/by-id/… is for a
        #: real board): the host opens this path, and finds the board again after a replug.
        self.link_path = Path(link_path) if link_path is not None else None
        self._link_target: str | None = None  # what our symlink points at, while we have one
        self.path = ""
        self._master = -1
        self._slave = -1
        self._loop: asyncio.AbstractEventLoop | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._pending_out = bytearray()
        self._writing = False

    async def start(self) -> str:
        """Open the pty, power the board on; returns the path the host opens (``link_path``,
        when given, is made a symlink to it: :class:`LinkPathError` if something else is
        there, since only a symlink to a pty, one an emulator made, is replaced)."""
        self._loop = asyncio.get_running_loop()
        self._plug_in()
        self.core.boot()
        self._service()
        return self.path

    def _plug_in(self) -> None:
        assert self._loop is not None
        link = self.link_path
        if link is not None and os.path.lexists(link) and not _is_pty_link(link):
            raise LinkPathError(f"{link}: something is there already and it is not a link "
                                "this emulator made to its pty; give another path")
        master, slave = os.openpty()
        try:
            tty.setraw(slave)
            flags = fcntl.fcntl(master, fcntl.F_GETFL)
            fcntl.fcntl(master, fcntl.F_SETFL, flags | os.O_NONBLOCK)
            path = os.ttyname(slave)
            if link is not None:
                # A fresh name (symlink() never replaces), renamed over the stale link or none.
                tmp = link.with_name(f".{link.name}.{os.getpid()}.{id(self):x}.new")
                tmp.symlink_to(path)
                try:
                    os.replace(tmp, link)
                except BaseException:
                    tmp.unlink(missing_ok=True)
                    raise
                self._link_target = path
        except BaseException:
            os.close(master)
            os.close(slave)
            raise
        self._master, self._slave, self.path = master, slave, path
        self._loop.add_reader(self._master, self._on_readable)
        self.plugged = True

    def unplug(self) -> None:
        """Pull the USB cable: the device goes away (the pty is closed, so the host's port
        fails; the ``link_path`` symlink is removed, as udev removes the device's links). The
        board itself stays powered: it keeps its boot id, its sequence numbers and every event
        not yet acknowledged, and a read made meanwhile waits for the host."""
        if not self.plugged or self._loop is None:
            return
        self.plugged = False
        self._loop.remove_reader(self._master)
        if self._writing:
            self._loop.remove_writer(self._master)
            self._writing = False
        self._pending_out.clear()
        for fd in (self._master, self._slave):
            with contextlib.suppress(OSError):
                os.close(fd)
        self._master = self._slave = -1
        self._remove_link()

    def _remove_link(self) -> None:
        """Remove ``link_path`` if it still is the symlink this board made (not whatever
        someone put there since)."""
        link, target, self._link_target = self.link_path, self._link_target, None
        if link is None or target is None:
            return
        with contextlib.suppress(OSError):
            if os.readlink(link) == target:
                link.unlink()

    def replug(self) -> str:
        """Plug the cable back in: a new pty (a new device node, as after a real replug) that
        ``link_path`` points at again; returns its path."""
        if not self.plugged and self._loop is not None:
            self._plug_in()
            self._service()
        return self.path

    async def close(self) -> None:
        """Power off and close the pty."""
        if self._loop is None:
            return
        if self._timer is not None:
            self._timer.cancel()
        self.unplug()
        self._loop = None

    async def __aenter__(self) -> VirtualBoard:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- scripting ---------------------------------------------------------------------------

    def read_tag(self, tag: bytes, reader: int = 0, ticks: int | None = None) -> bool:
        """A tag under reader ``reader`` now (or at board time ``ticks``)."""
        ok = self.core.card_read(tag, reader, ticks)
        self._service()
        return ok

    def lay(self, card: Card, reader: int = 0) -> bool:
        """The card's tag (from the deck, or the synthetic deck) under reader ``reader``."""
        from firmware_bridge.deck import synthetic_deck

        deck = self.deck or synthetic_deck()
        tag = deck.tag_for(card)
        if tag is None:
            raise KeyError(f"{card} has no tag in the deck")
        return self.read_tag(tag, reader)

    def press(self, button: int, pressed: bool = True, ticks: int | None = None) -> bool:
        """A button edge now (or at board time ``ticks``)."""
        ok = self.core.button(button, pressed, ticks)
        self._service()
        return ok

    def mute(self, muted: bool = True) -> None:
        """Pull (``True``) or plug back (``False``) the cable: nothing passes either way."""
        self.muted = muted

    def set_faults(self, faults: Faults | None) -> None:
        """Damage the line from now on as ``faults`` says (``None``: a clean line)."""
        self.faults = faults
        way = faults.direction if faults is not None else "both"
        self.line_out.faults = faults if way in ("both", "to_host") else None
        self.line_in.faults = faults if way in ("both", "to_board") else None

    def inject(self, data: bytes) -> None:
        """Raw bytes onto the line to the host, in order with what the board sends and past
        the faults: noise, a burst of random bytes, an oversized frame."""
        if self._loop is None:
            return
        self.line_out.push(bytes(data), self.now(), clean=True)
        self._service()

    def inject_frame(self, type_byte: int, payload: bytes = b"", seq: int = 0) -> None:
        """A frame with a good CRC around any type byte and payload (:func:`raw_frame`):
        content the host must refuse on its own merits (an unknown type, a bad layout)."""
        self.inject(raw_frame(type_byte, seq, payload))

    def send_event(self, msg: CardRead | Button) -> bool:
        """A board event sent reliably as it is (:meth:`BoardCore.send_event`)."""
        ok = self.core.send_event(msg)
        self._service()
        return ok

    async def run_script(self, script: Script) -> None:
        """Play a script in board time from now; each event carries its exact scripted ticks."""
        t0 = self.clock.ticks(self.now())
        for step in script.steps:
            ticks = t0 + round(step.at * 1e6)
            delay = (self.clock.host_ns(ticks) - self.now()) / 1e9
            if delay > 0:
                await asyncio.sleep(delay)
            if step.kind == "tag":
                self.read_tag(step.tag, step.reader, ticks)
            elif step.kind == "button":
                self.press(step.button, step.pressed, ticks)
            elif step.kind == "mute":
                self.mute(True)
                assert self._loop is not None
                self._loop.call_later(step.duration, self.mute, False)

    # -- I/O ---------------------------------------------------------------------------------

    def _on_readable(self) -> None:
        if not self.plugged:
            return
        try:
            data = os.read(self._master, 4096)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data or self.muted:
            return
        self.line_in.push(data, self.now())
        self._service()

    def _service(self) -> None:
        if self._loop is None:
            return
        now = self.now()
        incoming = self.line_in.due(now)
        if incoming:
            self.core.receive(incoming)
        self.core.poll()
        out = self.core.take_output()
        if out and not self.muted and self.plugged:
            self.line_out.push(out, now)
        self._write(self.line_out.due(now))
        self._arm()

    def _write(self, data: bytes) -> None:
        if not self.plugged:
            return  # the cable is out: what the board sends goes nowhere
        if data:
            room = self.out_limit - len(self._pending_out)
            if len(data) > room:
                self.overrun += len(data) - room
                data = data[:room]
            self._pending_out += data
        if not self._pending_out or self._writing:
            return
        try:
            n = os.write(self._master, self._pending_out)
        except BlockingIOError:
            n = 0
        except OSError:
            self._pending_out.clear()
            return
        del self._pending_out[:n]
        if self._pending_out and self._loop is not None:
            self._writing = True
            self._loop.add_writer(self._master, self._on_writable)

    def _on_writable(self) -> None:
        assert self._loop is not None
        self._loop.remove_writer(self._master)
        self._writing = False
        self._write(b"")

    def _arm(self) -> None:
        assert self._loop is not None
        now = self.now()
        times = [self.core.next_deadline()]
        for line in (self.line_in, self.line_out):
            nr = line.next_release()
            if nr is not None:
                times.append(nr)
        delay = max(min(times) - now, 0) / 1e9
        when = self._loop.time() + delay
        if self._timer is not None:
            if abs(self._timer.when() - when) < 0.0002:
                return
            self._timer.cancel()
        self._timer = self._loop.call_at(when, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        self._service()
