"""Board ticks onto the table clock: offset and drift, estimated continuously, with an error bound.

The board counts microseconds in 32 bits (wrapping every 71.6 minutes) on its own crystal; the
table clock is the Pi's ``time.monotonic_ns()``. Every time-sync exchange gives four stamps,
NTP-style::

    t1  host ns, request written        t2  board ticks, request read
    t4  host ns, reply read             t3  board ticks, reply written

Causality alone says the board instant ``(t2 + t3) / 2`` happened at host time
``(t1 + t4) / 2 ± rtt / 2`` with ``rtt = (t4 - t1) - (t3 - t2)``. :class:`ClockSync` keeps, for
each one-second bucket of the last minute, the exchange with the smallest round trip (queueing
delays only ever add), and fits ``host_ns = a + b · ticks`` through those by weighted least
squares: ``a`` is the offset, ``b`` the length of a board tick in host nanoseconds (the drift).

The error bound is the worst case under two assumptions, that the drift is constant over the
window and within ``max_ppm``: at each kept exchange the true mapping lies within ``rtt / 2`` of
the stamp and the fitted line misses the stamp by its residual; the difference of two straight
lines is straight, so between exchanges the error is bounded by its neighbours, and away from
an exchange it grows at most at a slope that both the crystal's tolerance and every pair of
exchanges (the error passes within both of their bounds) limit.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass

from referee.errors import RefereeError

TICK_BITS = 32
TICK_NS = 1000


class NotSynced(RefereeError, RuntimeError):
    """A tick was mapped before any time-sync exchange succeeded."""


class TickUnwrapper:
    """Extends wrapping ``bits``-bit tick counts to an unbounded count.

    Each value is placed nearest to the newest value seen so far, so values up to half the wrap
    period (35.8 minutes for 32-bit microseconds) older or newer than it come out right.
    """

    def __init__(self, bits: int = TICK_BITS) -> None:
        self.modulus = 1 << bits
        self._last: int | None = None

    def unwrap(self, raw: int) -> int:
        """The unbounded count of a raw tick value."""
        raw %= self.modulus
        if self._last is None:
            self._last = raw
            return raw
        half = self.modulus // 2
        value = self._last + ((raw - self._last + half) % self.modulus) - half
        if value > self._last:
            self._last = value
        return value

    def reset(self) -> None:
        """Forget the reference (the board restarted)."""
        self._last = None


@dataclass(frozen=True, slots=True)
class SyncSample:
    """One time-sync exchange: host ns ``t1``/``t4``, unwrapped board ticks ``t2``/``t3``."""

    t1: int
    t2: int
    t3: int
    t4: int
    tick_ns: int = TICK_NS

    @property
    def rtt_ns(self) -> int:
        """Round trip less the board's own processing time."""
        return (self.t4 - self.t1) - (self.t3 - self.t2) * self.tick_ns

    @property
    def host_mid(self) -> float:
        """Host time of the exchange's middle."""
        return (self.t1 + self.t4) / 2

    @property
    def board_mid(self) -> float:
        """Board ticks of the exchange's middle."""
        return (self.t2 + self.t3) / 2

    @property
    def half_width_ns(self) -> float:
        """How far the true host time of :attr:`board_mid` may be from :attr:`host_mid`."""
        return max(self.rtt_ns, 0) / 2 + self.tick_ns / 2


@dataclass(frozen=True, slots=True)
class ClockEstimate:
    """The current fit: ``host_ns = host_ref + ns_per_tick · (ticks - tick_ref)``."""

    tick_ref: float
    host_ref: float
    ns_per_tick: float
    samples: int
    span_ns: float

    @property
    def drift_ppm(self) -> float:
        """How fast the board's clock runs against the host's, in parts per million."""
        return (TICK_NS / self.ns_per_tick - 1) * 1e6


