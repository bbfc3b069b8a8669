"""A missing optional extra is one line naming what to install, exit status 2, from every
command that needs it (issue 37, finding 3): never "unexpected error"."""

from __future__ import annotations

import subprocess
import sys

import pytest

from cardtable.extras import missing_extra

#: Runs the command line with the modules named in argv[1] (comma-separated) not installed.
RUNNER = """
import sys
for name in sys.argv[1].split(","):
    sys.modules[name] = None  # import fails with ModuleNotFoundError; find_spec gives None
from cardtable.cli import main
sys.exit(main(sys.argv[2:]))
"""


def run_without(modules: str, *argv: str, cwd=None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-c", RUNNER, modules, *argv], capture_output=True,
                          text=True, timeout=120, cwd=cwd)


@pytest.mark.parametrize("argv", [
    ("camera", "read", "photo.png"),
    ("camera", "read", "--json", "photo.png"),
    ("camera", "enroll", "--images", ".", "--out", "deck.npz"),
    ("camera", "watch", "video.mp4"),
    ("simulate", "--game", "banka-bever", "--players", "2", "--full-stack", "--fast",
     "--camera", "anglo"),
])
@pytest.mark.slow
def test_camera_commands_without_the_camera_extra_say_what_to_install(argv, tmp_path) -> None:
    done = run_without("cv2,numpy", *argv, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    err = done.stderr.strip()
    assert len(err.splitlines()) == 1, err
    assert "camera extra" in err and "pip install" in err and "'.[camera]'" in err
    assert "unexpected" not in err and "Traceback" not in err
    assert done.stdout == ""


def test_a_camera_table_without_the_extra_is_a_configuration_error(tmp_path) -> None:
    (tmp_path / "t.toml").write_text('[table]\nid = "t"\ngame = "banka-bever"\n'
                                     'seats = ["a", "b"]\ncard_source = "camera"\n'
                                     'journal_dir = "j"\n')
    done = run_without("cv2,numpy", "run", "--config", "t.toml", "--no-console", cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "table.card_source" in done.stderr and "camera extra" in done.stderr


def test_analyse_out_without_matplotlib_says_what_to_install(tmp_path) -> None:
    done = run_without("matplotlib", "analyse", "--game", "banka-bever", "--players", "2",
                       "--games", "2", "--out", str(tmp_path / "r"))
    assert done.returncode == 2, done.stderr
    assert "analyse extra" in done.stderr and "'.[analyse]'" in done.stderr


def test_the_extra_behind_an_import_error() -> None:
    assert missing_extra(ModuleNotFoundError("no cv2", name="cv2")) == "camera"
    assert missing_extra(ModuleNotFoundError("x", name="numpy.linalg")) == "camera"
    assert missing_extra(ModuleNotFoundError("x", name="lgpio")) == "pi"
    assert missing_extra(ModuleNotFoundError("x", name="cv")) is None
    assert missing_extra(ImportError("x")) is None
