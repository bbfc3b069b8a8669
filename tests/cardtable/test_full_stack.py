"""The full stack: `referee simulate --full-stack` runs `referee run`'s service with mock GPIO,
an emulated board on a pty and a synced journal; kill -9 at random moments loses nothing."""

from __future__ import annotations

import asyncio
import json
import os
import random
import signal
import subprocess
import sys
import time

import pytest

from cardtable.fullstack import full_stack_config, run_full_stack
from cardtable.simulate import Simulation
from referee.journal import read_journal
from referee.table import replay

KEYS = ("counts", "cards_played", "tricks", "winners", "out", "over")


def simulate_cmd(seed: int, journal_dir, game="beggar-my-neighbour", players=2) -> list[str]:
    return [sys.executable, "-m", "cardtable.cli", "simulate", "--full-stack", "--game", game,
            "--players", str(players), "--seed", str(seed), "--json", "--journal-dir",
            str(journal_dir), "--speed", "200", "--settle-ms", "2"]


@pytest.mark.slow
def test_full_stack_plays_the_same_game_as_the_virtual_simulation(tmp_path) -> None:
    """Beggar My Neighbour has no choices: through GPIO, pty and service it must be the very
    game the pure simulation plays from the same deal."""
    doc = full_stack_config("beggar-my-neighbour", 3, 12, journal_dir=str(tmp_path / "j"),
                            settle_ms=2)
    service = asyncio.run(run_full_stack(doc, seed=12, speed=200, timeout_s=60))
    sim = Simulation("beggar-my-neighbour", 3, 12)
    sim.run()
    got, want = service.state(), sim.table.state()
    assert {k: got[k] for k in KEYS} == {k: want[k] for k in KEYS}
    assert got["over"]


@pytest.mark.parametrize("game, players, options", [
    ("banka-bever", 4, {"false_slap_penalty": "burn"}),
    ("vandatta", 3, {"lappen": True, "points_game": True}),
])
@pytest.mark.slow
def test_full_stack_journal_replays_to_the_tables_verdicts(tmp_path, game, players,
                                                           options) -> None:
    doc = full_stack_config(game, players, 5, journal_dir=str(tmp_path / "j"), options=options,
                            settle_ms=5)
    service = asyncio.run(run_full_stack(doc, seed=5, speed=100, timeout_s=120))
    assert service.table is not None and service.table.engine.over
    journal = read_journal(service.current_path)
    result = replay(journal)
    assert [v.to_json() for v in result.verdicts] == [v.to_json() for v in
                                                      service.table.verdicts]
    acts = {i.act for i in journal.inputs}
    if game == "banka-bever":
        assert {"lay", "slap"} <= acts  # card reads from the board, slaps from GPIO pads
    else:
        assert {"play", "draw"} <= acts


def _final_state(stdout: str) -> dict:
    return json.loads(stdout.strip().splitlines()[-1])["state"]


