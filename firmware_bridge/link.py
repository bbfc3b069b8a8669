"""The host side of the serial link: handshake, acks, retransmission, heartbeats, clock sync.

:class:`LinkCore` is the whole protocol logic without I/O: bytes and the time go in, bytes to
write and :mod:`~firmware_bridge.events` come out. :class:`Link` runs it on a serial port with
pyserial-asyncio-fast (``serial_asyncio_fast.open_serial_connection``), opened by a device path
(``/dev/ttyACM0``, the emulator's ``/dev/pts/N``) or any pyserial URL (``socket://``,
``rfc2217://``, ``loop://``)::

    async with Link("/dev/ttyACM0", deck=Deck.load("red.json")) as link:
        await link.wait_online()
        link.set_led(2, (0, 255, 0))
        async for event in link.events():
            ...  # BoardEvent, LinkStatus, BoardError

The board is *online* once the HELLO handshake agreed on a version and one time-sync exchange
succeeded; it goes *offline* when no good frame came for ``lost_after_s`` (a few missed
heartbeats), and back *online* after a new handshake. Board events are only acknowledged while
online, so the board keeps (and resends) them until the referee can take them.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from firmware_bridge.clock import ClockSync
from firmware_bridge.events import BoardError, BoardEvent, BoardInfo, LinkEvent, LinkStatus
from firmware_bridge.protocol import (
    MIN_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
    Ack,
    Button,
    Buzzer,
    BuzzerPattern,
    CardRead,
    DecodeError,
    Error,
    ErrorCode,
    Frame,
    Heartbeat,
    Hello,
    Led,
    LedPattern,
    Message,
    Reader,
    Role,
    StreamDecoder,
    TimeSyncReply,
    TimeSyncRequest,
    encode_frame,
    is_reliable,
)
from firmware_bridge.reliable import SEQ_MOD, Receiver, Sender

if TYPE_CHECKING:
    from firmware_bridge.deck import Deck

MS = 1_000_000


def negotiate(ours: tuple[int, int], theirs: tuple[int, int]) -> int | None:
    """The version both ends speak (``(min, max)`` each), or ``None``."""
    version = min(ours[1], theirs[1])
    return version if version >= max(ours[0], theirs[0]) else None


@dataclass(slots=True)
class LinkStats:
    """Counters for diagnostics and the bench."""

    frames_in: int = 0
    bad_frames: dict[str, int] = field(default_factory=dict)
    events: int = 0
    duplicates: int = 0
    ignored_offline: int = 0
    acks_out: int = 0
    sync_exchanges: int = 0
    offline_count: int = 0


class LinkCore:
    """The host's protocol state machine (no I/O, no clock: ``now`` is always passed in)."""

    def __init__(
        self,
        *,
        deck: Deck | None = None,
        boot_id: int | None = None,
        heartbeat_s: float = 0.2,
        lost_after_s: float = 1.2,
        sync_s: float = 0.25,
        sync_burst: int = 4,
        hello_s: float = 0.25,
        wire_ns_per_byte: float = 0.0,
        name: str = "referee",
        clock_sync: ClockSync | None = None,
    ) -> None:
        self.deck = deck
        self.boot_id = boot_id if boot_id is not None else int.from_bytes(os.urandom(4), "little")
        self.heartbeat_ns = int(heartbeat_s * 1e9)
        self.lost_after_ns = int(lost_after_s * 1e9)
        self.sync_ns = int(sync_s * 1e9)
        self.sync_burst = sync_burst
        self.hello_ns = int(hello_s * 1e9)
        self.wire_ns_per_byte = wire_ns_per_byte
        self.name = name
        self.clock = clock_sync or ClockSync()
        self.sender = Sender()
        self.receiver: Receiver[CardRead | Button] = Receiver(ordered=False)
        self.decoder = StreamDecoder()
        self.stats = LinkStats()
        self.board: BoardInfo | None = None
        self.handshaken = False
        self.online = False
        self._useq = 0
        self._out = bytearray()
        self._events: list[LinkEvent] = []
        self._last_rx: int | None = None
        self._next_hello = 0
        self._next_heartbeat = 0
        self._next_sync = 0
        self._burst_left = 0
        self._sync_pending: dict[int, tuple[int, int]] = {}  # request seq -> (t1, wire len)
        self._status_reason = "no board yet"

    # -- sending -----------------------------------------------------------------------------

    def _send_now(self, msg: Message) -> bytes:
        seq = self._useq
        self._useq = (self._useq + 1) % SEQ_MOD
        wire = encode_frame(seq, msg)
        self._out += wire
        return wire

    def submit(self, msg: Message) -> bool:
        """Queue a reliable command for the board (LED, BUZZER, READER); sent while online,
        retransmitted until acknowledged."""
        return self.sender.submit(msg)

    def take_output(self) -> bytes:
        """Bytes to write to the port now."""
        out = bytes(self._out)
        self._out.clear()
        return out

    def take_events(self) -> list[LinkEvent]:
        """Events produced since the last call."""
        out, self._events = self._events, []
        return out

    def _hello(self, reply: bool, now: int) -> None:
        self._send_now(Hello(Role.HOST, self.boot_id, self.sender.oldest(), reply=reply,
                             name=self.name))

    # -- receiving ---------------------------------------------------------------------------

    def receive(self, data: bytes, now: int) -> None:
        """Bytes read from the port at host time ``now``."""
        for item in self.decoder.feed(data):
            if isinstance(item, DecodeError):
                self.stats.bad_frames[item.kind] = self.stats.bad_frames.get(item.kind, 0) + 1
                continue
            self.stats.frames_in += 1
            self._last_rx = now
            self._on_frame(item, now)
        for ack in self.receiver.take_acks():
            self._send_now(ack)
            self.stats.acks_out += 1

    def _on_frame(self, frame: Frame, now: int) -> None:
        msg = frame.msg
        if isinstance(msg, Hello):
            self._on_hello(msg, now)
        elif isinstance(msg, Ack):
            self.sender.on_ack(msg, now)
        elif isinstance(msg, Heartbeat):
            if self.board is not None and msg.boot_id != self.board.boot_id and self.handshaken:
                self._lose(now, "the board restarted")
            elif self.handshaken:
                self.clock.unwrap(msg.ticks)
        elif isinstance(msg, TimeSyncReply):
            self._on_sync(msg, now)
        elif isinstance(msg, CardRead | Button):
            self._on_event(frame.seq, msg, now)
        elif isinstance(msg, Error):
            self._events.append(BoardError(msg.code, msg.text, now))

    def _on_hello(self, msg: Hello, now: int) -> None:
        if msg.role != Role.BOARD:
            return
        version = negotiate((MIN_PROTOCOL_VERSION, PROTOCOL_VERSION),
                            (msg.min_version, msg.version))
        if version is None:
            text = (f"board speaks protocol {msg.min_version}..{msg.version}, this host "
                    f"{MIN_PROTOCOL_VERSION}..{PROTOCOL_VERSION}")
            self._send_now(Error(ErrorCode.VERSION, 0, "no common protocol version"))
            self._events.append(BoardError(int(ErrorCode.VERSION), text, now))
            return
        new_board = self.board is None or self.board.boot_id != msg.boot_id
        if new_board and self.handshaken:
            self._lose(now, "the board restarted")
        if new_board:
            # A board we have not talked to (or that restarted): its sequence and ticks anew.
            self.receiver.reset(msg.next_seq)
            self.clock.reset()
            self._sync_pending.clear()
        self.board = BoardInfo(msg.boot_id, version, msg.readers, msg.buttons, msg.seats,
                               msg.name)
        if not msg.reply:
            self._hello(True, now)
        if not self.handshaken:
            self.handshaken = True
            self._burst_left = self.sync_burst
            self._next_sync = now
            self._next_heartbeat = now + self.heartbeat_ns
        self._check_online(now)

    def _on_sync(self, msg: TimeSyncReply, now: int) -> None:
        pending = self._sync_pending.pop(msg.request_seq, None)
        if pending is None or not self.handshaken:
            return
        t1, req_len = pending
        reply_len = 0
        if self.wire_ns_per_byte:
            reply_len = len(encode_frame(0, msg))
        t1c = t1 + int(req_len * self.wire_ns_per_byte)
        t4c = now - int(reply_len * self.wire_ns_per_byte)
        if self.clock.add_exchange(t1c, msg.rx_ticks, msg.tx_ticks, t4c) is not None:
            self.stats.sync_exchanges += 1
        self._check_online(now)

    def _on_event(self, seq: int, msg: CardRead | Button, now: int) -> None:
        if not self.online or not self.clock.synced:
            self.stats.ignored_offline += 1  # not acknowledged: the board sends it again
            return
        self.receiver.note(seq)
        delivered = self.receiver.accept(seq, msg)
        if not delivered:
            self.stats.duplicates += 1
        for m in delivered:
            ticks = self.clock.unwrap(m.ticks)
            t = self.clock.host_ns(ticks)
            err = self.clock.error_bound_ns(ticks)
            if isinstance(m, CardRead):
                card = self.deck.card_for(m.tag) if self.deck is not None else None
                ev = BoardEvent("card", t, m.ticks, err, seq, reader=m.reader, tag=m.tag,
                                card=card)
            else:
                ev = BoardEvent("button", t, m.ticks, err, seq, button=m.button,
                                pressed=m.pressed)
            self.stats.events += 1
            self._events.append(ev)

    # -- state -------------------------------------------------------------------------------

    def _check_online(self, now: int) -> None:
        if not self.online and self.handshaken and self.clock.synced:
            self.online = True
            self.sender.resend_all_now(now)
            self._events.append(LinkStatus("board_online", now, self._status_reason, self.board))

    def _lose(self, now: int, reason: str) -> None:
        was_online = self.online
        self.online = False
        self.handshaken = False
        self._sync_pending.clear()
        self._next_hello = now
        if was_online:
            self.stats.offline_count += 1
            self._events.append(LinkStatus("board_offline", now, reason, self.board))
        self._status_reason = f"back after: {reason}"

    def port_lost(self, now: int, reason: str) -> None:
        """The port itself failed or closed."""
        self.decoder.reset()
        self._lose(now, reason)

    def poll(self, now: int) -> None:
        """Timers: lost-link detection, HELLO, heartbeats, time sync, (re)sends."""
        if self.handshaken and (self._last_rx is None or now - self._last_rx > self.lost_after_ns):
            misses = self.lost_after_ns // max(self.heartbeat_ns, 1)
            self._lose(now, f"no frame from the board for {self.lost_after_ns / 1e9:g} s "
                            f"({misses} heartbeats)")
        if not self.handshaken:
            if now >= self._next_hello:
                self._hello(False, now)
                self._next_hello = now + self.hello_ns
            return
        if now >= self._next_heartbeat:
            self._send_now(Heartbeat(self.boot_id, 0, self.sender.pending))
            self._next_heartbeat = now + self.heartbeat_ns
        if now >= self._next_sync:
            seq = self._useq
            wire = self._send_now(TimeSyncRequest())
            self._sync_pending[seq] = (now, len(wire))
            for old in [s for s, (t1, _) in self._sync_pending.items() if now - t1 > 2 * 10**9]:
                del self._sync_pending[old]
            if self._burst_left > 0:
                self._burst_left -= 1
                self._next_sync = now + 10 * MS
            else:
                self._next_sync = now + self.sync_ns
        if self.online:
            for wire in self.sender.poll(now):
                self._out += wire

    def next_deadline(self, now: int) -> int:
        """The host time at which :meth:`poll` next has something to do."""
        if not self.handshaken:
            return self._next_hello
        times = [self._next_heartbeat, self._next_sync]
        if self._last_rx is not None:
            times.append(self._last_rx + self.lost_after_ns + 1)
        if self.online:
            if self.sender.has_ready():
                return now
            dl = self.sender.next_deadline()
            if dl is not None:
                times.append(dl)
        return min(times)

    def start(self, now: int) -> None:
        """The port was (re)opened: say HELLO."""
        self.decoder.reset()
        self._next_hello = now


