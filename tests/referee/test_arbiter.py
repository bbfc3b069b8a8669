"""The arbiter releases inputs in judging order, whatever order they arrived in."""

import random

from hypothesis import given
from hypothesis import strategies as st

from referee.arbiter import Arbiter
from referee.model import Input


def test_out_of_order_arrivals_come_out_in_time_order() -> None:
    arb = Arbiter(settle_ns=10)
    arb.push(Input(105, 1, "slap"))
    arb.push(Input(100, 2, "slap"))
    arb.push(Input(105, 0, "lay"))
    assert arb.release(110) == [Input(100, 2, "slap")]
    assert arb.release(120) == [Input(105, 0, "lay"), Input(105, 1, "slap")]
    assert arb.next_due() is None


def test_late_input_is_restamped_after_the_horizon() -> None:
    arb = Arbiter(settle_ns=10)
    arb.push(Input(100, 0, "lay"))
    arb.release(200)
    late = arb.push(Input(150, 1, "slap"))
    assert late.t == 191 and arb.late == 1
    assert arb.flush() == [late]


@given(st.lists(st.tuples(st.integers(0, 50), st.sampled_from(["lay", "slap"])), max_size=40),
       st.randoms())
def test_flush_is_a_stable_sort_by_t_then_slaps_last(items, rnd: random.Random) -> None:
    inputs = [Input(t, k % 8, act) for k, (t, act) in enumerate(items)]
    arb = Arbiter(settle_ns=0)
    for inp in inputs:
        arb.push(inp)
    out = arb.flush()
    expected = sorted(inputs, key=lambda i: (i.t, 1 if i.act == "slap" else 0))
    assert out == expected


def test_other_acts_of_one_instant_keep_file_order() -> None:
    """docs/journal.md: only a slap gives way to the lay/play of its instant; a lappen call followed
    by the play that goes out, or a draw followed by playing the drawn card, keep file order."""
    arb = Arbiter(settle_ns=0)
    call, play, draw = Input(5, 0, "call", call="lappen"), Input(5, 0, "play"), Input(5, 1, "draw")
    for inp in (call, play, draw, Input(5, 1, "play")):
        arb.push(inp)
    assert [i.act for i in arb.flush()] == ["call", "play", "draw", "play"]


@given(st.lists(st.tuples(st.integers(0, 50), st.sampled_from(["lay", "slap", "play"])),
                max_size=40), st.integers(0, 40), st.integers(-1, 60))
def test_push_all_is_push_one_after_the_other(items, cut: int, release_at: int) -> None:
    """``push_all`` (a replay, a resume) holds, restamps and orders as ``push`` does, before a
    release and after one."""
    inputs = [Input(t, k % 8, act) for k, (t, act) in enumerate(items)]
    one, many = Arbiter(settle_ns=0), Arbiter(settle_ns=0)
    pushed_one = [one.push(inp) for inp in inputs[:cut]]
    pushed_many = many.push_all(inputs[:cut])
    if release_at >= 0:
        assert one.release(release_at) == many.release(release_at)
    pushed_one += [one.push(inp) for inp in inputs[cut:]]
    pushed_many += many.push_all(iter(inputs[cut:]))
    assert pushed_many == pushed_one and many.late == one.late and len(many) == len(one)
    assert many.flush() == one.flush() and many.horizon == one.horizon
