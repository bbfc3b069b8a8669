"""The arbiter's promise to the slap pads: delivered within the window → judged in time order."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from referee.arbiter import DEFAULT_SETTLE_NS, Arbiter
from referee.model import Input, judging_key

WINDOW = 1_000


@st.composite
def deliveries(draw: st.DrawFn) -> list[tuple[int, Input]]:
    """Inputs with times and delivery delays below the window, in delivery order."""
    n = draw(st.integers(1, 12))
    out = []
    for _ in range(n):
        t = draw(st.integers(0, 5_000))
        act = draw(st.sampled_from(["slap", "lay"]))
        seat = draw(st.integers(0, 7))
        delay = draw(st.integers(0, WINDOW - 1))
        out.append((t + delay, Input(t, seat, act)))
    out.sort(key=lambda x: x[0])
    return out


@settings(max_examples=300, deadline=None)
@given(deliveries(), st.integers(1, 300))
def test_inputs_delivered_within_the_window_come_out_in_judging_order(
    delivered: list[tuple[int, Input]], poll_every: int
) -> None:
    """Polled at any rhythm, with each input pushed within a window of its t: nothing is late
    and the release order is the judging order (t, lay before slap, arrival)."""
    arb = Arbiter(WINDOW)
    out: list[Input] = []
    now = 0
    pending = list(delivered)
    arrival: dict[int, int] = {}
    while pending or len(arb):
        while pending and pending[0][0] <= now:
            inp = pending.pop(0)[1]
            arrival[id(arb.push(inp))] = len(arrival)
        out += arb.release(now)
        now += poll_every
    assert arb.late == 0
    assert out == sorted(out, key=lambda i: judging_key(i, arrival[id(i)]))
    assert sorted(map(repr, out)) == sorted(repr(i) for _, i in delivered)


def test_late_input_is_counted_and_restamped_not_lost() -> None:
    arb = Arbiter(WINDOW)
    arb.push(Input(100, 0, "slap"))
    assert arb.release(100 + WINDOW) == [Input(100, 0, "slap")]
    late = arb.push(Input(50, 1, "slap"))  # delivered 1 050 after its time: too late
    assert arb.late == 1 and late.t > 100
    assert arb.flush() == [late]


def test_due_time_is_one_window_after_the_oldest_input() -> None:
    arb = Arbiter()
    assert arb.settle_ns == DEFAULT_SETTLE_NS == 20_000_000
    assert arb.next_due() is None
    arb.push(Input(7, 0, "slap"))
    arb.push(Input(3, 1, "slap"))
    assert arb.next_due() == 3 + DEFAULT_SETTLE_NS
    assert arb.release(2 + DEFAULT_SETTLE_NS) == []
    assert arb.release(3 + DEFAULT_SETTLE_NS) == [Input(3, 1, "slap")]
