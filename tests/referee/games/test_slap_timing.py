"""The timing of slaps (issue 11): each race's margins, each slap's reaction time, a table's
declared timestamp resolution, and each seat's statistics. Every figure below is worked out by
hand from the stamps in the test (times in ns; the double is laid at 2 000 ms)."""

from __future__ import annotations

import pytest

from referee.cards import Card
from referee.deal import PileDeal
from referee.errors import OptionError
from referee.games import parse_options
from referee.games.banka_bever import BankaBever
from referee.journal import JournalHeader, dump_journal, parse_lines
from referee.model import Input
from referee.options import BankaOptions, options_to_json
from tests.referee.games.test_banka_bever import MS, full, game, lay

US = 1_000
LAY = 2_000 * MS  # the second eight, making a double


def doubled(**opts: object):
    """Four seats; seat 0 lays 8C at 1 000 ms, seat 1 lays 8D at 2 000 ms: a double, seat 2 to
    lay next."""
    e = game(4, full(4, ["8C", "8D"]), **opts)
    lay(e, 1000, 0)
    lay(e, 2000, 1)
    return e


def judge(e, *slaps: tuple[int, int]):
    """Slaps ``(seat, t)`` in judging order, then time passes well beyond the last."""
    out = []
    for seat, t in slaps:
        out += e.apply(Input(t, seat, "slap"))
    return [(v.verdict, v.data) for v in out + e.advance(slaps[-1][1] + 10 * MS)]


def test_a_race_one_microsecond_apart_carries_its_margin_and_reactions() -> None:
    e = doubled()
    got = judge(e, (3, LAY + 300 * US), (2, LAY + 301 * US))
    assert got == [
        ("pile_won", {"seat": 3, "reason": "double", "cards": 2, "reaction_ns": 300_000}),
        ("slap_lost", {"seat": 2, "to": 3, "margin_ns": 1_000, "reaction_ns": 301_000}),
    ]


def test_a_slap_long_after_the_win_lost_by_its_margin() -> None:
    e = doubled()
    judge(e, (3, LAY + 300 * US))
    got = judge(e, (0, LAY + 450 * MS))
    assert got == [("slap_lost", {"seat": 0, "to": 3, "margin_ns": 450 * MS - 300 * US,
                                  "reaction_ns": 450 * MS})]


def test_an_exact_tie_goes_by_the_clockwise_rule_with_margin_zero() -> None:
    e = doubled()  # seat 2 is to lay: first in tie order
    got = judge(e, (3, LAY + 300 * US), (2, LAY + 300 * US))
    assert got == [
        ("pile_won", {"seat": 2, "reason": "double", "cards": 2, "reaction_ns": 300_000,
                      "tie": True, "margin_ns": 0}),
        ("slap_lost", {"seat": 3, "to": 2, "margin_ns": 0, "reaction_ns": 300_000}),
    ]


def test_without_a_resolution_three_microseconds_decide() -> None:
    e = doubled()
    got = judge(e, (3, LAY + 300 * US), (2, LAY + 303 * US))
    assert [(k, d["seat"], d.get("margin_ns")) for k, d in got] == [
        ("pile_won", 3, None), ("slap_lost", 2, 3_000)]


def test_a_declared_resolution_makes_slaps_closer_than_it_a_tie() -> None:
    """slap_resolution_us=5: seat 2's slap 3 µs after seat 3's is the same instant; the tie rule
    gives seat 2 (to lay next) the pile, and seat 3's margin is negative: it was first."""
    e = doubled(slap_resolution_us=5)
    got = judge(e, (3, LAY + 300 * US), (2, LAY + 303 * US))
    assert got == [
        ("pile_won", {"seat": 2, "reason": "double", "cards": 2, "reaction_ns": 303_000,
                      "tie": True, "margin_ns": 3_000}),
        ("slap_lost", {"seat": 3, "to": 2, "margin_ns": -3_000, "reaction_ns": 300_000}),
    ]


def test_a_resolution_does_not_join_slaps_further_apart_than_it() -> None:
    e = doubled(slap_resolution_us=5)
    got = judge(e, (3, LAY + 300 * US), (2, LAY + 306 * US))
    assert [(k, d["seat"], d.get("margin_ns")) for k, d in got] == [
        ("pile_won", 3, None), ("slap_lost", 2, 6_000)]


def test_a_slap_exactly_the_resolution_after_the_first_is_not_tied() -> None:
    """RULES.md: slaps *less than* r µs after the first valid slap are tied; one exactly r µs
    after it lost the race."""
    e = doubled(slap_resolution_us=5)
    got = judge(e, (3, LAY + 300 * US), (2, LAY + 305 * US))
    assert [(k, d["seat"], d.get("margin_ns")) for k, d in got] == [
        ("pile_won", 3, None), ("slap_lost", 2, 5_000)]
    e = doubled(slap_resolution_us=5)
    got = judge(e, (3, LAY + 300 * US), (2, LAY + 305 * US - 1))
    assert [(k, d["seat"]) for k, d in got] == [("pile_won", 2), ("slap_lost", 3)]


def _short(*stacks: str) -> PileDeal:
    return PileDeal(stacks=tuple(tuple(Card.parse(x) for x in st.split()) for st in stacks))


def test_the_instant_opens_at_the_first_valid_slap_not_a_refused_one() -> None:
    """Seat 0 laid its last card; its refused slap (no cards) opens no instant: seat 2's slap
    4 µs after seat 3's, the first valid one, is tied with it, and seat 2 (to lay) wins."""
    e = BankaBever(4, 3, BankaOptions(slap_resolution_us=5), _short("8C", "8D 2D", "3H 4H",
                                                                       "3S 4S"))
    lay(e, 1000, 0)
    lay(e, 2000, 1)
    got = judge(e, (0, LAY + 300 * US), (3, LAY + 303 * US), (2, LAY + 307 * US))
    assert [(k, d.get("seat"), d.get("code")) for k, d in got] == [
        ("illegal", 0, "no_cards"), ("pile_won", 2, None), ("slap_lost", 3, None),
        ("out", 0, None)]


