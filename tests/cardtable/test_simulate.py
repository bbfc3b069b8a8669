"""Simulation: seeded, complete, and its journal replays to the very same verdicts."""

import hashlib
import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cardtable.cli import main
from cardtable.i18n import ENGLISH_LANGUAGE
from cardtable.simulate import Simulation
from referee.journal import dump_journal, read_journal
from referee.table import replay

GAMES = [("beggar-my-neighbour", 3), ("banka-bever", 4), ("vandatta", 3)]


def verdict_lines(verdicts) -> list[dict]:
    return [v.to_json() for v in verdicts]


@pytest.mark.parametrize("game, players", GAMES)
def test_same_seed_same_game(game: str, players: int) -> None:
    a = Simulation(game, players, 11)
    b = Simulation(game, players, 11)
    assert verdict_lines(a.run()) == verdict_lines(b.run())
    assert a.table.inputs == b.table.inputs
    c = Simulation(game, players, 12)
    assert c.run() != a.table.verdicts


@pytest.mark.parametrize("game, players", GAMES)
def test_journal_replays_to_the_simulations_verdicts(tmp_path, game: str, players: int) -> None:
    path = tmp_path / "game.jsonl"
    sim = Simulation(game, players, 5, journal_path=str(path))
    verdicts = sim.run()
    sim.table.journal.close()
    result = replay(read_journal(path))
    assert verdict_lines(result.verdicts) == verdict_lines(verdicts)
    assert result.state == sim.table.state()


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_time_limited_game_stops_laying_when_its_time_is_up(seed: int) -> None:
    sim = Simulation("beggar-my-neighbour", 3, seed, options={"time_limit_s": 5})
    verdicts = sim.run()
    over = [v for v in verdicts if v.verdict == "game_over"]
    assert len(over) == 1 and over[0].to_json()["reason"] == "time_limit"
    # no virtual player lays after the limit ran out: nothing is refused, nothing journaled late
    assert not [v for v in verdicts if v.verdict == "illegal"]
    assert all(inp.t < over[0].t for inp in sim.table.inputs)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 10_000), players=st.integers(2, 8),
       burn=st.booleans(), back_in=st.booleans())
def test_banka_simulations_end_and_replay(seed: int, players: int, burn: bool,
                                           back_in: bool) -> None:
    opts = {"false_slap_penalty": "burn" if burn else "none", "slap_back_in": back_in}
    sim = Simulation("banka-bever", players, seed, options=opts)
    verdicts = sim.run()
    state = sim.table.state()
    held = sum(state["counts"]) + len(state["pile"])
    assert held == 52
    from referee.journal import Journal

    again = replay(Journal(sim.header, list(sim.table.inputs)))
    assert verdict_lines(again.verdicts) == verdict_lines(verdicts)


def test_simulated_games_finish() -> None:
    for game, players in GAMES:
        sim = Simulation(game, players, 3)
        sim.run()
        assert sim.engine.over, game
        assert sim.table.state()["winners"]


def test_cli_simulate_json_and_replay(tmp_path, capsys) -> None:
    path = tmp_path / "g.jsonl"
    assert main(["simulate", "--game", "banka-bever", "--players", "4", "--seed", "7",
                 "--journal", str(path), "--json"]) == 0
    simulated = capsys.readouterr().out.splitlines()
    assert main(["replay", str(path), "--json"]) == 0
    replayed = capsys.readouterr().out.splitlines()
    assert simulated == replayed
    assert json.loads(replayed[-1])["state"]["over"] is True


def test_cli_errors_are_clear(capsys) -> None:
    assert main(["simulate", "--game", "banka-bever", "--players", "9"]) == 2
    assert "2 to 8" in capsys.readouterr().err
    assert main(["simulate", "--game", "banka-bever", "-o", "nope=1"]) == 2
    assert "'nope'" in capsys.readouterr().err
    assert main(["simulate", "--game", "banka-bever", "-o", "false_slap_penalty=kick"]) == 2
    assert "false_slap_penalty" in capsys.readouterr().err


