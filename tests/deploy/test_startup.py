"""``referee run`` as the systemd unit starts it (issue 15): the exit status of every start-up
failure (75 for what may pass by itself, which ``Restart=always`` retries; 2 for what a person
must fix, which ``RestartPreventExitStatus=2`` leaves alone), journald's priority prefixes
under ``JOURNAL_STREAM``, and a configuration with relative paths started from another
directory while lgpio makes ``LG_WD`` the working directory.

The GPIO side runs the real gpiozero on ``tests/deploy/standin/lgpio.py``, a stand-in for lgpio
that does on import what lgpio 0.2.2.0 does (``chdir`` to ``LG_WD``, the ``.lgd-nfy`` FIFO) and
fails as it does on demand; ``standin/sitecustomize.py`` gives gpiozero a Pi 4's revision.
"""

from __future__ import annotations

import errno
import importlib.util
import logging
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from cardtable import logs
from cardtable.cli import main
from cardtable.errors import (
    CommandError,
    ConfigError,
    EdgeError,
    TableBusyError,
    TemporaryFailure,
    startup_failure,
)
from hardware import pins
from referee.journal import read_journal

ROOT = Path(__file__).resolve().parents[2]
STANDIN = Path(__file__).resolve().parent / "standin"

GPIO_TABLE = """\
[table]
id = "t"
game = "banka-bever"
seats = ["Anna", "Bo"]
card_source = "virtual"
journal_dir = "journals"

[hardware]
pin_factory = "lgpio"
{hardware}

[[seats]]
name = "Anna"
slap = 17
led = 22

[[seats]]
name = "Bo"
slap = 5
"""


def _table(folder: Path, hardware: str = "") -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "table.toml"
    path.write_text(GPIO_TABLE.format(hardware=hardware), encoding="utf-8")
    return path


def _env(*, standin: bool = True, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if k not in ("GPIOZERO_PIN_FACTORY", "LG_WD", "JOURNAL_STREAM", "STANDIN_LGPIO")}
    path = [str(STANDIN)] if standin else []
    env["PYTHONPATH"] = os.pathsep.join([*path, str(ROOT)])
    env.update(extra)
    return env


def _referee(args: list[str], cwd: Path, env: dict[str, str],
             timeout: float = 30) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cardtable.cli", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=timeout)


# -- the exit status of each start-up failure, through the real command ---------------------

@pytest.mark.parametrize(("failure", "words"), [
    ("nochip", "gpiochip"),   # "can not open gpiochip": no device yet, the wrong chip
    ("busy", "busy"),         # another program holds a line
])
@pytest.mark.slow
def test_gpio_that_cannot_be_used_yet_is_a_temporary_failure(tmp_path: Path, failure: str,
                                                              words: str) -> None:
    config = _table(tmp_path / "etc")
    run = tmp_path / "run"
    run.mkdir()
    proc = _referee(["run", "--config", str(config), "--no-console"], tmp_path,
                    _env(LG_WD=str(run), STANDIN_LGPIO=failure))
    assert proc.returncode == 75, proc.stderr
    last = proc.stderr.strip().splitlines()[-1]
    assert last.startswith("referee: ") and words in last, proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_missing_lgpio_fifo_folder_is_a_temporary_failure(tmp_path: Path) -> None:
    # RuntimeDirectory= not made (yet): lgpio cannot make .lgd-nfyN in LG_WD.
    config = _table(tmp_path / "etc")
    proc = _referee(["run", "--config", str(config), "--no-console"], tmp_path,
                    _env(LG_WD=str(tmp_path / "not-made")))
    assert proc.returncode == 75, proc.stderr
    assert "notification FIFO" in proc.stderr and str(tmp_path / "not-made") in proc.stderr


@pytest.mark.skipif(importlib.util.find_spec("lgpio") is not None,
                    reason="lgpio is installed here")
