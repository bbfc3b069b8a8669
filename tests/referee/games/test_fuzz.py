"""Any well-formed journal input, however senseless, is judged: never an exception, and a
refused input changes nothing but the verdict stream."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.cards import full_deck
from referee.games import games, parse_options
from referee.journal import Journal, JournalHeader
from referee.model import Input
from referee.table import replay

CARDS = full_deck()


def inputs_for(game: str, seats: int) -> st.SearchStrategy[Input]:
    acts = list(games[game].acts)
    card = st.sampled_from(CARDS)
    return st.builds(
        Input,
        t=st.integers(0, 10**10),
        seat=st.integers(0, seats - 1),
        act=st.sampled_from(acts),
        card=st.none() | card,
        cards=st.none() | st.lists(card, min_size=1, max_size=3).map(tuple),
        as_=st.none() | card,
        call=st.none() | st.just("lappen"),
        hands=st.none() | st.lists(st.lists(card, max_size=6).map(tuple), min_size=seats,
                                   max_size=seats).map(tuple),
        stock=st.none() | st.lists(card, max_size=8).map(tuple),
        upcard=st.none() | card,
    ).filter(lambda i: i.act != "play" or i.cards)


GAME_OPTIONS = {
    "beggar-my-neighbour": st.fixed_dictionaries({}, optional={"time_limit_s": st.just(5)}),
    "banka-bever": st.fixed_dictionaries({}, optional={
        "false_slap_penalty": st.sampled_from(["none", "burn"]),
        "slap_back_in": st.booleans(), "bottom_match": st.booleans(),
        "collect_grace_ms": st.sampled_from([0, 1500])}),
    "vandatta": st.fixed_dictionaries({}, optional={
        k: st.booleans() for k in ("reshuffle_discards", "no_special_on_special",
                                   "no_special_finish", "lappen", "points_game")}),
}


@st.composite
def journals(draw: st.DrawFn) -> Journal:
    game = draw(st.sampled_from(sorted(GAME_OPTIONS)))
    seats = draw(st.integers(2, {"beggar-my-neighbour": 4, "banka-bever": 8,
                                 "vandatta": 7}[game]))
    options = parse_options(game, draw(GAME_OPTIONS[game]))
    observed = draw(st.booleans())
    header = JournalHeader(game, tuple(f"p{i}" for i in range(seats)), draw(
        st.integers(0, seats - 1)), options, None if observed else draw(st.integers(0, 99)))
    return Journal(header.resolved(), draw(st.lists(inputs_for(game, seats), max_size=60)))


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(journals())
@pytest.mark.slow
def test_senseless_inputs_are_judged_without_exceptions(journal: Journal) -> None:
    result = replay(journal)
    state = result.state
    assert len(state["counts"]) == journal.header.n_seats
    for v in result.verdicts:
        assert v.verdict in {"challenge", "pile_won", "false_slap", "slap_lost", "illegal",
                             "desync", "out", "round_over", "game_over"}, v
        if v.verdict == "illegal":
            assert v["code"] and v["reason"]
    if not journal.header.observed and journal.header.game != "vandatta":
        # Pile games with a known deal: every card is still somewhere.
        assert sum(state["counts"]) + len(state["pile"]) == 52
    assert replay(journal).verdicts == result.verdicts  # the same inputs, the same verdicts