def test_cli_replay_reports_malformed_line(tmp_path, capsys) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text(
        '{"journal": 1, "game": "beggar-my-neighbour", "seats": ["A", "B"], "seed": 1}\n'
        '{"t": 1, "seat": 1, "act": "lay"}\n'
        '{"t": 2, "seat": 0, "act": "jump"}\n')
    assert main(["replay", str(path), "--json"]) == 1
    captured = capsys.readouterr()
    assert "line 3" in captured.err and "unknown act" in captured.err
    assert captured.err.startswith(f"referee: {path}: line 3: ")  # as a damaged header's line
    last = json.loads(captured.out.splitlines()[-1])
    assert last["state"]["cards_played"] == 1
    # the last line says the state is only up to the line before (it had looked whole)
    assert last["stopped"]["line"] == 3 and "unknown act" in last["stopped"]["reason"]
    # --stats and --slaps say it in their last JSON line too
    assert main(["replay", str(path), "--json", "--stats"]) == 1
    assert json.loads(capsys.readouterr().out.splitlines()[-1])["stopped"]["line"] == 3
    assert main(["replay", str(path), "--json", "--slaps"]) == 1
    assert json.loads(capsys.readouterr().out.splitlines()[-1]) == {"stopped": last["stopped"]}
    assert main(["replay", str(path.with_name("good.jsonl")), "--json"]) == 2  # missing
    path.write_text("\n".join(path.read_text().splitlines()[:2]) + "\n")
    assert main(["replay", str(path), "--json"]) == 0
    assert "stopped" not in json.loads(capsys.readouterr().out.splitlines()[-1])
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2


def test_a_piped_simulation_prints_as_it_plays(tmp_path) -> None:
    """10.18: live into a pipe, the verdicts come as lines while the game goes on (before,
    nothing came until the game's end, minutes later at speed 1)."""
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "cardtable.cli", "simulate", "--game",
                             "banka-bever", "--players", "4", "--seed", "7", "--speed", "2"],
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        start = time.monotonic()
        first = proc.stdout.readline()
        assert "challenges" in first or "won" in first or "slap" in first, first
        assert proc.poll() is None and time.monotonic() - start < 20
    finally:
        proc.kill()
        proc.wait()


