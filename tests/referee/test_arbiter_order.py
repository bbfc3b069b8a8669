"""The arbiter's promise to the slap pads: delivered within the window → judged in time order."""

from __future__ import annotations

import pytest
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


@pytest.mark.slow
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


# -- sources that report their progress (watermarks) -----------------------------------------

@st.composite
def sourced(draw: st.DrawFn) -> tuple[list[tuple[int, str, Input]], dict[str, int]]:
    """Inputs of two sources ``a`` and ``b``, each delivered some delay after its t (a source's
    own delay stays under its bound), in delivery order; and each source's bound."""
    bounds = {"a": draw(st.integers(0, WINDOW // 2)), "b": draw(st.integers(0, WINDOW // 2))}
    out = []
    for _ in range(draw(st.integers(1, 14))):
        source = draw(st.sampled_from(["a", "b"]))
        t = draw(st.integers(0, 5_000))
        delay = draw(st.integers(0, bounds[source]))
        act = draw(st.sampled_from(["slap", "lay"]))
        out.append((t + delay, source, Input(t, draw(st.integers(0, 7)), act)))
    out.sort(key=lambda x: x[0])
    return out, bounds


@settings(max_examples=300, deadline=None)
@given(sourced(), st.integers(1, 200), st.booleans())
@pytest.mark.slow
def test_sources_that_keep_their_promise_release_early_and_in_judging_order(
    case: tuple[list[tuple[int, str, Input]], dict[str, int]], poll_every: int, b_quiet: bool
) -> None:
    """Each source reports ``now - bound`` as its progress (it delivers within its bound): the
    release order is still the judging order, nothing is late, and each input leaves no later
    than its source's bound after its t (one window when source ``b`` stays quiet)."""
    delivered, bounds = case
    arb = Arbiter(WINDOW)
    arb.add_source("a")
    arb.add_source("b")
    out: list[tuple[int, Input]] = []
    now = 0
    pending = list(delivered)
    arrival: dict[int, int] = {}
    while pending or len(arb):
        while pending and pending[0][0] <= now:
            inp = pending.pop(0)[2]
            arrival[id(arb.push(inp))] = len(arrival)
        arb.progress("a", now - bounds["a"])
        if not b_quiet:
            arb.progress("b", now - bounds["b"])
        out += [(now, i) for i in arb.release(now)]
        now += poll_every
    released = [i for _, i in out]
    assert arb.late == 0
    assert released == sorted(released, key=lambda i: judging_key(i, arrival[id(i)]))
    worst = WINDOW if b_quiet else max(bounds.values())
    for at, inp in out:
        assert at - inp.t < worst + poll_every


def test_a_source_never_heard_from_holds_release_to_the_window() -> None:
    arb = Arbiter(WINDOW)
    arb.add_source("gpio")
    arb.add_source("board")
    arb.push(Input(100, 0, "slap"))
    arb.progress("gpio", 10_000)
    assert arb.sources == ("gpio", "board")
    assert arb.limit(200) == 200 - WINDOW
    assert arb.release(200) == []
    assert arb.release(100 + WINDOW) == [Input(100, 0, "slap")]


def test_every_source_past_an_input_releases_it_at_once() -> None:
    arb = Arbiter(WINDOW)
    arb.add_source("gpio")
    arb.add_source("board")
    arb.push(Input(100, 0, "slap"))
    arb.progress("gpio", 150)
    arb.progress("board", 99)
    assert arb.release(160) == []  # the board may still hand in something stamped 100
    arb.progress("board", 50)  # going back changes nothing
    arb.progress("board", 100)
    assert arb.limit(160) == 100
    assert arb.release(160) == [Input(100, 0, "slap")]
    assert arb.horizon == 100


def test_a_source_whose_progress_ran_ahead_of_its_edge_gets_it_restamped() -> None:
    """The source broke its promise: the late input is judged after what was released,
    restamped and counted, and the restamped input is what a replay sees."""
    arb = Arbiter(WINDOW)
    arb.add_source("gpio")
    arb.push(Input(100, 1, "slap"))
    arb.progress("gpio", 300)
    assert arb.release(310) == [Input(100, 1, "slap")]
    late = arb.push(Input(90, 2, "slap"))
    assert arb.late == 1 and late == Input(301, 2, "slap")


def test_no_source_means_the_window_alone() -> None:
    arb = Arbiter(WINDOW)
    assert arb.limit(5_000) == 5_000 - WINDOW
