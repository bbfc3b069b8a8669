"""referee analyse (issue 13.3): the statistics against figures worked out by hand, the games
counted one by one, the same figures for any --jobs, Ctrl-C, and report.html in Chromium."""

from __future__ import annotations

import json
import math
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

import cardtable.analyse as analyse
from cardtable.analyse import (
    GameRecord,
    binomial_test,
    histogram,
    play_game,
    spread,
    student_t_two_sided,
    summarise,
    two_proportion_test,
    welch_test,
    wilson_interval,
)
from cardtable.cli import main
from cardtable.simulate import START_NS, Simulation

ROOT = Path(__file__).resolve().parents[2]


def run_json(capsys, *argv: str) -> dict:
    assert main(["analyse", *argv, "--json"]) == 0
    return json.loads(capsys.readouterr().out)


# -- statistics, by hand ------------------------------------------------------------------------
def test_wilson_interval_by_hand() -> None:
    # 8 wins in 10, z = 1.959964, z² = 3.841459: centre (0.8 + z²/20) / (1 + z²/10)
    # = 0.992073 / 1.384146 = 0.716740; half-width z / 1.384146 * sqrt(0.8 * 0.2 / 10 + z²/400)
    # = 1.416009 * 0.160012 = 0.226578: (0.490162, 0.943318), the published (0.4902, 0.9433).
    low, high = wilson_interval(8, 10)
    assert low == pytest.approx(0.716740 - 0.226578, abs=3e-6)
    assert high == pytest.approx(0.716740 + 0.226578, abs=3e-6)
    # none in 10: from 0 to z² / (10 + z²) = 3.841459 / 13.841459 = 0.277534
    assert wilson_interval(0, 10) == pytest.approx((0.0, 0.277534), abs=2e-6)
    assert wilson_interval(0, 0) == (0.0, 1.0)


def test_binomial_test_by_hand() -> None:
    # 8 of 10 at 1/2: P(X >= 8) = (45 + 10 + 1) / 1024, doubled by symmetry
    assert binomial_test(8, 10, 0.5) == pytest.approx(2 * 56 / 1024)
    assert binomial_test(5, 10, 0.5) == pytest.approx(1.0)
    # 0 of 4 at 1/4: P(0) = (3/4)^4 = 0.316406; as likely or less: 0 (0.3164), 2 (0.2109),
    # 3 (0.0469), 4 (0.0039), not 1 (0.4219): total 0.578125
    assert binomial_test(0, 4, 0.25) == pytest.approx(0.578125)


def test_two_proportion_test_by_hand() -> None:
    # 30/100 against 45/100: pooled 0.375, se sqrt(0.375 * 0.625 * 0.02) = 0.0684653,
    # z = 0.15 / 0.0684653 = 2.19089, two-sided p = 0.028460
    diff, p = two_proportion_test(30, 100, 45, 100)
    assert diff == pytest.approx(0.15)
    assert p == pytest.approx(0.028460, abs=1e-5)
    assert two_proportion_test(0, 0, 1, 2) == (0.0, 1.0)


def test_student_t_against_closed_forms() -> None:
    # df 1 (Cauchy): p = 1 - 2 atan(t) / pi; df 2: p = 1 - t / sqrt(2 + t²); the t table's
    # 2.228139 is the two-sided 5 % point of df 10
    for t in (0.3, 1.0, 2.5):
        assert student_t_two_sided(t, 1) == pytest.approx(1 - 2 * math.atan(t) / math.pi)
        assert student_t_two_sided(t, 2) == pytest.approx(1 - t / math.sqrt(2 + t * t))
    assert student_t_two_sided(2.228139, 10) == pytest.approx(0.05, abs=1e-6)
    assert student_t_two_sided(1.959964, math.inf) == pytest.approx(0.05, abs=1e-6)


def test_welch_test_by_hand() -> None:
    # means 2.5 and 5; variances 5/3 and 20/3 over 4 each: se² = 25/12, t = 2.5 / 1.443376
    # = 1.732051; df = (25/12)² / ((5/12)² / 3 + (20/12)² / 3) = 4.411765
    diff, p = welch_test([1, 2, 3, 4], [2, 4, 6, 8])
    assert diff == pytest.approx(2.5)
    assert p == pytest.approx(student_t_two_sided(1.732051, 4.411765), abs=1e-6)
    assert 0.1 < p < 0.2  # between the df-4 and df-5 two-sided points of t = 1.73 (0.158, 0.144)
    assert welch_test([1], [2, 3]) == (1.5, 1.0)


def test_spread_and_histogram() -> None:
    s = spread([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11])
    assert (s["mean"], s["median"], s["min"], s["max"], s["p10"], s["p90"]) == (
        6, 6, 1, 11, 2, 10)
    h = histogram([0, 1, 1, 2, 10], bins=5)
    assert h["edges"] == [0, 2, 4, 6, 8, 10] and h["counts"] == [3, 1, 0, 0, 1]