def test_lgpio_not_installed_is_a_configuration_error(tmp_path: Path) -> None:
    config = _table(tmp_path / "etc")
    proc = _referee(["run", "--config", str(config), "--no-console"], tmp_path,
                    _env(standin=False))
    assert proc.returncode == 2, proc.stderr
    assert "hardware.pin_factory" in proc.stderr and "python3-lgpio" in proc.stderr


def test_a_machine_without_a_pi_header_is_a_configuration_error(tmp_path: Path) -> None:
    # lgpio imports, but gpiozero finds no Raspberry Pi revision in /proc (a laptop, a VM).
    cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8", errors="replace")
    if Path("/proc/device-tree/system/linux,revision").exists() or "\nRevision" in cpuinfo:
        pytest.skip("this is a Raspberry Pi")
    only_lgpio = tmp_path / "lgpio-only"
    only_lgpio.mkdir()
    shutil.copy(STANDIN / "lgpio.py", only_lgpio / "lgpio.py")
    config = _table(tmp_path / "etc")
    (tmp_path / "run").mkdir()
    env = _env(LG_WD=str(tmp_path / "run"))
    env["PYTHONPATH"] = os.pathsep.join([str(only_lgpio), str(ROOT)])
    proc = _referee(["run", "--config", str(config), "--no-console"], tmp_path, env)
    assert proc.returncode == 2, proc.stderr
    assert "hardware.pin_factory" in proc.stderr and "Raspberry Pi" in proc.stderr


def test_a_bad_pin_map_is_a_configuration_error(tmp_path: Path) -> None:
    config = _table(tmp_path / "etc", hardware="bounce_lockout_ms = -1")
    proc = _referee(["run", "--config", str(config), "--no-console"], tmp_path, _env())
    assert proc.returncode == 2, proc.stderr
    assert "hardware.bounce_lockout_ms" in proc.stderr


def test_permission_denied_on_the_gpio_chip_is_a_temporary_failure(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    # The boot race: /dev/gpiochip0 exists but udev has not yet given it to the group gpio.
    chip = tmp_path / "gpiochip0"
    chip.write_text("")
    monkeypatch.setattr(pins, "glob", SimpleNamespace(glob=lambda pattern: ["/dev/gpiochip0"]))
    monkeypatch.setattr(pins, "os", SimpleNamespace(
        R_OK=os.R_OK, W_OK=os.W_OK, access=lambda path, mode: False,
        stat=lambda path: os.stat(chip)))
    error = type("error", (Exception,), {"__module__": "lgpio"})
    failure = pins.gpio_failure(error("can not open gpiochip"), chip=0)
    assert isinstance(failure, pins.GpioUnavailable) and failure.errno == errno.EACCES
    assert "permission denied on /dev/gpiochip0" in str(failure)
    outcome = startup_failure(failure)
    assert isinstance(outcome, TemporaryFailure) and outcome.exit_status == 75


def test_a_chip_that_does_not_exist_says_which_there_are(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pins, "glob", SimpleNamespace(glob=lambda pattern: ["/dev/gpiochip0"]))
    error = type("error", (Exception,), {"__module__": "lgpio"})
    failure = pins.gpio_failure(error("can not open gpiochip"), chip=4)
    assert isinstance(failure, pins.GpioUnavailable) and failure.errno == errno.ENOENT
    assert "/dev/gpiochip4" in str(failure) and "/dev/gpiochip0" in str(failure)
    assert startup_failure(failure).exit_status == 75


@pytest.mark.parametrize("code", [errno.ENOSPC, errno.EROFS, errno.EIO, errno.EACCES,
                                  errno.ENOENT])
def test_a_journal_folder_that_fails_at_start_is_a_temporary_failure(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str],
        code: int) -> None:
    from cardtable.service import RefereeService

    def fails(self: RefereeService, **kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    monkeypatch.setattr(RefereeService, "open_game", fails)
    path = tmp_path / "table.toml"
    path.write_text('[table]\nid = "t"\ngame = "beggar-my-neighbour"\nseats = ["a", "b"]\n')
    assert main(["run", "--config", str(path), "--no-console"]) == 75
    err = capsys.readouterr().err
    assert "table.journal_dir" in err and os.strerror(code) in err


@pytest.fixture
def full_disk(tmp_path: Path):  # type: ignore[no-untyped-def]
    """A real tmpfs with no inode left (root only; skipped where mounting is not allowed)."""
    where = tmp_path / "disk"
    where.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=12k,nr_inodes=1", "tmpfs",
                           str(where)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], capture_output=True)