@pytest.mark.slow
def test_the_full_stack_leaves_no_folder_and_starts_its_clock_near_zero(tmp_path) -> None:
    """10.18: without --journal-dir the full stack's temporary journal folder is removed at the
    end, and its times start near 0:01, not at the machine's uptime."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, TMPDIR=str(tmp_path))
    run = subprocess.run([sys.executable, "-m", "cardtable.cli", "simulate", "--game",
                          "vandatta", "--players", "2", "--seed", "3", "--full-stack", "--json",
                          "--speed", "50"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert not list(tmp_path.glob("referee-full-stack-*"))
    first = json.loads(run.stdout.splitlines()[0])
    assert 1_000_000_000 <= first["t"] < 600_000_000_000, first


# -- issue 13.4: the faster simulator plays the very same games ------------------------------
FINGERPRINTS = Path(__file__).resolve().parents[1] / "data" / "simulate" / "journal_sha256.json"


def journal_sha256(sim: Simulation) -> str:
    """What tests/data/simulate/journal_sha256.json holds for a played simulation."""
    return hashlib.sha256(dump_journal(sim.header, sim.table.inputs).encode()).hexdigest()


def _fingerprinted() -> list[tuple[str, int, dict, int, int, str]]:
    games = json.loads(FINGERPRINTS.read_text())["games"]
    return [(game, n, opts, seed, count, sha) for game, rows in games.items()
            for n, opts, seed, count, sha in rows]


@pytest.mark.parametrize("game", ["beggar-my-neighbour", "banka-bever", "vandatta"])
@pytest.mark.slow
def test_200_seeds_per_game_give_the_journals_of_the_simulator_before_issue_13(
        game: str) -> None:
    """The file was written by the simulator at 3a38d19 (a git worktree of that commit, run
    with its own tree on PYTHONPATH): 200 seeds per game over several seat counts and options.
    run() (no state per step) plays every seed; steps() (a state per step) every eighth."""
    rows = [r for r in _fingerprinted() if r[0] == game]
    assert len(rows) == 200 and len({r[1] for r in rows}) >= 3
    differ = []
    for _, n, opts, seed, count, sha in rows:
        sim = Simulation(game, n, seed, options=opts)
        if seed % 8 == 0:
            for _step in sim.steps():
                pass
        else:
            sim.run()
        if journal_sha256(sim) != sha:
            differ.append((n, opts, seed, count, len(sim.table.inputs)))
    assert differ == []


def test_the_fingerprint_is_the_journal_file_the_simulation_writes(tmp_path) -> None:
    path = tmp_path / "g.jsonl"
    sim = Simulation("banka-bever", 4, 7, journal_path=str(path))
    sim.run()
    sim.table.journal.close()
    assert hashlib.sha256(path.read_bytes()).hexdigest() == journal_sha256(sim)


@pytest.mark.parametrize("game, players", GAMES)
def test_a_table_with_listeners_judges_through_its_own_release_and_plays_the_same(
        game: str, players: int) -> None:
    """The fast path judges without the table's state; with a listener the table's own
    release() judges. Same inputs, same verdicts, and the listener sees every step."""
    plain = Simulation(game, players, 21)
    plain.run()
    heard = Simulation(game, players, 21)
    seen: list[int] = []
    heard.table.listeners.append(lambda verdicts, state: seen.append(len(verdicts)))
    heard.run()
    assert heard.table.inputs == plain.table.inputs
    assert verdict_lines(heard.table.verdicts) == verdict_lines(plain.table.verdicts)
    assert len(seen) >= len(heard.table.inputs)


def test_steps_give_the_tables_state_after_each_input() -> None:
    sim = Simulation("banka-bever", 3, 2)
    for step in sim.steps():
        assert step.state == sim.table.state()


def test_simulate_fast_and_json_take_the_fast_path(monkeypatch, capsys) -> None:
    """Without a live view or a feed nothing reads the state: --fast and --json never call
    steps() (which builds it after every input), and print what steps() would have."""
    argv = ["simulate", "--game", "banka-bever", "--players", "3", "--seed", "4", "--json"]
    assert main(argv) == 0
    before = capsys.readouterr().out

    def no_steps(self):
        raise AssertionError("steps() called")

    monkeypatch.setattr(Simulation, "steps", no_steps)
    assert main(argv) == 0
    assert capsys.readouterr().out == before
    assert main(argv[:-1] + ["--fast"]) == 0
    assert "winner" in capsys.readouterr().out


def test_a_fast_vandatta_simulation_tells_every_play(tmp_path, capsys) -> None:
    """Issue 37: --fast printed three lines for a whole Vändåtta game (its plays give no
    verdict); now each play, draw, pass and call is a line, in the journal's order."""
    path = tmp_path / "g.jsonl"
    assert main(["simulate", "--game", "vandatta", "--players", "3", "--seed", "4", "--fast",
                 "--journal", str(path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    told = [line.split("  ", 1)[1] for line in lines if "  " in line]
    inputs = [i for i in read_journal(path).inputs if i.act != "deal"]
    plays = [t for t in told if t.startswith(("Anna ", "Bo ", "Cia "))
             and not t.endswith(("wins the round", "is out of the game"))
             and " wins the round" not in t]
    assert len(plays) == len(inputs) > 20
    assert plays[0].startswith(("Anna plays the", "Bo plays the", "Cia plays the"))
    assert any(" draws a card" in p for p in plays)
    assert lines[-1] == "Vändåtta: 32 cards played, 1 round played; winner: Anna"


def test_summaries_count_in_the_singular_too() -> None:
    from referee.describe import counted
    from referee.games import games

    assert counted(1, "card") == "1 card" and counted(0, "card") == "0 cards"
    assert games["vandatta"].tally_of(1) == "1 round played"
    assert games["banka-bever"].tally_of(1) == "1 pile collected"
    assert games["banka-bever"].tally_of(2) == "2 piles collected"


def test_the_full_stack_pace_of_fast_json_camera_and_given_values() -> None:
    """Issue 37: --full-stack --fast ran a game in as long as its table time at a person's
    pace over a 20 ms window; --fast now plays 100 times faster over a 2 ms window."""
    from cardtable.commands.simulate import full_stack_pace
    from hardware.camera.config import CAMERA_SETTLE_MS

    assert full_stack_pace(fast=True, camera=False, speed=None, settle_ms=None) == (100.0, 2.0)
    assert full_stack_pace(fast=False, camera=False, speed=None, settle_ms=None) == (1.0, 20.0)
    assert full_stack_pace(fast=True, camera=False, speed=7.0, settle_ms=5.0) == (7.0, 5.0)
    assert full_stack_pace(fast=True, camera=True, speed=None, settle_ms=None) == (
        1.0, CAMERA_SETTLE_MS)
    # a --speed given is the pace, --speed 1 too (it had been taken for "not given": 100)
    assert full_stack_pace(fast=True, camera=False, speed=1.0, settle_ms=None) == (1.0, 2.0)


def test_speed_with_fast_or_json_is_refused_where_nothing_is_paced(
        capsys: pytest.CaptureFixture[str]) -> None:
    for flag in ("--fast", "--json"):
        assert main(["simulate", "--game", "banka-bever", "--players", "2", flag,
                     "--speed", "2"]) == 2
        assert capsys.readouterr().err == (f"referee: --speed paces the live view, and {flag} "
                                           "prints the game at once: give one of the two\n")


@pytest.mark.slow
def test_a_piped_full_stack_game_prints_as_it_plays_and_stops_when_the_reader_goes() -> None:
    """Issue 37: piped, the full stack printed nothing until the game's end (a rich live view
    into a pipe); now each verdict is a line at once, and a reader that goes (| head) ends
    the game quietly."""
    import subprocess
    import sys
    import time

    base = [sys.executable, "-m", "cardtable.cli", "simulate", "--game", "banka-bever",
            "--players", "4", "--seed", "7", "--full-stack"]
    proc = subprocess.Popen([*base, "--speed", "5"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        assert "challenges" in first or "slap" in first or "takes" in first, first
        assert proc.poll() is None  # the game goes on (1 557 cards at a person's pace)
    finally:
        proc.kill()
        proc.wait()
    proc = subprocess.Popen([*base, "--json"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    assert proc.stdout is not None and proc.stderr is not None
    json.loads(proc.stdout.readline())
    proc.stdout.close()
    start = time.monotonic()
    assert proc.wait(60) == 0
    assert time.monotonic() - start < 30
    assert "Traceback" not in proc.stderr.read()


def test_a_live_game_starts_with_what_it_is_and_how_long_it_takes() -> None:
    """Issue 37 polish: the README's first command ran a minute with no header and no hint
    of --fast."""
    import argparse

    from cardtable.commands.simulate import _header

    sim = Simulation("banka-bever", 4, 7)
    sim.run()
    seconds = sim.table.verdicts[-1].t / 1e9
    text = _header(argparse.Namespace(seed=7, speed=1.0), Simulation("banka-bever", 4, 7),
                   ENGLISH_LANGUAGE)
    assert text.startswith("Banka bäver: Anna, Bo, Cia, Dan (seed 7), shown as it is played: "
                           f"about {round(seconds)} seconds.")
    assert "--fast" in text and "Ctrl-C" in text
    text = _header(argparse.Namespace(seed=7, speed=0.25), Simulation("banka-bever", 4, 7),
                   ENGLISH_LANGUAGE)
    assert f"about {round(seconds * 4 / 60)} minutes" in text
