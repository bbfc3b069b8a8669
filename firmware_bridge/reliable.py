"""Acknowledgement, retransmission and duplicate filtering for one end of the link (no I/O).

Both ends use the same two halves: a :class:`Sender` numbers reliable messages, keeps at most
:data:`~firmware_bridge.protocol.WINDOW` of them unacknowledged and sends each again until an
ACK names it; a :class:`Receiver` delivers each sequence number once, however many copies
arrive. The host's receiver delivers board events at once (they carry their own time and the
arbiter orders them); the board's receiver delivers host commands in order (a late LED command
must not undo a newer one).

The duplicate filter relies on the window: a sender only sends ``s`` once every sequence up to
``s - WINDOW`` is acknowledged, so a receiver that sees ``s`` knows nothing older than
``s - WINDOW + 1`` can still come.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass
from typing import Generic, TypeVar

from firmware_bridge.protocol import WINDOW, Ack, Message, encode_frame, is_reliable

SEQ_MOD = 1 << 16
_HALF = SEQ_MOD // 2

#: The messages a :class:`Receiver` delivers (board events on the host, commands on the board).
M = TypeVar("M", bound=Message)


def seq_diff(a: int, b: int) -> int:
    """``a - b`` in sequence space, in ``-32768 .. 32767``."""
    return ((a - b + _HALF) % SEQ_MOD) - _HALF


@dataclass(slots=True)
class _Outstanding:
    seq: int
    wire: bytes
    sent_ns: int
    deadline_ns: int
    tries: int
    tx: int  # transmission order: the link is FIFO, so an ACK for a later one means loss


@dataclass(frozen=True, slots=True)
class RtoPolicy:
    """Retransmission timeout: RFC 6298 smoothing of measured round trips, clamped."""

    initial_ns: int = 50_000_000
    min_ns: int = 10_000_000
    max_ns: int = 1_000_000_000
    #: A frame's n-th resend waits ``rto * 2**min(n - 1, max_backoff_doublings)``.
    max_backoff_doublings: int = 1


class Sender:
    """The sending half: numbers reliable messages, retransmits them until acknowledged."""

    def __init__(
        self,
        *,
        first_seq: int = 0,
        window: int = WINDOW,
        rto: RtoPolicy | None = None,
        backlog_limit: int | None = None,
    ) -> None:
        if not 1 <= window < _HALF:
            raise ValueError("window must be 1..32767")
        self.window = window
        self.policy = rto or RtoPolicy()
        self.backlog_limit = backlog_limit
        self._next = first_seq % SEQ_MOD
        self._backlog: deque[Message] = deque()
        self._unacked: dict[int, _Outstanding] = {}
        self._srtt: float | None = None
        self._rttvar = 0.0
        self.rto_ns = self.policy.initial_ns
        self.sent = 0
        self.retransmits = 0
        self.acked = 0
        self.overflowed = 0
        self.fast_retransmits = 0
        self._tx = 0

    @property
    def pending(self) -> int:
        """Messages not yet acknowledged (waiting in the backlog or in flight)."""
        return len(self._backlog) + len(self._unacked)

    @property
    def in_flight(self) -> int:
        """Messages sent and not yet acknowledged."""
        return len(self._unacked)

    def oldest(self) -> int:
        """The oldest sequence number that may still be (re)sent: the receiver's filter start."""
        if self._unacked:
            return min(self._unacked, key=lambda s: seq_diff(s, self._next))
        return self._next

    def submit(self, msg: Message) -> bool:
        """Queue a reliable message; ``False`` (and counted in ``overflowed``) if the backlog
        is full."""
        if not is_reliable(msg):
            raise ValueError(f"{msg.TYPE.name} is not a reliable message type")
        if self.backlog_limit is not None and self.pending >= self.backlog_limit:
            self.overflowed += 1
            return False
        self._backlog.append(msg)
        return True

    def poll(self, now_ns: int) -> list[bytes]:
        """Wire frames to write now: the resends that are due, oldest first, then the new
        messages the window allows. Older before newer keeps the line in sequence order when
        a peer comes back (every frame in flight is due then, and the backlog kept growing
        while it was away), so the peer takes the events in the order they happened even when
        it can no longer judge them at their own times."""
        out: list[bytes] = []
        for item in sorted(self._unacked.values(), key=lambda o: seq_diff(o.seq, self._next)):
            if item.deadline_ns <= now_ns:
                item.tries += 1
                item.sent_ns = now_ns
                backoff = 1 << min(item.tries - 1, self.policy.max_backoff_doublings)
                item.deadline_ns = now_ns + min(self.rto_ns * backoff, self.policy.max_ns)
                self._tx += 1
                item.tx = self._tx
                self.retransmits += 1
                out.append(item.wire)
        while self._backlog and self._window_open():
            msg = self._backlog.popleft()
            seq = self._next
            self._next = (self._next + 1) % SEQ_MOD
            wire = encode_frame(seq, msg)
            self._tx += 1
            self._unacked[seq] = _Outstanding(seq, wire, now_ns, now_ns + self.rto_ns, 1,
                                              self._tx)
            self.sent += 1
            out.append(wire)
        return out

    def _window_open(self) -> bool:
        if not self._unacked:
            return True
        return seq_diff(self._next, self.oldest()) < self.window

    def ack(self, seq: int, now_ns: int) -> bool:
        """An ACK named ``seq``; ``True`` if it was in flight (a measured round trip, if sent
        only once, updates the timeout)."""
        item = self._unacked.pop(seq, None)
        if item is None:
            return False
        self.acked += 1
        if item.tries == 1:
            self._sample(now_ns - item.sent_ns)
        return True

    def on_ack(self, ack: Ack, now_ns: int) -> int:
        """Take an ACK frame: everything before its cumulative sequence and each listed one.
        Frames sent before the newest one acknowledged here and still unacknowledged were
        lost (the line keeps order): they are made due at once. Returns how many were newly
        acknowledged."""
        newest_tx = 0
        count = 0
        below = [s for s in self._unacked if seq_diff(s, ack.cumulative) < 0]
        for seq in (*below, *ack.seqs):
            item = self._unacked.get(seq)
            if item is not None and self.ack(seq, now_ns):
                count += 1
                newest_tx = max(newest_tx, item.tx)
        if newest_tx:
            for item in self._unacked.values():
                if item.tx < newest_tx and item.deadline_ns > now_ns:
                    item.deadline_ns = now_ns
                    self.fast_retransmits += 1
        return count

    def _sample(self, rtt_ns: int) -> None:
        rtt = float(max(rtt_ns, 0))
        if self._srtt is None:
            self._srtt, self._rttvar = rtt, rtt / 2
        else:
            self._rttvar = 0.75 * self._rttvar + 0.25 * abs(self._srtt - rtt)
            self._srtt = 0.875 * self._srtt + 0.125 * rtt
        rto = self._srtt + max(1_000_000.0, 4 * self._rttvar)
        self.rto_ns = int(min(max(rto, self.policy.min_ns), self.policy.max_ns))

    def next_deadline(self) -> int | None:
        """When :meth:`poll` next has a resend to make (``None``: nothing in flight)."""
        if not self._unacked:
            return None
        return min(o.deadline_ns for o in self._unacked.values())

    def has_ready(self) -> bool:
        """True if :meth:`poll` would send a new message now."""
        return bool(self._backlog) and self._window_open()

    def resend_all_now(self, now_ns: int) -> None:
        """Make every message in flight due at once (the peer came back)."""
        for item in self._unacked.values():
            item.deadline_ns = now_ns
            item.tries = max(item.tries, 2)  # no round-trip sample from a resend