def test_a_disk_that_is_really_full_is_a_temporary_failure(tmp_path: Path,
                                                           full_disk: Path) -> None:
    path = tmp_path / "table.toml"
    path.write_text('[table]\nid = "t"\ngame = "beggar-my-neighbour"\nseats = ["a", "b"]\n'
                    f'journal_dir = "{full_disk}/journals"\n')
    proc = _referee(["run", "--config", str(path), "--no-console"], tmp_path, _env())
    assert proc.returncode == 75, proc.stderr
    assert os.strerror(errno.ENOSPC) in proc.stderr and "table.journal_dir" in proc.stderr


def test_a_journal_folder_that_cannot_be_a_folder_is_a_configuration_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "blocked").write_text("a file where the journal folder should be")
    path = tmp_path / "table.toml"
    path.write_text('[table]\nid = "t"\ngame = "beggar-my-neighbour"\nseats = ["a", "b"]\n'
                    'journal_dir = "blocked/journals"\n')
    assert main(["run", "--config", str(path), "--no-console"]) == 2
    assert "table.journal_dir" in capsys.readouterr().err
    # the journal folder itself a file: said so, before the pairing file warns "File exists"
    path.write_text('[table]\nid = "t"\ngame = "beggar-my-neighbour"\nseats = ["a", "b"]\n'
                    'journal_dir = "blocked"\n')
    assert main(["run", "--config", str(path), "--no-console"]) == 2
    err = capsys.readouterr().err
    assert f"table.journal_dir: {tmp_path / 'blocked'} is a file, not a folder" in err
    assert "File exists" not in err and "paired phones" not in err


@pytest.mark.parametrize(("exc", "status"), [
    (ConfigError("t.toml", "table.game", "unknown"), 2),
    (ValueError("a bad value"), 2),
    (ModuleNotFoundError("No module named 'lgpio'"), 2),
    (OSError(errno.ENOTDIR, "Not a directory"), 2),
    (OSError(errno.EACCES, "Permission denied"), 75),
    (OSError(errno.EBUSY, "Device or resource busy"), 75),
    (FileNotFoundError(errno.ENOENT, "No such file or directory", ".lgd-nfy-3"), 75),
    (OSError(errno.ENOSPC, "No space left on device"), 75),
    (pins.GpioUnavailable(errno.EBUSY, "a GPIO line is busy"), 75),
    (TableBusyError("in use by PID 12"), 75),
    (CommandError("as it is"), 2),
    (TemporaryFailure("as it is"), 75),
])
def test_one_classification_of_start_up_failures(exc: Exception, status: int) -> None:
    assert startup_failure(exc).exit_status == status
    # an edge that could not start is what stopped it
    try:
        raise EdgeError(f"GpioEdge could not start: {exc}") from exc
    except EdgeError as edge:
        outcome = startup_failure(edge)
    assert outcome.exit_status == status and "GpioEdge" in str(outcome)


def test_a_bug_at_start_stays_a_bug() -> None:
    with pytest.raises(KeyError):
        startup_failure(KeyError("x"))
    try:
        raise EdgeError("BoardEdge could not start: 'x'") from KeyError("x")
    except EdgeError as edge:
        with pytest.raises(EdgeError):
            startup_failure(edge)


# -- gpiozero: the version that honours gpiochip ---------------------------------------------

