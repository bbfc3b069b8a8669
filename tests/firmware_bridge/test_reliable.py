"""Acks, retransmission and duplicate filtering, alone and as the whole link in virtual time
(the same LinkCore and BoardCore as the pty link, on an in-memory line)."""

import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_bridge.emulator import Faults
from firmware_bridge.events import BoardEvent, LinkStatus
from firmware_bridge.protocol import (
    WINDOW,
    Ack,
    Button,
    Led,
    StreamDecoder,
)
from firmware_bridge.reliable import Receiver, Sender, seq_diff
from firmware_bridge.sim import SimulatedLink

MS = 1_000_000


def _seqs(wires: list[bytes]) -> list[int]:
    out = []
    for w in wires:
        (frame,) = StreamDecoder().feed(w)
        out.append(frame.seq)
    return out


def test_seq_diff_wraps() -> None:
    assert seq_diff(2, 65534) == 4
    assert seq_diff(65534, 2) == -4
    assert seq_diff(100, 100) == 0


def test_sender_keeps_a_window_and_resends_until_acked() -> None:
    s = Sender(first_seq=65530)
    for i in range(40):
        s.submit(Button(1, True, i))
    first = s.poll(0)
    assert len(first) == WINDOW and s.pending == 40
    assert _seqs(first)[:7] == [65530, 65531, 65532, 65533, 65534, 65535, 0]
    assert s.poll(1) == []  # nothing due yet
    again = s.poll(s.rto_ns)  # the timeout: all of them again
    assert _seqs(again) == _seqs(first)
    s.on_ack(Ack((65530 + 10) % 65536), s.rto_ns + 1)  # cumulative: 65530 .. 3
    assert s.pending == 40 - 10
    more = s.poll(s.rto_ns + 2)
    assert _seqs(more) == [(65530 + WINDOW + i) % 65536 for i in range(8)]


def test_an_ack_for_a_later_frame_resends_the_lost_one_at_once() -> None:
    s = Sender()
    for i in range(3):
        s.submit(Button(1, True, i))
    s.poll(0)
    s.on_ack(Ack(0, (1, 2)), 5)  # seq 0 missing, 1 and 2 arrived: 0 was lost
    assert _seqs(s.poll(6)) == [0]
    assert s.fast_retransmits == 1


def test_round_trips_set_the_timeout() -> None:
    s = Sender()
    for i in range(50):
        s.submit(Button(1, True, i))
        s.poll(i * 10 * MS)
        s.on_ack(Ack((i + 1) % 65536), i * 10 * MS + 2 * MS)
    assert s.policy.min_ns <= s.rto_ns < 20 * MS


def test_backlog_limit_counts_what_it_refuses() -> None:
    s = Sender(backlog_limit=2)
    assert s.submit(Button(1, True, 1)) and s.submit(Button(1, True, 2))
    assert not s.submit(Button(1, True, 3))
    assert s.overflowed == 1


def test_receiver_delivers_each_sequence_once_unordered() -> None:
    r = Receiver()
    r.reset(65534)
    msgs = {s: Button(1, True, s) for s in (65534, 65535, 0, 1, 2)}
    assert r.accept(0, msgs[0]) == [msgs[0]]
    assert r.accept(65534, msgs[65534]) == [msgs[65534]]
    assert r.accept(0, msgs[0]) == []
    assert r.accept(65535, msgs[65535]) == [msgs[65535]]
    assert r.base == 1
    assert r.accept(65535, msgs[65535]) == []
    assert r.duplicates == 2


def test_ordered_receiver_holds_until_the_gap_fills() -> None:
    r = Receiver(ordered=True)
    r.reset(10)
    a, b, c = Led(1), Led(2), Led(3)
    assert r.accept(11, b) == []
    assert r.accept(12, c) == []
    assert r.accept(10, a) == [a, b, c]
    assert r.accept(11, b) == []


def test_acks_name_the_cumulative_point_and_the_rest() -> None:
    r = Receiver()
    r.reset(0)
    for seq in (0, 1, 3, 5, 1):
        r.note(seq)
        r.accept(seq, Button(1, True, seq))
    (ack,) = r.take_acks()
    assert ack.cumulative == 2 and ack.seqs == (3, 5)
    assert r.take_acks() == []


