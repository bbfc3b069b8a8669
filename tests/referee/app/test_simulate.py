"""Simulation: seeded, complete, and its journal replays to the very same verdicts."""

import json

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from referee.app.cli import main
from referee.app.simulate import Simulation
from referee.journal import read_journal
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
    assert json.loads(captured.out.splitlines()[-1])["state"]["cards_played"] == 1
    assert main(["replay", str(tmp_path / "missing.jsonl")]) == 2


def test_a_piped_simulation_prints_as_it_plays(tmp_path) -> None:
    """10.18: live into a pipe, the verdicts come as lines while the game goes on (before,
    nothing came until the game's end, minutes later at speed 1)."""
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "referee.app.cli", "simulate", "--game",
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


def test_the_full_stack_leaves_no_folder_and_starts_its_clock_near_zero(tmp_path) -> None:
    """10.18: without --journal-dir the full stack's temporary journal folder is removed at the
    end, and its times start near 0:01, not at the machine's uptime."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, TMPDIR=str(tmp_path))
    run = subprocess.run([sys.executable, "-m", "referee.app.cli", "simulate", "--game",
                          "vandatta", "--players", "2", "--seed", "3", "--full-stack", "--json",
                          "--speed", "50"], capture_output=True, text=True, env=env, timeout=120)
    assert run.returncode == 0, run.stderr
    assert not list(tmp_path.glob("referee-full-stack-*"))
    first = json.loads(run.stdout.splitlines()[0])
    assert 1_000_000_000 <= first["t"] < 600_000_000_000, first
