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
heartbeats), when the port fails (the board unplugged), when the board never answers after the
port opens, or when the line is *unusable* (:class:`LineHealth`: most of what arrives is
damaged); and back *online* after a new handshake, once the line is usable again. Board events
are only acknowledged while online, so the board keeps (and resends) them until the referee can
take them. A frame with a good CRC whose content makes no sense (an unknown type, a payload that
does not fit its type, a reader or button the board does not have) is refused, answered with an
ERROR to the board and reported as a :class:`~firmware_bridge.events.BoardError`.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from firmware_bridge.clock import ClockSync
from firmware_bridge.events import (
    BoardError,
    BoardEvent,
    BoardInfo,
    LinkEvent,
    LinkHealth,
    LinkStatus,
)
from firmware_bridge.protocol import (
    MIN_PROTOCOL_VERSION,
    PROTOCOL_VERSION,
    WINDOW,
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
from firmware_bridge.reliable import SEQ_MOD, Receiver, Sender, seq_diff

if TYPE_CHECKING:
    from firmware_bridge.deck import Deck

MS = 1_000_000
#: The same refusal (kind) is reported as a BoardError at most this often; every one is
#: answered with an ERROR to the board and counted in ``LinkStats.refused``.
REPORT_EVERY_NS = 5_000 * MS


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
    #: Good frames refused on their content (unknown type, bad payload, no such reader/button).
    refused: int = 0
    #: Times the line was found unusable (:class:`LineHealth`).
    unusable_count: int = 0


class LineHealth:
    """Good frames against damaged ones (every chunk the decoder refused) over the last
    ``buckets`` buckets of ``bucket_ns`` (default 8 × 250 ms: two seconds), in a bounded ring.

    The line is **unusable** when, over that window, at least ``bad_share`` of the frames were
    damaged (default three quarters) and the damage came in at least ``bad_buckets`` of the
    buckets (default 4: a second or more of it, so one burst of noise is not enough). It is
    **usable** again when fewer than ``good_share`` of the frames of the window were damaged
    (default 40 %) and at least ``min_good`` good ones came (default 8; an idle board sends
    about nine a second: heartbeats, and answers to the host's HELLO). At 1 % corrupted and
    1 % dropped bytes about a quarter of the frames are damaged and the link works (never
    called unusable in ten minutes of virtual time); at 20 % corrupted nearly all are, and
    nothing gets through.
    """

    def __init__(self, *, bucket_ns: int = 250 * MS, buckets: int = 8, bad_share: float = 0.75,
                 bad_buckets: int = 4, good_share: float = 0.4, min_good: int = 8) -> None:
        self.bucket_ns = bucket_ns
        self.buckets = buckets
        self.bad_share = bad_share
        self.bad_buckets = bad_buckets
        self.good_share = good_share
        self.min_good = min_good
        self._ring: deque[list[int]] = deque(maxlen=buckets)  # [bucket index, good, damaged]

    @property
    def window_s(self) -> float:
        """The length of the window, in seconds."""
        return self.bucket_ns * self.buckets / 1e9

    def note(self, now: int, good: bool) -> None:
        """One frame at ``now``: good, or damaged (refused by the decoder)."""
        idx = now // self.bucket_ns
        if not self._ring or self._ring[-1][0] != idx:
            self._ring.append([idx, 0, 0])
        self._ring[-1][1 if good else 2] += 1

    def window(self, now: int) -> tuple[int, int, int]:
        """``(good, damaged, buckets with damage)`` over the window that ends at ``now``."""
        first = now // self.bucket_ns - self.buckets + 1
        good = damaged = hit = 0
        for idx, g, d in self._ring:
            if idx >= first:
                good, damaged, hit = good + g, damaged + d, hit + (d > 0)
        return good, damaged, hit

    def unusable(self, now: int) -> bool:
        """The line is too damaged to use (see the class docstring)."""
        good, damaged, hit = self.window(now)
        return hit >= self.bad_buckets and damaged >= self.bad_share * (good + damaged)

    def usable(self, now: int) -> bool:
        """The line is good enough again (see the class docstring)."""
        good, damaged, _ = self.window(now)
        return good >= self.min_good and damaged < self.good_share * (good + damaged)


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
        health: LineHealth | None = None,
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
        self.health = health or LineHealth()
        #: Why the line is unusable, while it is (no handshake until it is usable again).
        self.unusable: str | None = None
        self.board: BoardInfo | None = None
        self.handshaken = False
        self.online = False
        #: The table time up to which the board has handed over every event it stamped (the
        #: arbiter's progress of this source), once a heartbeat said nothing was pending.
        self.progress_ns: int | None = None
        self._offline_said = False  # board_offline was emitted since the last board_online
        self._started_at: int | None = None
        self._reported: dict[str, tuple[int, int]] = {}  # refusal kind -> (last report, since)
        self._early: dict[int, CardRead | Button] = {}  # events before the first sync, by seq
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
            self.health.note(now, isinstance(item, Frame))
            if isinstance(item, DecodeError):
                self.stats.bad_frames[item.kind] = self.stats.bad_frames.get(item.kind, 0) + 1
                if item.kind in ("unknown_type", "payload"):  # a good CRC: sent like that
                    self._refuse_frame(item, now)
                continue
            self.stats.frames_in += 1
            self._last_rx = now
            self._on_frame(item, now)
        self._check_health(now)
        for ack in self.receiver.take_acks():
            self._send_now(ack)
            self.stats.acks_out += 1

    def _refuse_frame(self, err: DecodeError, now: int) -> None:
        """A frame whose CRC is good but whose content is not: the board sent it so, and a
        resend would be the same. Answer with an ERROR and report it."""
        raw = err.raw
        seq = raw[2] | (raw[3] << 8) if len(raw) >= 4 else 0
        if err.kind == "unknown_type":
            code = ErrorCode.UNKNOWN_TYPE
            text = f"a frame of unknown type 0x{raw[1]:02X} (seq {seq})"
        else:
            code = ErrorCode.BAD_PAYLOAD
            text = f"a frame whose payload does not fit its type ({err.detail})"
        self._refuse(err.kind, code, seq, text, now)

    def _refuse(self, kind: str, code: ErrorCode, seq: int, text: str, now: int) -> None:
        self.stats.refused += 1
        self._send_now(Error(code, seq, text))
        last, since = self._reported.get(kind, (None, 0))
        if last is not None and now - last < REPORT_EVERY_NS:
            self._reported[kind] = (last, since + 1)
            return
        more = f" ({since} more like it since the last report)" if since else ""
        self._reported[kind] = (now, 0)
        self._events.append(BoardError(int(code), f"the board sent {text}: refused{more}", now))

    def _out_of_range(self, msg: CardRead | Button) -> str | None:
        """What is wrong with an event that names a reader or button the board does not
        have (by its own HELLO), or None."""
        board = self.board
        if board is None:
            return None
        if isinstance(msg, CardRead) and msg.reader >= board.readers:
            return f"a card read from reader {msg.reader}, but it has {board.readers} readers"
        if isinstance(msg, Button) and msg.button >= board.buttons:
            return f"an edge of button {msg.button}, but it has {board.buttons} buttons"
        return None

    def _check_health(self, now: int) -> None:
        """Declare the line unusable, or usable again (:class:`LineHealth`)."""
        health = self.health
        if self.unusable is None:
            if not health.unusable(now):
                return
            good, damaged, _ = health.window(now)
            total = good + damaged
            self.unusable = (f"the serial line to the board is unusable: {damaged} of {total} "
                             f"frames in the last {health.window_s:g} s were damaged")
            self.stats.unusable_count += 1
            self._events.append(LinkHealth("board_link_unusable", now, self.unusable, damaged,
                                           total))
            self._lose(now, self.unusable)
        elif health.usable(now):
            good, damaged, _ = health.window(now)
            total = good + damaged
            self.unusable = None
            self._events.append(LinkHealth(
                "board_link_usable", now, f"the serial line to the board works again: "
                f"{damaged} of {total} frames in the last {health.window_s:g} s were damaged",
                damaged, total))

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
                ticks = self.clock.unwrap(msg.ticks)
                if msg.pending == 0 and self.online and self.clock.synced:
                    # The board had sent, and we had acknowledged, every event it stamped
                    # before this heartbeat's ticks: nothing stamped earlier can come.
                    mark = self.clock.host_ns(ticks) - self.clock.error_bound_ns(ticks)
                    if self.progress_ns is None or mark > self.progress_ns:
                        self.progress_ns = mark
        elif isinstance(msg, TimeSyncReply):
            self._on_sync(msg, now)
        elif isinstance(msg, CardRead | Button):
            self._on_event(frame.seq, msg, now)
        elif isinstance(msg, Error):
            self._events.append(BoardError(msg.code, msg.text, now))

    def _on_hello(self, msg: Hello, now: int) -> None:
        if msg.role != Role.BOARD or self.unusable is not None:
            return  # no handshake over a line that is unusable: it would not hold
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
            self._early.clear()
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
            if self.handshaken and len(self._early) < WINDOW:
                # Between the handshake and the first clock sync (a board coming back sends
                # what it kept right after its HELLO): held, taken in order once online.
                self._early.setdefault(seq, msg)
            return
        self._take(seq, msg, now)

    def _take(self, seq: int, msg: CardRead | Button, now: int) -> None:
        self.receiver.note(seq)
        delivered = self.receiver.accept(seq, msg)
        if not delivered:
            self.stats.duplicates += 1
        for m in delivered:
            problem = self._out_of_range(m)
            if problem is not None:
                # Acknowledged (a resend would say the same) but never delivered: no input.
                self._refuse("reader" if isinstance(m, CardRead) else "button",
                             ErrorCode.BAD_PAYLOAD, seq, f"{problem} (seq {seq})", now)
                continue
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
            self._offline_said = False
            self.sender.resend_all_now(now)
            self._events.append(LinkStatus("board_online", now, self._status_reason, self.board))
            early, self._early = self._early, {}
            for seq in sorted(early, key=lambda s: seq_diff(s, self.receiver.base)):
                self._take(seq, early[seq], now)  # the board's kept events, in their order

    def _lose(self, now: int, reason: str) -> None:
        """Not online any more (or not yet): say ``board_offline`` once, until the next
        ``board_online``, whether or not the board was ever online."""
        self.online = False
        self.handshaken = False
        self._sync_pending.clear()
        self._early.clear()
        self._next_hello = now
        if not self._offline_said:
            self._offline_said = True
            self.stats.offline_count += 1
            self._events.append(LinkStatus("board_offline", now, reason, self.board))
            self._status_reason = f"back after: {reason}"

    def port_lost(self, now: int, reason: str) -> None:
        """The port itself failed or closed."""
        self.decoder.reset()
        self._lose(now, reason)

    def poll(self, now: int) -> None:
        """Timers: lost-link detection, line health, HELLO, heartbeats, time sync, (re)sends."""
        self._check_health(now)
        if self.handshaken and (self._last_rx is None or now - self._last_rx > self.lost_after_ns):
            misses = self.lost_after_ns // max(self.heartbeat_ns, 1)
            self._lose(now, f"no frame from the board for {self.lost_after_ns / 1e9:g} s "
                            f"({misses} heartbeats)")
        elif (not self.online and not self._offline_said and self._started_at is not None
              and now - self._started_at > self.lost_after_ns):
            # The port is open but the board never came online: say so, the game waits.
            heard = "no handshake with" if self._last_rx is not None else "no answer from"
            self._lose(now, f"{heard} the board for {self.lost_after_ns / 1e9:g} s "
                            "after opening the port")
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
        self._started_at = now


#: The most events a :class:`Link` holds for :meth:`Link.next_event` and :meth:`Link.events`:
#: the referee listens instead, and the queue it never read kept every card and button of an
#: evening (3 400 events in under three minutes of bench/soak.py's play, and growing).
QUEUED = 1024


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
        self._queue: asyncio.Queue[LinkEvent] = asyncio.Queue(maxsize=QUEUED)
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
        task = self._task = asyncio.get_running_loop().create_task(self._run(),
                                                                   name="firmware-link")
        # Wait for the task too: had it died before saying how the open went, the wait for
        # ``_opened`` alone would never end.
        opened = asyncio.ensure_future(self._opened.wait())
        try:
            await asyncio.wait((opened, task), return_when=asyncio.FIRST_COMPLETED)
        finally:
            opened.cancel()
        if not self._opened.is_set():
            self._task = None
            if task.cancelled():
                raise asyncio.CancelledError
            raise task.exception() or RuntimeError(f"{self.port}: the link stopped")
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
        """Call ``callback(event)`` for every event, as it happens (besides the queue, which
        keeps the newest :data:`QUEUED` for :meth:`next_event` and :meth:`events`)."""
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

    @property
    def progress_ns(self) -> int | None:
        """The table time up to which the board has handed over every event (see
        :attr:`LinkCore.progress_ns`), or None before the first quiet heartbeat."""
        return self.core.progress_ns

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
            except Exception as exc:  # noqa: BLE001 - pyserial's errors have no common base
                if isinstance(exc, OverflowError):  # pyserial's word for a huge baud rate
                    exc = ValueError(f"Not a valid baudrate: {self.baudrate} ({exc})")
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
            if self._queue.full():  # nobody reads the queue (the referee listens): the oldest go
                self._queue.get_nowait()
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