@pytest.mark.parametrize("burn", [False, True])
def test_a_valid_slap_before_the_claim_is_final_wins_within_a_resolution(burn: bool) -> None:
    """RULES.md: a valid slap before the claim is final wins the pile instead. With a
    resolution, its instant still runs when the grace ends: the claim waits for it, and the
    engine's next deadline is the instant's end."""
    e = BankaBever(3, 2, BankaOptions(slap_resolution_us=1000,
                                      false_slap_penalty="burn" if burn else "none"),
                   _short("QC 2C", "7D 7H 3D", "4S 5S"))
    lay(e, 1000, 0)  # QC: seat 1 owes two
    lay(e, 1100, 1)
    lay(e, 1200, 1)  # 7H on 7D: a double, and seat 0's claim until 2 700 ms
    out = e.apply(Input(2700 * MS - 100 * US, 2, "slap"))
    assert e.next_deadline() == 2700 * MS - 100 * US + 1000 * US - 1
    out += e.advance(2700 * MS)  # the grace is over, the slap's instant is not
    assert out == []
    out += e.advance(2700 * MS + 900 * US - 1)  # the instant's last nanosecond
    assert [(v.verdict, v.data.get("seat"), v.data.get("reason")) for v in out] == [
        ("pile_won", 2, "double")]
    assert e.state()["claim"] is None and e.state()["counts"] == [1, 1, 5]


def test_a_lay_inside_the_resolution_closes_the_instant_first() -> None:
    """The slap is judged against the pile before the lay (a false slap here), never after."""
    e = game(4, full(4, ["8C", "9D"]), slap_resolution_us=1_000)
    lay(e, 1000, 0)
    out = e.apply(Input(2000 * MS - 500 * US, 3, "slap"))
    out += e.apply(Input(2000 * MS, 1, "lay"))
    assert [(v.verdict, v.data.get("seat"), v.data.get("reaction_ns")) for v in out] == [
        ("false_slap", 3, 1000 * MS - 500 * US)]


def test_a_false_slap_carries_the_time_since_the_last_lay() -> None:
    e = game(4, full(4, ["8C", "9D"]))
    lay(e, 1000, 0)
    assert judge(e, (2, 1250 * MS)) == [("false_slap", {"seat": 2, "reaction_ns": 250 * MS})]


def test_a_false_slap_before_any_lay_has_no_reaction_time() -> None:
    e = game(4, full(4, ["8C", "9D"]))
    assert judge(e, (2, 5 * MS)) == [("false_slap", {"seat": 2, "reaction_ns": None})]


def test_each_seats_statistics_count_slaps_wins_races_and_missed_chances() -> None:
    """Chance 1 (the double): seat 3 wins (0.3 ms), seat 2 loses (0.301 ms), seats 0 and 1 let
    it pass. Seat 3 lays 5H next, seat 0 lays 5S (1 000 ms later): chance 2, seat 0 wins it after
    0.2 ms; seats 1, 2 and 3 miss it; seat 2 slaps falsely before it."""
    e = game(4, full(4, ["8C 5S", "8D", "2C", "9H 5H"]))
    lay(e, 1000, 0)
    lay(e, 2000, 1)
    judge(e, (3, LAY + 300 * US), (2, LAY + 301 * US))  # seat 3 wins the pile and lays next
    lay(e, 3000, 3)  # 9H: the chance of the double closes
    assert judge(e, (2, 3500 * MS))[0][0] == "false_slap"
    lay(e, 4000, 0)  # 5S on 9H: nothing
    timing = e.state()["timing"]
    assert [t["missed"] for t in timing] == [1, 1, 0, 0]
    assert timing[3] == {"slaps": 1, "wins": 1, "false_slaps": 0, "races_lost": 0, "missed": 0,
                         "median_reaction_ns": 300_000, "best_reaction_ns": 300_000}
    assert timing[2] == {"slaps": 2, "wins": 0, "false_slaps": 1, "races_lost": 1, "missed": 0,
                         "median_reaction_ns": 301_000, "best_reaction_ns": 301_000}
    assert timing[0]["slaps"] == 0 and timing[0]["median_reaction_ns"] is None


def test_median_of_an_even_count_is_the_lower_middle() -> None:
    e = doubled()
    judge(e, (3, LAY + 300 * US))
    judge(e, (3, LAY + 900 * US))  # seat 3 slaps again after its own win: slap_lost, 0.9 ms
    timing = e.state()["timing"][3]
    assert timing["slaps"] == 2 and timing["median_reaction_ns"] == 300_000
    assert timing["best_reaction_ns"] == 300_000


def test_the_resolution_option_is_checked_and_kept_out_of_journals_at_its_default() -> None:
    with pytest.raises(OptionError, match="slap_resolution_us.*microseconds"):
        parse_options("banka-bever", {"slap_resolution_us": -1})
    with pytest.raises(OptionError):
        parse_options("banka-bever", {"slap_resolution_us": 1.5})
    assert "slap_resolution_us" not in options_to_json(BankaOptions())
    assert options_to_json(BankaOptions(slap_resolution_us=50))["slap_resolution_us"] == 50
    header = JournalHeader("banka-bever", ("A", "B"), options=BankaOptions(slap_resolution_us=50))
    again = parse_lines(dump_journal(header, []).splitlines())
    assert again.header.options == BankaOptions(slap_resolution_us=50)