class ClockSync:
    """Maps board ticks onto host nanoseconds from a stream of time-sync exchanges."""

    def __init__(
        self,
        *,
        tick_ns: int = TICK_NS,
        tick_bits: int = TICK_BITS,
        bucket_ns: int = 1_000_000_000,
        buckets: int = 60,
        max_ppm: float = 200.0,
        min_span_ns: int = 500_000_000,
        max_rtt_ns: int = 100_000_000,
    ) -> None:
        self.tick_ns = tick_ns
        self.bucket_ns = bucket_ns
        self.buckets = buckets
        self.max_ppm = max_ppm
        self.min_span_ns = min_span_ns
        self.max_rtt_ns = max_rtt_ns
        self.unwrapper = TickUnwrapper(tick_bits)
        self._best: dict[int, SyncSample] = {}
        self._fit: ClockEstimate | None = None
        self._kept: list[SyncSample] = []
        self._bounds: list[float] = []
        self._xs: list[float] = []
        self._slope_err = 0.0
        self.exchanges = 0
        self.rejected = 0

    # -- input -----------------------------------------------------------------------------

    def unwrap(self, raw_ticks: int) -> int:
        """Unwrap a raw board tick value (every tick value the board sends passes here)."""
        return self.unwrapper.unwrap(raw_ticks)

    def add_exchange(self, t1: int, rx_ticks: int, tx_ticks: int, t4: int) -> SyncSample | None:
        """One finished exchange (raw 32-bit ticks); returns the sample, or ``None`` if it was
        refused (negative or over ``max_rtt_ns`` round trip)."""
        t2 = self.unwrap(rx_ticks)
        t3 = self.unwrap(tx_ticks)
        sample = SyncSample(t1, t2, t3, t4, self.tick_ns)
        self.exchanges += 1
        if t3 < t2 or not 0 <= sample.rtt_ns <= self.max_rtt_ns:
            self.rejected += 1
            return None
        key = t4 // self.bucket_ns
        best = self._best.get(key)
        if best is None or sample.rtt_ns < best.rtt_ns:
            self._best[key] = sample
            for old in sorted(self._best)[:-self.buckets]:
                del self._best[old]
            self._refit()
        return sample

    def reset(self) -> None:
        """Forget everything (the board restarted: its ticks start over)."""
        self.unwrapper.reset()
        self._best.clear()
        self._fit = None
        self._kept = []
        self._bounds = []
        self._xs = []

    # -- the fit ---------------------------------------------------------------------------

    def _refit(self) -> None:
        kept = sorted(self._best.values(), key=lambda s: s.board_mid)
        ref = kept[-1]
        x_ref, y_ref = ref.board_mid, ref.host_mid
        xs = [s.board_mid - x_ref for s in kept]
        ys = [s.host_mid - y_ref for s in kept]
        floor = 5_000.0
        ws = [1.0 / (s.half_width_ns + floor) ** 2 for s in kept]
        span_ns = (xs[-1] - xs[0]) * self.tick_ns
        sw = sum(ws)
        mx = sum(w * x for w, x in zip(ws, xs, strict=True)) / sw
        my = sum(w * y for w, y in zip(ws, ys, strict=True)) / sw
        lo = self.tick_ns * (1 - self.max_ppm * 1e-6)
        hi = self.tick_ns * (1 + self.max_ppm * 1e-6)
        if self._slope_measurable(kept, span_ns):
            sxx = sum(w * (x - mx) ** 2 for w, x in zip(ws, xs, strict=True))
            sxy = sum(w * (x - mx) * (y - my) for w, x, y in zip(ws, xs, ys, strict=True))
            slope = min(max(sxy / sxx, lo), hi)
        else:
            slope = self._fit.ns_per_tick if self._fit is not None else float(self.tick_ns)
        intercept = my - slope * mx
        self._fit = ClockEstimate(x_ref, y_ref + intercept, slope, len(kept), span_ns)
        self._kept = kept
        self._bounds = [
            abs(intercept + slope * x - y) + s.half_width_ns
            for s, x, y in zip(kept, xs, ys, strict=True)
        ]
        self._xs = [s.board_mid for s in kept]
        # How wrong the slope can be (ns per tick): the crystal's tolerance around nominal, or
        # what any two exchanges allow (the error line passes within both of their bounds).
        slope_err = self.max_ppm * 1e-6 * self.tick_ns + abs(slope - self.tick_ns)
        b, x = self._bounds, self._xs
        half = len(x) // 2
        for i in range(max(half, 1)):  # pairs across the middle: the long lever arms
            for j in range(max(half, i + 1), len(x)):
                if x[j] > x[i]:
                    slope_err = min(slope_err, (b[i] + b[j]) / (x[j] - x[i]))
        self._slope_err = slope_err

    def _slope_measurable(self, kept: list[SyncSample], span_ns: float) -> bool:
        # The exchanges pin the drift down better than the crystal's tolerance does once the
        # span is long against their uncertainty: only then is the fitted slope used.
        if len(kept) < 2 or span_ns < self.min_span_ns:
            return False
        spread = kept[0].half_width_ns + kept[-1].half_width_ns
        return spread / span_ns < 0.5 * self.max_ppm * 1e-6

    # -- output ----------------------------------------------------------------------------

    @property
    def synced(self) -> bool:
        """True once an exchange succeeded."""
        return self._fit is not None

    @property
    def estimate(self) -> ClockEstimate:
        """The current fit; raises :class:`NotSynced` before the first exchange."""
        if self._fit is None:
            raise NotSynced("no time-sync exchange with the board yet")
        return self._fit

    def host_ns(self, ticks: int) -> int:
        """Host nanoseconds of an unwrapped tick count."""
        fit = self.estimate
        return round(fit.host_ref + fit.ns_per_tick * (ticks - fit.tick_ref))

    def to_host_ns(self, raw_ticks: int) -> int:
        """Host nanoseconds (the table clock) of a raw 32-bit tick value."""
        return self.host_ns(self.unwrap(raw_ticks))

    def board_ticks(self, host_ns: int) -> int:
        """The unwrapped tick count the board shows at host time ``host_ns``."""
        fit = self.estimate
        return round(fit.tick_ref + (host_ns - fit.host_ref) / fit.ns_per_tick)

    def error_bound_ns(self, ticks: float | None = None) -> int:
        """Worst-case error of :meth:`host_ns` at unwrapped ``ticks`` (default: the newest
        exchange), assuming the drift is constant over the window and within ``max_ppm``."""
        fit = self.estimate
        x = fit.tick_ref if ticks is None else float(ticks)
        xs, bounds = self._xs, self._bounds
        # The error is a straight line in x: from any kept exchange it moves at most at the
        # slope bound, and between two neighbours it stays within the larger of their bounds.
        best = min(b + self._slope_err * abs(x - xk) for b, xk in zip(bounds, xs, strict=True))
        if xs[0] <= x <= xs[-1]:
            i = bisect.bisect_right(xs, x) - 1
            j = min(i + 1, len(xs) - 1)
            best = min(best, max(bounds[i], bounds[j]))
        return int(best) + 1