class Receiver(Generic[M]):
    """The receiving half: each sequence number is delivered once."""

    def __init__(self, *, window: int = WINDOW, ordered: bool = False) -> None:
        self.window = window
        self.ordered = ordered
        self.base = 0
        self._seen: set[int] = set()
        self._held: dict[int, M] = {}
        self.delivered = 0
        self.duplicates = 0
        self._unacked: list[int] = []

    def reset(self, base: int) -> None:
        """Start afresh: the peer says ``base`` is the oldest sequence it may still send."""
        self.base = base % SEQ_MOD
        self._seen.clear()
        self._held.clear()

    def accept(self, seq: int, msg: M) -> list[M]:
        """A reliable frame arrived (acknowledge it whatever this returns): the messages to
        deliver now — this one if new (unordered), or every message now in order (ordered)."""
        d = seq_diff(seq, self.base)
        if d < 0 or seq in self._seen or seq in self._held:
            self.duplicates += 1
            return []
        out: list[M] = []
        if d >= self.window:
            # The sender moved on: everything below seq - window + 1 is acknowledged already.
            new_base = (seq - self.window + 1) % SEQ_MOD
            if self.ordered:
                for s in sorted(self._held, key=lambda s: seq_diff(s, self.base)):
                    if seq_diff(s, new_base) < 0:
                        out.append(self._held.pop(s))
            self._seen = {s for s in self._seen if seq_diff(s, new_base) >= 0}
            self.base = new_base
        if self.ordered:
            self._held[seq] = msg
            while self.base in self._held:
                out.append(self._held.pop(self.base))
                self.base = (self.base + 1) % SEQ_MOD
        else:
            out.append(msg)
            self._seen.add(seq)
            while self.base in self._seen:
                self._seen.discard(self.base)
                self.base = (self.base + 1) % SEQ_MOD
        self.delivered += len(out)
        return out

    def note(self, seq: int) -> None:
        """Remember to acknowledge ``seq`` (call for every reliable frame, new or not)."""
        self._unacked.append(seq)

    def take_acks(self) -> list[Ack]:
        """ACK frames for everything noted since the last call: the cumulative sequence and
        the noted ones above it (none if nothing was noted)."""
        if not self._unacked:
            return []
        above = [s for s in dict.fromkeys(self._unacked) if seq_diff(s, self.base) >= 0]
        self._unacked = []
        if not above:
            return [Ack(self.base)]
        n = Ack.MAX_SEQS
        return [Ack(self.base, tuple(above[i:i + n])) for i in range(0, len(above), n)]