def test_an_old_gpiozero_with_a_chip_override_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        pins.check_gpiozero(4, "2.0.1", "/usr/lib/python3/dist-packages")
    words = str(caught.value)
    assert "hardware.gpiochip" in words and "2.0.1" in words
    assert "/usr/lib/python3/dist-packages" in words and pins.GPIOZERO_FIXED in words


def test_an_old_gpiozero_without_a_chip_override_is_a_warning(
        caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="hardware.pins"):
        assert pins.check_gpiozero(None, "2.0", "/usr/lib/python3/dist-packages") is not None
    assert any("older than 2.0.1.post3" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize(("version", "old"), [
    ("2.0", True), ("2.0.1", True), ("2.0.1.post1", True), ("2.0.1.post2", True),
    ("1.6.2", True), ("2.0.1.post3", False), ("2.0.2", False), ("2.1", False), ("3.0", False),
])
def test_which_gpiozero_is_old(version: str, old: bool) -> None:
    assert (pins.check_gpiozero(None, version, "/x") is not None) == old


def test_the_installed_gpiozero_is_the_fixed_one() -> None:
    version, where = pins.gpiozero_version()
    assert pins.check_gpiozero(3, version, where) is None, (version, where)


def test_an_ignored_chip_is_refused_at_start(tmp_path: Path) -> None:
    # What gpiozero 2.0.1 does (gpiozero issue 1162): LGPIOFactory(chip=4).chip == 0. The
    # stand-in gpiozero of tests/deploy/test_install_routes.py is the other half.
    config = _table(tmp_path / "etc", hardware="gpiochip = 4")
    run = tmp_path / "run"
    run.mkdir()
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "sitecustomize.py").write_text(
        (STANDIN / "sitecustomize.py").read_text(encoding="utf-8")
        + "\nimport gpiozero.pins.lgpio as _l\n_init = _l.LGPIOFactory.__init__\n"
        "def _ignores(self, chip=None):\n    _init(self, chip=0)\n"
        "_l.LGPIOFactory.__init__ = _ignores\n", encoding="utf-8")
    env = _env(LG_WD=str(run))
    env["PYTHONPATH"] = os.pathsep.join([str(shim), str(STANDIN), str(ROOT)])
    proc = _referee(["run", "--config", str(config), "--no-console"], tmp_path, env)
    assert proc.returncode == 2, proc.stderr
    assert "gpiochip = 4 was ignored" in proc.stderr and "gpiochip0" in proc.stderr


# -- journald --------------------------------------------------------------------------------

def _journal_stream(path: Path) -> tuple[object, str]:
    fh = path.open("w", encoding="utf-8")
    info = os.fstat(fh.fileno())
    return fh, f"{info.st_dev}:{info.st_ino}"