def test_summary_of_records_counted_by_hand() -> None:
    def rec(seed: int, winners: tuple[int, ...], cards: int, ended: bool = True) -> GameRecord:
        return GameRecord(0, seed, 1, winners, cards, cards // 10, cards * 10**9, cards, ended)

    records = [rec(1, (1,), 100), rec(2, (0,), 200), rec(3, (1,), 300), rec(4, (), 0, False)]
    s = summarise(records, 2)
    assert [x["wins"] for x in s["seats"]] == [1, 2]
    assert s["seats"][1]["rate"] == 0.5 and s["games"] == 4 and s["stopped"] == 1
    assert s["first_player"]["wins"] == 2 and s["first_player"]["advantage"] == 0.0
    assert s["length"]["cards"]["mean"] == 200  # the game that did not end is not a length
    assert s["length"]["minutes"]["max"] == pytest.approx(300 / 60)  # 300 s of table time


# -- the games themselves -----------------------------------------------------------------------
def test_small_k_counted_game_by_game(capsys) -> None:
    """Twelve games played here one by one with the simulator and counted: the same wins, the
    same first-player wins, the same lengths."""
    results = run_json(capsys, "--game", "banka-bever", "--players", "3", "--games", "12",
                       "--seed", "40", "--jobs", "1")
    wins = [0, 0, 0]
    first_wins = 0
    cards, minutes = [], []
    for seed in range(40, 52):
        sim = Simulation("banka-bever", 3, seed)
        sim.run()
        state = sim.table.state()
        for w in state["winners"]:
            wins[w] += 1
        first_wins += sim.table.inputs[0].seat in state["winners"]
        cards.append(state["cards_played"])
        minutes.append((sim.t - START_NS) / 60e9)
    (v,) = results["variants"]
    assert [s["wins"] for s in v["seats"]] == wins and sum(wins) == 12
    assert v["first_player"]["wins"] == first_wins
    assert v["length"]["cards"]["mean"] == pytest.approx(sum(cards) / 12)
    assert v["length"]["cards"]["max"] == max(cards)
    assert v["length"]["minutes"]["median"] == pytest.approx(sorted(minutes)[5] / 2
                                                             + sorted(minutes)[6] / 2)


def test_the_same_figures_for_any_number_of_jobs(capsys) -> None:
    argv = ["--game", "vandatta", "--players", "3", "--games", "30", "--seed", "5",
            "--compare", "lappen=false,true"]
    one = run_json(capsys, *argv, "--jobs", "1")
    two = run_json(capsys, *argv, "--jobs", "2")
    three = run_json(capsys, *argv, "--jobs", "3")
    for r in (one, two, three):
        r.pop("run")
    assert one == two == three
    assert [v["games"] for v in one["variants"]] == [30, 30]
    other = run_json(capsys, *argv[:-2], "--seed", "6", "--jobs", "2")
    other.pop("run")
    assert other != one


@pytest.mark.slow
def test_compare_seeds_each_value_apart(tmp_path, capsys) -> None:
    out = tmp_path / "rep"
    assert main(["analyse", "--game", "beggar-my-neighbour", "--players", "3", "--games", "4",
                 "--seed", "10", "--compare", "time_limit_s=none,60", "--jobs", "1",
                 "--out", str(out)]) == 0
    text = capsys.readouterr().out
    assert "time_limit_s" in text and "difference" in text
    data = json.loads((out / "results.json").read_text())
    rows = data["records"]["rows"]
    assert [(r[0], r[1]) for r in rows] == [(0, s) for s in range(10, 14)] + [
        (1, s) for s in range(14, 18)]
    assert data["variants"][1]["options"] == {"time_limit_s": 60}
    assert data["comparisons"][0]["first_player"]["test"] == "two-proportion z-test"
    # a 60 s limit (from the first card, about 1.5 s into the table time) ends every game by
    # about 62 s; without it these games take minutes (300-odd cards at 0.55 s a card)
    assert data["variants"][1]["length"]["minutes"]["max"] <= 62 / 60
    assert data["variants"][0]["length"]["minutes"]["min"] > 62 / 60


def test_a_never_ending_beggar_deal_is_counted_not_played(monkeypatch) -> None:
    """The README's never-ending two-seat deal: the solver sees the loop and the simulation
    does not run (it would play 200 000 inputs); a game stopped at the input limit counts as
    never ending too."""
    from referee.games.beggar_my_neighbour import notation_deal
    from referee.journal import JournalHeader

    deal, dealer = notation_deal("---K---Q-KQAJ-----AAJ--J--", "----------Q----KQ-J-----KA")

    class Looping(Simulation):
        def __init__(self, game, players, seed, **kw) -> None:
            super().__init__(game, players, seed, **kw)
            self.header = JournalHeader(game, self.header.seats, dealer, self.header.options,
                                        seed, deal)

        def run(self, on_step=None):
            raise AssertionError("a never-ending deal was played")

    monkeypatch.setattr(analyse, "Simulation", Looping)
    record = play_game("beggar-my-neighbour", 2, 1, {})
    assert record.never_ending and not record.ended and record.first == 0
    monkeypatch.undo()

    import cardtable.simulate as simulate

    monkeypatch.setattr(simulate, "MAX_INPUTS", 40)
    monkeypatch.setattr(analyse, "MAX_INPUTS", 40)
    record = play_game("beggar-my-neighbour", 3, 1, {})
    assert record.inputs == 40 and record.never_ending and not record.ended
    s = summarise([record], 3)
    assert s["never_ending"] == 1 and s["length"]["cards"]["mean"] is None


def test_clear_errors(capsys, monkeypatch) -> None:
    def error(*argv: str) -> str:
        assert main(["analyse", "--game", "banka-bever", *argv]) == 2
        return capsys.readouterr().err

    assert "2 to 8" in error("--players", "9")
    assert "'nope'" in error("-o", "nope=1")
    assert "two values or more" in error("--compare", "slap_back_in=true")
    assert "false_slap_penalty" in error("--compare", "false_slap_penalty=none,kick")
    assert "give it once" in error("-o", "slap_back_in=true", "--compare", "slap_back_in=0,1")
    assert "--games" in error("--games", "0")
    # made up front, the seeds of a number with no bound took the memory before a game
    assert "--games must be 1 to 1,000,000" in error("--games", "9" * 23)
    import cardtable.extras

    real = cardtable.extras.importlib.util.find_spec
    monkeypatch.setattr(cardtable.extras.importlib.util, "find_spec",
                        lambda name, *a: None if name == "matplotlib" else real(name, *a))
    message = error("--games", "2", "--out", "somewhere")
    assert "matplotlib" in message and "pip install" in message and "[analyse]" in message


@pytest.mark.parametrize("jobs", ["1", "2"])
@pytest.mark.slow
def test_ctrl_c_keeps_and_prints_what_it_has(jobs: str) -> None:
    """A real SIGINT to the command: it stops at once, prints the figures of the games that
    finished and exits 130 (Vändåtta: short games, so a loaded machine has finished some of
    them within the 3 s).

    The command is started with SIGINT at its default, as from a terminal: a suite run as a
    background job of a script (``bash .ci/run &``) has SIGINT ignored, which a child
    inherits, and a command started so rightly keeps ignoring Ctrl-C."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)  # SIG_DFL after exec
    try:
        proc = subprocess.Popen(
            [sys.executable, "-m", "cardtable.cli", "analyse", "--game", "vandatta",
             "--players", "3", "--games", "100000", "--jobs", jobs, "--json"],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=ROOT,
            env=dict(os.environ, PYTHONPATH=str(ROOT)))
    finally:
        signal.signal(signal.SIGINT, previous)
    assert proc.stderr is not None
    started = proc.stderr.readline()  # the command has started playing
    assert started == f"playing 100000 games in {jobs} process{'es' if jobs == '2' else ''}\n"
    time.sleep(3)
    assert proc.poll() is None
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=30)
    err = started + err
    assert proc.returncode == 130, err
    results = json.loads(out)
    played = results["variants"][0]["games"]
    assert results["interrupted"] is True and 0 < played < 100000
    assert sum(s["wins"] for s in results["variants"][0]["seats"]) <= played
    assert f"interrupted: {played} of 100000 games played" in err


@pytest.mark.slow
def test_report_html_opens_in_chromium_with_its_plots(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    from tests.web_pages import Chromium, chromium_binary

    out = tmp_path / "report"
    assert main(["analyse", "--game", "banka-bever", "--players", "3", "--games", "20",
                 "--compare", "false_slap_penalty=none,burn", "--jobs", "2",
                 "--out", str(out)]) == 0
    capsys.readouterr()
    assert sorted(p.name for p in out.iterdir()) == [
        "compare.png", "lengths.png", "report.html", "results.json", "winrates.png"]
    browser = Chromium(chromium_binary(), tmp_path / "profile", 1200, 900)
    try:
        browser.goto((out / "report.html").as_uri())
        browser.wait("document.readyState === 'complete'")
        images = browser.js("[...document.images].map(i => [i.getAttribute('src'), i.complete,"
                            " i.naturalWidth, i.naturalHeight])")
        assert sorted(i[0] for i in images) == ["compare.png", "lengths.png", "winrates.png"]
        assert all(complete and w > 300 and h > 200 for _, complete, w, h in images), images
        text = browser.js("document.body.innerText")
        assert "Banka bäver, 3 seats" in text and "false_slap_penalty=burn" in text
        assert "seat 2 wins" in text and "Welch" in text
        # the words of the terminal, never the state's field name (issue 37)
        assert "piles collected" in text and "tricks" not in text
        shot = browser.screenshot(tmp_path / "report.png")
        assert len(shot) > 10_000
    finally:
        browser.close()