@pytest.mark.parametrize("seed", [2, 7, 9, 11, 14])
@pytest.mark.slow
def test_kill_9_at_ten_random_moments_then_resume_ends_the_same(tmp_path, seed) -> None:
    """Ten kill -9s of one game (5 games: 50 kills); each resume goes on from the journal."""
    sim = Simulation("beggar-my-neighbour", 2, seed)
    sim.run()
    want = sim.table.state()
    rng = random.Random(seed)
    journal_dir = tmp_path / "journals"
    current = journal_dir / "current.jsonl"
    killed = 0
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    # Ten random moments of the game, as counts of inputs already journaled.
    for target in sorted(rng.sample(range(1, want["cards_played"]), 10)):
        proc = subprocess.Popen(simulate_cmd(seed, journal_dir), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if current.exists() and current.read_bytes().count(b"\n") - 1 >= target:
                proc.send_signal(signal.SIGKILL)
                killed += 1
                break
            time.sleep(0.002)
        proc.communicate(timeout=30)
    done = subprocess.run(simulate_cmd(seed, journal_dir), capture_output=True, text=True,
                          timeout=120, env=env)
    assert done.returncode == 0, done.stderr
    got = _final_state(done.stdout)
    assert {k: got[k] for k in KEYS} == {k: want[k] for k in KEYS}
    assert killed == 10  # every kill landed mid-game
    # No input lost or doubled: every card read is a lay the engine accepted.
    journal = read_journal(journal_dir / "current.jsonl", tolerate_torn_tail=True)
    verdicts = replay(journal).verdicts
    assert not [v for v in verdicts if v.verdict in ("desync", "illegal")]
    assert sum(1 for i in journal.inputs if i.act == "lay") == want["cards_played"]


@pytest.mark.slow
def test_kill_9_of_a_slap_game_resumes_and_finishes_with_nothing_lost(tmp_path) -> None:
    """Banka bäver's outcome depends on real slap timing, so there is no fixed final state to
    compare with; what must hold is that every kill resumes the same journal, the game ends,
    and the journal replays with every card read accepted (none lost, none doubled)."""
    journal_dir = tmp_path / "journals"
    current = journal_dir / "current.jsonl"
    env = dict(os.environ, PYTHONUNBUFFERED="1")
    cmd = simulate_cmd(3, journal_dir, game="banka-bever", players=3)
    for target in (20, 60, 110, 170, 240):
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
        deadline = time.monotonic() + 60
        while proc.poll() is None and time.monotonic() < deadline:
            if current.exists() and current.read_bytes().count(b"\n") - 1 >= target:
                proc.send_signal(signal.SIGKILL)
                break
            time.sleep(0.002)
        proc.communicate(timeout=30)
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=180, env=env)
    assert done.returncode == 0, done.stderr
    assert _final_state(done.stdout)["over"]
    journal = read_journal(current, tolerate_torn_tail=True)
    result = replay(journal)
    assert result.state["over"] and sum(result.state["counts"]) + len(result.state["pile"]) == 52
    assert not [v for v in result.verdicts if v.verdict == "desync"]
    lays = {(i.t, i.seat) for i in journal.inputs if i.act == "lay"}
    refused = {(v.t, v["seat"]) for v in result.verdicts if v.verdict == "illegal"} & lays
    assert result.state["cards_played"] == len(lays) - len(refused)  # every read counted once


@pytest.mark.slow
def test_again_deals_a_new_game_whenever_one_ends_until_the_time_is_up(tmp_path) -> None:
    """The soak bench's table (bench/soak.py): one service, game after game."""
    doc = full_stack_config("beggar-my-neighbour", 2, 3, journal_dir=str(tmp_path / "j"),
                            settle_ms=2)
    service = asyncio.run(run_full_stack(doc, seed=3, speed=200, timeout_s=8, again=True))
    archived = sorted((tmp_path / "j").glob("2*.jsonl"))
    assert len(archived) >= 2
    seeds = [read_journal(p).header.seed for p in archived]
    assert sorted(seeds)[:2] == [3, 4]  # each deal the next seed
    assert all(replay(read_journal(p)).state["over"] for p in archived)
    assert service.journal_fault is None



def test_players_a_hundred_times_faster_are_not_taken_for_chattering_buttons(tmp_path) -> None:
    """Found by the 2026-12-07 CLI audit: ``simulate --fast --full-stack`` set off the table's
    chatter guard (9 presses within a second at a hundred times a person's pace), which then
    ignored a seat's slaps for a second: the game played was not the game the players made."""
    from cardtable.fullstack import paced
    from hardware.config import DEFAULT_MAX_PRESSES_PER_S, parse_config

    def presses(speed: float, **hardware: int) -> int:
        doc = full_stack_config("banka-bever", 2, 1, journal_dir=str(tmp_path))
        doc["hardware"].update(hardware)
        return parse_config(paced(doc, speed)).max_presses_per_s

    assert presses(1) == DEFAULT_MAX_PRESSES_PER_S == 8  # a person's pace: the table's own
    assert presses(4) == 32 and presses(100) == 100  # at most 100 a second
    assert presses(100, max_presses_per_s=5) == 5  # what the document says stands
