"""Issue 10.19: the benchmarks fail only on a real failure, and each names itself.

``python3 bench/run.py`` exited 1 because ``service_idle`` waited for the words
``board_online`` in the referee's log, whose wording had changed, and the ``slaps`` line had no
``"bench"`` key. Benches read what the referee publishes (its retained state), not its log; the
runner checks that every bench printed a JSON line whose ``bench`` is its own name.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCH = ROOT / "bench"


def _runner() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_run", BENCH / "run.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ENV = _runner().clone_env(ROOT)  # this clone's code, whichever copy is installed


def _json_lines(text: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in text.splitlines() if line.startswith("{")]


def test_every_bench_names_itself_in_its_line() -> None:
    """Each bench script puts its own name (the file's stem) in the ``bench`` key."""
    for script in sorted(BENCH.glob("*.py")):
        if script.name == "run.py":
            continue
        assert f'"bench": "{script.stem}"' in script.read_text(encoding="utf-8"), script.name


def test_the_slaps_bench_line_names_it() -> None:
    proc = subprocess.run([sys.executable, str(BENCH / "slaps.py"), "--pairs", "8"],
                          capture_output=True, text=True, timeout=60, cwd=ROOT, env=ENV)
    assert proc.returncode == 0, proc.stderr
    (line,) = _json_lines(proc.stdout)
    assert line["bench"] == "slaps"
    for run in ("progress", "progress_late", "window"):
        assert line[run]["correct"] == 8 and line[run]["late"] == 0, run


def test_the_runner_fails_a_bench_that_fails_or_does_not_name_itself(tmp_path: Path,
                                                                     capsys) -> None:
    run = _runner()
    (tmp_path / "good.py").write_text('print(\'{"bench": "good", "x": 1}\')\n')
    (tmp_path / "nameless.py").write_text('print(\'{"x": 1}\')\n')
    (tmp_path / "other.py").write_text('print(\'{"bench": "good"}\')\n')
    (tmp_path / "broken.py").write_text('print(\'{"bench": "broken"}\')\nraise SystemExit(3)\n')
    assert run.main(["good"], here=tmp_path) == 0
    for name in ("nameless", "other", "broken"):
        assert run.main([name], here=tmp_path) == 1, name
    out = capsys.readouterr()
    assert '{"bench": "good", "x": 1}' in out.out  # the line itself still goes to stdout
    assert "nameless: printed no JSON line with \"bench\": \"nameless\"" in out.err
    assert "broken: exit status 3" in out.err


@pytest.mark.slow
def test_the_service_idle_bench_sees_the_board_come_online() -> None:
    if shutil.which("mosquitto") is None and not Path("/usr/sbin/mosquitto").exists():
        pytest.skip("mosquitto is not installed (Debian package 'mosquitto')")
    proc = subprocess.run([sys.executable, str(BENCH / "service_idle.py"), "--seconds", "0.5"],
                          capture_output=True, text=True, timeout=120, cwd=ROOT, env=ENV)
    assert proc.returncode == 0, proc.stderr
    (line,) = _json_lines(proc.stdout)
    assert line["bench"] == "service_idle" and line["clean_stop"] is True


def _vandatta_replay(prelude: str = "") -> dict[str, object]:
    code = (f"import runpy, sys; {prelude}sys.argv = ['vandatta_replay', '--games', '1', "
            f"'--rounds', '1']; runpy.run_path({str(BENCH / 'vandatta_replay.py')!r}, "
            "run_name='__main__')")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=ENV)
    assert proc.returncode == 0, proc.stderr
    (line,) = _json_lines(proc.stdout)
    assert line["bench"] == "vandatta_replay"
    return line


def test_the_vandatta_replay_bench_states_its_baseline() -> None:
    line = _vandatta_replay()
    assert line["journals"] == 4 and isinstance(line["inputs"], int) and line["inputs"] > 0
    assert isinstance(line["inputs_per_s"], int) and line["inputs_per_s"] > 0
    if importlib.util.find_spec("pyspiel") is None:
        assert str(line["baseline"]).startswith("missing") and line["ratio"] is None
    else:
        assert "crazy_eights" in str(line["baseline"])
        for key in ("baseline_actions_per_s", "ratio", "ratio_to_player_actions",
                    "random_playout_actions_per_s", "ratio_to_random_playouts",
                    "sampled_playout_actions_per_s", "ratio_to_sampled_playouts"):
            assert isinstance(line[key], (int, float)) and line[key] > 0, key
        assert 0 < line["baseline_player_actions"] < line["baseline_actions"]  # chance too


def test_the_vandatta_replay_bench_says_when_open_spiel_is_missing() -> None:
    line = _vandatta_replay("sys.modules['pyspiel'] = None; ")  # import pyspiel fails
    assert str(line["baseline"]).startswith("missing: open_spiel is not installed")
    assert line["ratio"] is None and "baseline_actions_per_s" not in line
    assert isinstance(line["inputs_per_s"], int) and line["inputs_per_s"] > 0


@pytest.mark.slow
def test_the_self_check_bench_runs_short_and_says_its_baseline() -> None:
    """``bench/camera_selfcheck.py`` with ``BENCH_SHORT=1``: two of fold 1's decks enrolled,
    checked and read; its line counts what it checked and gives the baseline it compares to."""
    pytest.importorskip("cv2")
    from tests.hardware.camera.conftest import need_artwork

    need_artwork("anglo", "anglo_bitmap")
    proc = subprocess.run([sys.executable, str(BENCH / "camera_selfcheck.py")],
                          capture_output=True, text=True, timeout=600, cwd=ROOT,
                          env={**ENV, "BENCH_SHORT": "1"})
    assert proc.returncode == 0, proc.stderr
    (line,) = _json_lines(proc.stdout)
    assert line["bench"] == "camera_selfcheck" and set(line["decks"]) == {"anglo",
                                                                          "anglo_bitmap"}
    assert line["cards_checked"] == 104 and 0 <= line["cards_named"] <= 104
    assert line["named_reads"] + line["baseline"]["other_reads"] == 40
