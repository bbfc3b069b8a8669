"""Clock sync: 32-bit tick wraparound, and board ticks mapped onto the host clock within 1 ms
(and within the reported bound) under ±100 ppm drift, in virtual time."""

import random

import pytest

from firmware_bridge.clock import ClockSync, NotSynced, TickUnwrapper
from firmware_bridge.emulator import BoardClock
from firmware_bridge.events import BoardEvent
from firmware_bridge.sim import SimulatedLink

MS = 1_000_000
US = 1_000


def test_unwrapper_crosses_the_32_bit_wrap_both_ways() -> None:
    u = TickUnwrapper(32)
    top = 2**32
    assert u.unwrap(top - 10) == top - 10
    assert u.unwrap(5) == top + 5
    assert u.unwrap(top - 3) == top - 3  # an older value, from before the wrap
    assert u.unwrap(100) == top + 100
    for k in range(1, 5):  # many wraps, sampled often enough
        for frac in (0.3, 0.6, 0.9, 0.99):
            u.unwrap(int(top * frac))
        assert u.unwrap(7) == k * top + top + 7


def test_mapping_before_any_exchange_says_so() -> None:
    with pytest.raises(NotSynced):
        ClockSync().to_host_ns(5)


def _exchange(rng: random.Random, board: BoardClock, h: int, jitter_ns: float,
              spike: float) -> tuple[int, int, int, int]:
    d1 = 30 * US + rng.expovariate(1 / jitter_ns) + (5 * MS if rng.random() < spike else 0)
    d2 = 30 * US + rng.expovariate(1 / jitter_ns) + (5 * MS if rng.random() < spike else 0)
    proc = rng.uniform(20 * US, 150 * US)
    t2 = board.raw(int(h + d1))
    t3 = board.raw(int(h + d1 + proc))
    return h, t2, t3, int(h + d1 + proc + d2)


@pytest.mark.parametrize("ppm", [-100.0, 100.0])
@pytest.mark.slow
def test_offset_and_drift_tracked_within_1ms_and_within_the_bound(ppm: float) -> None:
    rng = random.Random(int(ppm * 10) + 1)
    host0 = 5 * 10**12
    # Start 20 s before the 32-bit wrap, run 80 minutes: crosses the wrap twice.
    board = BoardClock(ppm, 2**32 - 20_000_000, host0)
    sync = ClockSync()
    h = host0
    errors, over_bound = [], 0
    while h < host0 + 80 * 60 * 10**9:
        sync.add_exchange(*_exchange(rng, board, h, 200 * US, 0.03))
        for _ in range(3):  # events between this exchange and the next one (0.25 s)
            te = h + rng.randrange(250 * MS)
            raw = board.raw(te)
            t_true = board.host_ns(board.ticks(te))
            est = sync.to_host_ns(raw)
            bound = sync.error_bound_ns(sync.unwrapper.unwrap(raw))
            if abs(est - t_true) > bound:
                over_bound += 1
            if h > host0 + 10 * 10**9:
                errors.append(abs(est - t_true))
        h += 250 * MS
    assert over_bound == 0
    assert max(errors) < 1 * MS
    assert sync.estimate.drift_ppm == pytest.approx(ppm, abs=2.0)
    assert sync.error_bound_ns() < 1 * MS


def test_bound_is_reported_early_and_grows_with_distance() -> None:
    rng = random.Random(3)
    board = BoardClock(100.0, 1000, 10**12)
    sync = ClockSync()
    sync.add_exchange(*_exchange(rng, board, 10**12, 100 * US, 0))
    near = sync.error_bound_ns(board.ticks(10**12))
    far = sync.error_bound_ns(board.ticks(10**12 + 10 * 10**9))
    assert 0 < near < far


def test_bad_exchanges_are_refused() -> None:
    sync = ClockSync()
    assert sync.add_exchange(1000, 10, 5, 2000) is None  # board replied before it received
    assert sync.add_exchange(0, 10, 10, 10**9) is None  # a second's round trip
    assert not sync.synced and sync.rejected == 2


@pytest.mark.parametrize("ppm", [-100.0, 100.0])
@pytest.mark.slow
def test_whole_link_keeps_events_within_1ms_under_drift(ppm: float) -> None:
    """The link's own sync (min-RTT + regression) over a jittery virtual line, 10 minutes,
    a button event every 100 ms: each event's t is within 1 ms of the truth and its bound."""
    sim = SimulatedLink(drift_ppm=ppm, tick_start=2**32 - 30_000_000, seed=int(ppm),
                        latency_ns=lambda r: int(50 * US + r.expovariate(1 / (150 * US))))
    assert sim.run_for(2, lambda: sim.link.online)
    truth: dict[int, int] = {}
    t0 = sim.t

    def press(i: int) -> None:
        ticks = sim.board_clock.ticks(sim.t)
        truth[ticks & 0xFFFFFFFF] = round(sim.board_clock.host_ns(ticks))
        sim.board.button(i % 8, True, ticks)

    for i in range(6000):
        sim.at(t0 + i * 100 * MS, lambda i=i: press(i))
    sim.run_for(601)
    events = [e for e in sim.events if isinstance(e, BoardEvent)]
    assert len(events) == 6000
    errors = [abs(e.t - truth[e.ticks]) for e in events]
    assert max(errors) < 1 * MS
    assert all(abs(e.t - truth[e.ticks]) <= e.error_ns for e in events)
    assert max(errors[600:]) < 200 * US  # once the drift is measured