@settings(max_examples=60, deadline=None)
@given(st.integers(0, 65535), st.integers(0, 2**32), st.floats(0.0, 0.6))
def test_lossy_reordered_delivery_is_exactly_once(first: int, seed: int, loss: float) -> None:
    """A sender and receiver over a line that loses frames and ACKs: all, once, in order."""
    rng = random.Random(seed)
    s, r = Sender(first_seq=first), Receiver(ordered=True)
    r.reset(first)
    n = 150
    for i in range(n):
        s.submit(Button(i % 256, True, i))
    got: list[int] = []
    now = 0
    dec = StreamDecoder()
    while len(got) < n and now < 10**12:
        for wire in s.poll(now):
            if rng.random() < loss:
                continue
            (frame,) = dec.feed(wire)
            r.note(frame.seq)
            got += [m.ticks for m in r.accept(frame.seq, frame.msg)]
        for ack in r.take_acks():
            if rng.random() >= loss:
                s.on_ack(ack, now + MS)
        now += 5 * MS
    assert got == list(range(n))


def _sim(**kw) -> SimulatedLink:
    sim = SimulatedLink(**kw)
    assert sim.run_for(10, lambda: sim.link.online)
    return sim


@pytest.mark.slow
def test_in_memory_10000_card_reads_with_1pct_corrupt_and_1pct_dropped_bytes() -> None:
    """Over the same link code as the pty: zero damaged frames accepted, none lost or doubled."""
    sim = _sim(faults=Faults(corrupt=0.01, drop=0.01), seed=11, drift_ppm=-100,
               tick_start=2**32 - 1_000_000,
               latency_ns=lambda r: int(40_000 + r.expovariate(1 / 150_000)))
    n = 10_000
    tags = [i.to_bytes(4, "big") + b"\x5a\xa5\x00" for i in range(n)]
    true_t: dict[bytes, int] = {}

    def lay(i: int) -> None:
        true_t[tags[i]] = sim.t
        assert sim.board.card_read(tags[i], i % 4)

    start = sim.t
    for i in range(n):
        sim.at(start + i * 300_000, lambda i=i: lay(i))
    count = [0]

    def enough() -> bool:
        count[0] = sum(1 for e in sim.events if isinstance(e, BoardEvent))
        return count[0] >= n

    assert sim.run_for(60, enough)
    events = [e for e in sim.events if isinstance(e, BoardEvent)]
    assert len(events) == n
    assert sorted(e.tag for e in events) == sorted(tags)  # each exactly once, none damaged
    for e in events:
        assert e.reader == int.from_bytes(e.tag[:4], "big") % 4
        assert abs(e.t - true_t[e.tag]) < 1 * MS
    assert sim.link.stats.duplicates > 0 and sum(sim.link.stats.bad_frames.values()) > 1000
    assert not [e for e in sim.events if isinstance(e, LinkStatus) and e.kind == "board_offline"]


def test_heartbeat_loss_goes_offline_keeps_events_and_comes_back() -> None:
    sim = _sim(seed=5)
    sim.connected = False
    sim.at(sim.t + 100 * MS, lambda: sim.board.button(3, True))
    assert sim.run_for(5, lambda: not sim.link.online)
    (off,) = [e for e in sim.events if isinstance(e, LinkStatus) and e.kind == "board_offline"]
    assert "no frame from the board" in off.reason
    assert not sim.board.host_online
    sim.connected = True
    assert sim.run_for(5, lambda: any(isinstance(e, BoardEvent) for e in sim.events))
    statuses = [e.kind for e in sim.events if isinstance(e, LinkStatus)]
    assert statuses == ["board_online", "board_offline", "board_online"]
    (ev,) = [e for e in sim.events if isinstance(e, BoardEvent)]
    assert ev.button == 3 and ev.pressed


def test_board_restart_is_a_new_handshake_and_a_new_clock() -> None:
    sim = _sim(seed=6)
    sim.board.button(1, True)
    sim.run_for(0.5)
    from firmware_bridge.emulator import BoardClock, BoardCore

    sim.board_clock = BoardClock(0.0, 77, sim.t)
    sim.board = BoardCore(sim.board_clock, sim.now, boot_id=12345)
    sim.board.boot()
    sim.board.button(2, True)
    assert sim.run_for(3, lambda: sum(isinstance(e, BoardEvent) for e in sim.events) == 2)
    kinds = [e.kind for e in sim.events if isinstance(e, LinkStatus)]
    assert kinds == ["board_online", "board_offline", "board_online"]
    assert sim.link.board is not None and sim.link.board.boot_id == 12345


def test_host_commands_reach_the_board_in_order_despite_faults() -> None:
    sim = _sim(faults=Faults(corrupt=0.01, drop=0.01), seed=8)
    leds = [Led(i % 6, (i % 256, 0, 0)) for i in range(300)]
    for led in leds:
        sim.link.submit(led)
    assert sim.run_for(30, lambda: len(sim.board.commands) >= len(leds))
    assert sim.board.commands == leds