def _run_until_journaled(tmp_path: Path, env: dict[str, str], stderr: object) -> int:
    config = _table(tmp_path / "etc")
    proc = subprocess.Popen([sys.executable, "-m", "cardtable.cli", "run", "--config",
                             str(config), "--no-console"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=stderr, text=True)
    _wait_for_game(tmp_path / "etc" / "journals", proc)
    time.sleep(0.2)
    proc.send_signal(signal.SIGINT)  # the unit's KillSignal
    return proc.wait(10)


def _a_game_on_disk(tmp_path: Path) -> None:
    """The journal of a game being played in ``tmp_path/etc/journals`` (for a resume)."""
    from cardtable.config import load_config
    from cardtable.service import RefereeService

    service = RefereeService(load_config(_table(tmp_path / "etc")), fsync=False)
    service.open_game()
    service.close()


def _wait_for_game(journals: Path, proc: subprocess.Popen[str]) -> None:
    """Until ``proc`` holds the journal folder (its PID in the lock) and has a current game."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline and proc.poll() is None:
        lock = journals / ".lock"
        if ((journals / "current.jsonl").exists() and lock.exists()
                and lock.read_text().strip() == str(proc.pid)):
            return
        time.sleep(0.02)


@pytest.mark.slow
def test_under_systemd_log_lines_carry_their_priority_and_no_time(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    env = {"LG_WD": str(tmp_path / "run")}
    _a_game_on_disk(tmp_path)
    seen: list[str] = []
    for k in range(2):  # a resumed game (info), then one whose journal is broken (error)
        if k == 1:
            (tmp_path / "etc" / "journals" / "current.jsonl").write_text("not a journal\n")
        fh, stream = _journal_stream(tmp_path / f"stderr{k}")
        with fh:
            status = _run_until_journaled(tmp_path, _env(**env, JOURNAL_STREAM=stream), fh)
        lines = (tmp_path / f"stderr{k}").read_text(encoding="utf-8").splitlines()
        assert status == 0, lines
        seen += lines
    assert seen and all(line[:3] in ("<3>", "<4>", "<6>", "<7>") for line in seen), seen
    assert any(line.startswith("<6>cardtable.service INFO resumed ") for line in seen), seen
    assert any(line.startswith("<3>cardtable.service ERROR cannot resume ") for line in seen)
    assert not any(line[3:7].isdigit() for line in seen), "journald stamps the time itself"


def test_on_a_terminal_or_a_file_log_lines_are_unchanged(tmp_path: Path) -> None:
    (tmp_path / "run").mkdir()
    env = {"LG_WD": str(tmp_path / "run")}
    _a_game_on_disk(tmp_path)
    with (tmp_path / "stderr").open("w", encoding="utf-8") as fh:
        # a JOURNAL_STREAM that is not this stderr (a child of a service writing elsewhere)
        status = _run_until_journaled(tmp_path, _env(**env, JOURNAL_STREAM="1:2"), fh)
    lines = (tmp_path / "stderr").read_text(encoding="utf-8").splitlines()
    assert status == 0, lines
    assert any("cardtable.service INFO resumed " in line for line in lines), lines
    assert not any(line.startswith("<") for line in lines), lines
    assert all(line[:4].isdigit() for line in lines), lines  # the time first


def test_a_start_up_failure_under_systemd_is_an_error_for_journald(tmp_path: Path) -> None:
    config = _table(tmp_path / "etc")
    fh, stream = _journal_stream(tmp_path / "stderr")
    with fh:
        status = subprocess.run(
            [sys.executable, "-m", "cardtable.cli", "run", "--config", str(config),
             "--no-console"], cwd=tmp_path, stderr=fh, stdout=subprocess.DEVNULL,
            env=_env(LG_WD=str(tmp_path / "not-made"), JOURNAL_STREAM=stream),
            timeout=30).returncode
    text = (tmp_path / "stderr").read_text(encoding="utf-8")
    assert status == 75
    assert text.splitlines()[-1].startswith("<3>referee: lgpio cannot make"), text


@pytest.mark.parametrize(("level", "prefix"), [
    (logging.CRITICAL, "<2>"), (logging.ERROR, "<3>"), (logging.WARNING, "<4>"),
    (logging.INFO, "<6>"), (logging.DEBUG, "<7>"),
])
def test_every_line_of_a_record_has_its_priority(level: int, prefix: str) -> None:
    record = logging.LogRecord("referee.x", level, __file__, 1, "one\ntwo", None, None)
    text = logs.JournalFormatter().format(record)
    assert text.splitlines() == [f"{prefix}referee.x {logging.getLevelName(level)} one",
                                 f"{prefix}two"]


# -- relative paths and LG_WD ----------------------------------------------------------------

def test_a_relative_configuration_from_another_directory_keeps_its_journal(
        tmp_path: Path) -> None:
    # /etc-like folder with journal_dir = "journals", started as `referee run --config
    # etc/table.toml` from tmp_path; lgpio (the stand-in, as the real one) chdirs into LG_WD.
    _table(tmp_path / "etc")
    run = tmp_path / "run"
    run.mkdir()
    env = _env(LG_WD=str(run), STANDIN_LGPIO_LOG=str(tmp_path / "lgpio.log"))
    proc = subprocess.Popen([sys.executable, "-m", "cardtable.cli", "run", "--config",
                             "etc/table.toml", "--no-console"], cwd=tmp_path, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    journal = tmp_path / "etc" / "journals" / "current.jsonl"
    _wait_for_game(journal.parent, proc)
    proc.send_signal(signal.SIGINT)  # maybe before its loop runs: a stop all the same (0)
    _, err = proc.communicate(timeout=10)
    assert proc.returncode == 0, err
    log = (tmp_path / "lgpio.log").read_text(encoding="utf-8").splitlines()
    assert log[0] == f"import {run}"  # lgpio made LG_WD the working directory
    assert journal.exists(), err
    assert not (run / "etc").exists() and (run / ".lgd-nfy0").exists()


# -- a stop while asyncio sets up ------------------------------------------------------------

#: ``referee run`` that sends itself a stop signal (argv[2]) at one moment of asyncio's own
#: set-up (argv[1]), as a loaded machine may deliver the unit's KillSignal: "loop", while
#: ``asyncio.run`` builds its event loop (it asks for a selector); "step", as the loop calls its
#: first callback (the main task's first step). Prints the moment as it sends the signal.
_STOP_AT = """\
import os, selectors, signal, sys
from asyncio import events

from cardtable.cli import main

moment, sig, argv = sys.argv[1], getattr(signal, sys.argv[2]), sys.argv[3:]


def stop():
    print(sys.argv[2], "at", moment, flush=True)
    os.kill(os.getpid(), sig)


selector, run = selectors.DefaultSelector, events.Handle._run


def stop_then_select():
    if "asyncio" in sys._getframe(1).f_code.co_filename:
        selectors.DefaultSelector = selector
        stop()
    return selector()


def stop_then_run(self):
    events.Handle._run = run
    stop()
    return run(self)


if moment == "loop":
    selectors.DefaultSelector = stop_then_select
else:
    events.Handle._run = stop_then_run
sys.exit(main(argv))
"""


@pytest.mark.slow
@pytest.mark.parametrize("moment", ["loop", "step"])
@pytest.mark.parametrize("sig", ["SIGINT", "SIGTERM"])
def test_a_stop_while_asyncio_sets_up_is_a_clean_stop(tmp_path: Path, moment: str,
                                                      sig: str) -> None:
    # A SystemExit thrown into asyncio there left a half-made loop, whose __del__ wrote
    # "Exception ignored in: <function BaseEventLoop.__del__ ...>" to stderr at exit ("loop"),
    # or lost the task's first step, so that asyncio.run never returned ("step").
    config = _table(tmp_path / "etc")
    (tmp_path / "run").mkdir()
    with (tmp_path / "stderr").open("w", encoding="utf-8") as fh:  # a journal stream
        info = os.fstat(fh.fileno())
        stream = f"{info.st_dev}:{info.st_ino}"
        proc = subprocess.run([sys.executable, "-c", _STOP_AT, moment, sig, "run", "--config",
                               str(config), "--no-console"], cwd=tmp_path,
                              env=_env(LG_WD=str(tmp_path / "run"), JOURNAL_STREAM=stream),
                              stdout=subprocess.PIPE, stderr=fh, text=True, timeout=15)
    lines = (tmp_path / "stderr").read_text(encoding="utf-8").splitlines()
    assert proc.stdout == f"{sig} at {moment}\n", lines
    assert proc.returncode == 0, lines
    assert all(line[:1] == "<" for line in lines), lines
    journal = read_journal(tmp_path / "etc" / "journals" / "current.jsonl")
    assert journal.header.game == "banka-bever" and not journal.inputs


@pytest.mark.skipif(importlib.util.find_spec("lgpio") is None, reason="lgpio is not installed")
def test_the_real_lgpio_makes_lg_wd_the_working_directory(tmp_path: Path) -> None:
    # What the stand-in copies (lg's src/lgUtil.c, lguGetWorkDir), checked on the real module.
    (tmp_path / "wd").mkdir()
    out = subprocess.run([sys.executable, "-c", "import os, lgpio; print(os.getcwd())"],
                         cwd=tmp_path, env={**os.environ, "LG_WD": str(tmp_path / "wd")},
                         capture_output=True, text=True, timeout=30)
    assert out.stdout.strip() == str(tmp_path / "wd"), out.stderr
    assert (tmp_path / "wd" / ".lgd-nfy0").exists()


# -- the unit's own environment --------------------------------------------------------------

@pytest.mark.slow
def test_referee_run_in_the_units_environment(tmp_path: Path) -> None:
    """ExecStart, Environment=, WorkingDirectory=, RuntimeDirectory= and KillSignal= of
    deploy/systemd/card-referee.service, with its paths moved under ``tmp_path``, and stderr
    a journal stream: the game starts and stops cleanly (0), its journal beside the
    configuration even with a relative ``journal_dir``; a GPIO chip that cannot be opened
    exits with a status the unit restarts on, and says why at priority err."""
    import shlex

    from tests.deploy.test_deploy import UNIT, parse_unit

    unit = parse_unit(UNIT.read_text(encoding="utf-8"))

    def value(key: str) -> list[str]:
        return [v for k, v in unit["Service"] if k == key]

    def moved(path: str) -> str:
        for real, here in (("/run/", "run/"), ("/var/lib/", "state/"), ("/etc/", "etc/")):
            if path.startswith(real):
                return str(tmp_path / here / path[len(real):])
        return path

    runtime = Path(moved("/run/" + value("RuntimeDirectory")[0]))
    state = Path(moved(value("WorkingDirectory")[0]))
    runtime.mkdir(parents=True)
    state.mkdir(parents=True)
    argv = shlex.split(value("ExecStart")[0])
    assert argv[0] == "/opt/card-referee/bin/referee"
    argv = [sys.executable, "-m", "cardtable.cli", *(moved(a) for a in argv[1:])]
    config = Path(argv[argv.index("--config") + 1])
    _table(config.parent)
    env = _env()
    for line in value("Environment"):
        for item in shlex.split(line):
            key, _, val = item.partition("=")
            env[key] = moved(val)
    assert env["LG_WD"] == str(runtime)
    kill = getattr(signal, value("KillSignal")[0])
    prevent = {int(s) for v in value("RestartPreventExitStatus") for s in v.split()}

    fh, stream = _journal_stream(tmp_path / "stderr")
    with fh:
        proc = subprocess.Popen(argv, cwd=state, env={**env, "JOURNAL_STREAM": stream},
                                stdout=subprocess.DEVNULL, stderr=fh)
        _wait_for_game(config.parent / "journals", proc)  # type: ignore[arg-type]  # bytes
        proc.send_signal(kill)
        assert proc.wait(10) == 0
    assert (runtime / ".lgd-nfy0").exists() and not (runtime / "journals").exists()
    lines = (tmp_path / "stderr").read_text(encoding="utf-8").splitlines()
    assert all(line[:1] == "<" for line in lines), lines

    fh, stream = _journal_stream(tmp_path / "stderr2")
    with fh:
        status = subprocess.run(argv, cwd=state, stdout=subprocess.DEVNULL, stderr=fh,
                                env={**env, "JOURNAL_STREAM": stream, "STANDIN_LGPIO": "nochip"},
                                timeout=30).returncode
    last = (tmp_path / "stderr2").read_text(encoding="utf-8").splitlines()[-1]
    assert status == 75 and status not in prevent
    assert last.startswith("<3>referee: cannot open a GPIO chip"), last