class Link:
    """The async link to the board on a serial port (see the module docstring).

    ``port`` is a device path or a pyserial URL. ``clock`` is the table clock (default
    ``time.monotonic_ns``). ``wire_baud``: set it to the baud rate of a real UART so the time
    sync takes the bytes' time on the wire into account (leave ``None`` for USB CDC and ptys).
    ``reconnect_s``: how long to wait before reopening a port that failed. Other keywords go to
    :class:`LinkCore`.
    """

    def __init__(
        self,
        port: str,
        *,
        baudrate: int = 115200,
        deck: Deck | None = None,
        clock: Callable[[], int] = time.monotonic_ns,
        wire_baud: int | None = None,
        reconnect_s: float = 1.0,
        **core_options: Any,
    ) -> None:
        self.port = port
        self.baudrate = baudrate
        self.now = clock
        self.reconnect_s = reconnect_s
        wire = 10e9 / wire_baud if wire_baud else 0.0
        self.core = LinkCore(deck=deck, wire_ns_per_byte=wire, **core_options)
        self._queue: asyncio.Queue[LinkEvent] = asyncio.Queue()
        self._listeners: list[Callable[[LinkEvent], None]] = []
        self._writer: asyncio.StreamWriter | None = None
        self._task: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = None
        self._online = asyncio.Event()
        self._opened = asyncio.Event()
        self._open_error: BaseException | None = None
        self._closed = False

    # -- public ------------------------------------------------------------------------------

    @property
    def online(self) -> bool:
        """True while the board is handshaken, clock-synced and heard from."""
        return self.core.online

    @property
    def board(self) -> BoardInfo | None:
        """What the board said about itself, once it did."""
        return self.core.board

    @property
    def clock(self) -> ClockSync:
        """The clock sync (error bound: ``link.clock.error_bound_ns()``)."""
        return self.core.clock

    @property
    def stats(self) -> LinkStats:
        """Counters."""
        return self.core.stats

    @property
    def deck(self) -> Deck | None:
        """The deck that maps tags to cards (may be swapped at any time)."""
        return self.core.deck

    @deck.setter
    def deck(self, deck: Deck | None) -> None:
        self.core.deck = deck

    async def open(self) -> None:
        """Open the port (raises the port's error if the first open fails) and start."""
        if self._task is not None:
            return
        self._task = asyncio.get_running_loop().create_task(self._run(), name="firmware-link")
        await self._opened.wait()
        if self._open_error is not None:
            err, self._open_error = self._open_error, None
            self._task = None
            raise err

    async def close(self) -> None:
        """Stop and close the port."""
        self._closed = True
        if self._timer is not None:
            self._timer.cancel()
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
            self._task = None

    async def __aenter__(self) -> Link:
        await self.open()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def wait_online(self, timeout: float | None = None) -> None:
        """Wait until the board is online (``TimeoutError`` after ``timeout`` seconds)."""
        await asyncio.wait_for(self._online.wait(), timeout)

    def add_listener(self, callback: Callable[[LinkEvent], None]) -> None:
        """Call ``callback(event)`` for every event, as it happens (besides the queue)."""
        self._listeners.append(callback)

    async def next_event(self, timeout: float | None = None) -> LinkEvent:
        """The next event (``TimeoutError`` after ``timeout`` seconds)."""
        return await asyncio.wait_for(self._queue.get(), timeout)

    async def events(self) -> AsyncIterator[LinkEvent]:
        """Every event, in the order they happened, for as long as the link runs."""
        while True:
            yield await self._queue.get()

    def send(self, msg: Message) -> None:
        """Queue a reliable command (:class:`Led`, :class:`Buzzer`, :class:`Reader`)."""
        if not is_reliable(msg):
            raise ValueError("only reliable commands can be queued")
        self.core.submit(msg)
        self._service()

    def set_led(self, seat: int, rgb: tuple[int, int, int],
                pattern: LedPattern = LedPattern.SOLID, period_ms: int = 0) -> None:
        """Light seat ``seat``'s LED (``protocol.ALL`` for every seat)."""
        self.send(Led(seat, rgb, pattern, period_ms))

    def buzz(self, pattern: BuzzerPattern = BuzzerPattern.TONE, freq_hz: int = 2000,
             duration_ms: int = 100) -> None:
        """Sound the buzzer."""
        self.send(Buzzer(pattern, freq_hz, duration_ms))

    def set_reader(self, reader: int, on: bool) -> None:
        """Switch card reader ``reader`` (``protocol.ALL`` for every one) on or off."""
        self.send(Reader(reader, on))

    def table_ns(self, raw_ticks: int) -> int:
        """Table-clock nanoseconds of a raw board tick value (needs the clock synced)."""
        return self.core.clock.to_host_ns(raw_ticks)

    # -- running -----------------------------------------------------------------------------

    async def _run(self) -> None:
        import serial
        import serial_asyncio_fast

        first = True
        while not self._closed:
            try:
                reader, writer = await serial_asyncio_fast.open_serial_connection(
                    url=self.port, baudrate=self.baudrate)
            except (OSError, serial.SerialException, ValueError) as exc:
                if first:
                    self._open_error = exc
                    self._opened.set()
                    return
                await asyncio.sleep(self.reconnect_s)
                continue
            if first:
                first = False
                self._opened.set()
            self._writer = writer
            self.core.start(self.now())
            self._service()
            reason = "the port closed"
            try:
                while True:
                    data = await reader.read(4096)
                    if not data:
                        break
                    self.core.receive(data, self.now())
                    self._service()
            except (OSError, serial.SerialException) as exc:
                reason = f"the port failed: {exc}"
            finally:
                self._writer = None
                with contextlib.suppress(Exception):
                    writer.close()
            self.core.port_lost(self.now(), reason)
            self._deliver()
            if not self._closed:
                await asyncio.sleep(self.reconnect_s)

    def _service(self) -> None:
        now = self.now()
        self.core.poll(now)
        out = self.core.take_output()
        if out and self._writer is not None:
            self._writer.write(out)
        self._deliver()
        self._arm(now)

    def _deliver(self) -> None:
        for ev in self.core.take_events():
            if isinstance(ev, LinkStatus):
                if ev.kind == "board_online":
                    self._online.set()
                else:
                    self._online.clear()
            self._queue.put_nowait(ev)
            for cb in self._listeners:
                cb(ev)

    def _arm(self, now: int) -> None:
        if self._writer is None or self._closed:
            return
        delay = max(self.core.next_deadline(now) - now, 0) / 1e9
        loop = asyncio.get_running_loop()
        when = loop.time() + delay
        if self._timer is not None:
            if abs(self._timer.when() - when) < 0.0002:
                return
            self._timer.cancel()
        self._timer = loop.call_at(when, self._on_timer)

    def _on_timer(self) -> None:
        self._timer = None
        if self._writer is not None and not self._closed:
            self._service()
