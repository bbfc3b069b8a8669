"""The command lines refuse what they cannot do with one clear line, never "unexpected error …
please report it", and their help says what their output and defaults mean (issue 10.15, 16)."""

from __future__ import annotations

import contextlib
import io
import json
import re
import socket
from pathlib import Path

import pytest

from cardtable.cli import build_parser, main
from referee.errors import OptionError
from referee.options import BankaOptions, VandattaOptions, parse_option_assignment


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    try:
        code = main(argv)
    except SystemExit as exc:  # argparse refuses a bad value with status 2
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def _refused(argv: list[str], capsys: pytest.CaptureFixture[str], *words: str) -> str:
    code, _, err = _run(argv, capsys)
    assert code == 2, (code, err)
    assert "unexpected error" not in err and "Traceback" not in err, err
    for w in words:
        assert w in err, err
    return err


SIM = ["simulate", "--game", "vandatta", "--players", "4", "--seed", "1", "--fast"]


@pytest.mark.parametrize("table_id", ["a/b#", "a\0b", "x" * 70_000], ids=["hash", "nul", "long"])
def test_simulate_refuses_a_table_id_mqtt_cannot_carry(
        table_id: str, capsys: pytest.CaptureFixture[str]) -> None:
    _refused(SIM + ["--broker", "mqtt://127.0.0.1:1", "--table", table_id], capsys, "--table")


@pytest.mark.parametrize("speed", ["0", "-2", "nan", "inf"])
def test_simulate_speed_must_be_above_zero(speed: str, capsys: pytest.CaptureFixture[str]) -> None:
    _refused(["simulate", "--game", "vandatta", f"--speed={speed}"], capsys, "--speed")


@pytest.mark.parametrize("extra", [[], ["--full-stack"]])
def test_simulate_dealer_must_be_a_seat(
        extra: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    _refused(SIM + ["--dealer", "9"] + extra, capsys, "dealer 9 is not a seat (seats 0..3)")
    _refused(SIM + ["--dealer", "-1"] + extra, capsys, "dealer -1 is not a seat")


def test_simulate_dealer_is_the_dealer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    journal = tmp_path / "g.jsonl"
    code, _, err = _run(SIM + ["--dealer", "3", "--journal", str(journal)], capsys)
    assert code == 0, err
    assert json.loads(journal.read_text().splitlines()[0])["dealer"] == 3


def test_beggar_max_cards_must_not_be_negative(capsys: pytest.CaptureFixture[str]) -> None:
    _refused(["beggar", "--max-cards", "-1", "--", "---A", "---K"], capsys, "--max-cards")
    code, out, _ = _run(["beggar", "--max-cards", "0", "--json", "--", "---A", "---K"], capsys)
    assert code == 0 and json.loads(out)["status"] == "stopped"


@pytest.mark.parametrize("argv", [
    ["deck", "show", ""], ["deck", "synthetic", ""], ["deck", "check", "", "--port", "x"],
    ["camera", "read", ""], ["camera", "read", "--deck", "", "a.png"],
    ["camera", "enroll", "--images", "d", "--out", ""], ["camera", "watch", "0", "--deck", ""],
    ["replay", ""], ["history", "--journal-dir", ""], ["run", "--config", ""],
    SIM + ["--journal", ""], ["analyse", "--game", "vandatta", "--out", ""],
])
def test_an_empty_file_name_is_refused_by_its_option(
        argv: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    # '' had been taken as the current folder: "deck synthetic ''" said ". already exists"
    _refused(argv, capsys, "is empty: give a file's or folder's name")


@pytest.mark.parametrize(("argv", "option"), [
    (SIM[:-3], "--seed"), (["analyse", "--game", "vandatta"], "--seed"),
    (["deck", "synthetic", "d.json"], "--seed"), (SIM[:3], "--players"),
    (["analyse", "--game", "vandatta"], "--games"), (["camera", "watch", "0"], "--frames"),
])
def test_a_number_that_is_none_is_quoted_cut_short(
        argv: list[str], option: str, capsys: pytest.CaptureFixture[str]) -> None:
    err = _refused(argv + [option, "9" * 5000], capsys, f"{option}: '99999",
                   "(5000 characters) is not a whole number of at most 4 300")
    assert "9" * 100 not in err  # argparse quoted all 5 000 digits
    _refused(argv + [option, "1.5"], capsys, f"{option}: '1.5' is not a whole number\n")


def test_beggar_max_cards_without_its_number_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    _refused(["beggar", "K", "A", "--max-cards"], capsys, "--max-cards: expected one argument")


@pytest.mark.parametrize(("word", "value"), [
    ("true", True), ("YES", True), ("on", True), ("1", True),
    ("false", False), ("No", False), ("off", False), ("0", False),
])
def test_a_switch_takes_the_usual_command_line_booleans(word: str, value: bool) -> None:
    assert parse_option_assignment(f"lappen={word}", VandattaOptions) == ("lappen", value)


def test_option_values_are_read_by_the_option_type(capsys: pytest.CaptureFixture[str]) -> None:
    assert parse_option_assignment("false_slap_penalty=none", BankaOptions) == \
        ("false_slap_penalty", "none")
    assert parse_option_assignment("collect_grace_ms=300", BankaOptions) == \
        ("collect_grace_ms", 300)
    with pytest.raises(OptionError, match="yes/no, on/off or 1/0"):
        parse_option_assignment("lappen=maybe", VandattaOptions)
    code, _, err = _run(SIM + ["-o", "lappen=1", "-o", "points_game=0"], capsys)
    assert code == 0, err
    code, _, err = _run(["simulate", "--game", "banka-bever", "--fast",
                         "-o", "false_slap_penalty=none"], capsys)
    assert code == 0, err
    _refused(SIM + ["-o", "lappen=maybe"], capsys, "'lappen'", '"maybe"', "1/0")


def _help(*words: str) -> str:
    parser = build_parser()
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        parser.parse_args([*words, "--help"])
    return " ".join(out.getvalue().split())


def test_simulate_help_gives_the_default_seed() -> None:
    assert re.search(r"--seed SEED [^-]*\(default 1\b", _help("simulate"))


def test_beggar_help_says_which_hand_the_json_winner_is() -> None:
    text = _help("beggar")
    assert '"winner"' in text and "0 for HAND1" in text and "1 for HAND2" in text


def test_firmware_bridge_emulate_help_shows_a_plain_percent() -> None:
    from firmware_bridge.cli import build_parser as bridge_parser

    parser = bridge_parser()
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        parser.parse_args(["emulate", "--help"])
    text = " ".join(out.getvalue().split())
    assert "1%" in text and "%%" not in text


def test_display_web_on_a_port_in_use_says_so(capsys: pytest.CaptureFixture[str]) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        code, _, err = _run(["display", "--web", "--broker", "mqtt://127.0.0.1:1", "--table", "t",
                             "--port", str(port)], capsys)
    assert code in (1, 2), (code, err)
    assert "unexpected error" not in err and f"127.0.0.1:{port}" in err, err
    assert "in use" in err, err


def test_version_and_a_mistyped_option_get_a_suggestion(capsys) -> None:
    """Issue 37 polish: no --version; a mistyped option (--fats) showed the top-level usage
    without a suggestion."""
    import pytest

    from cardtable.cli import main
    from referee import __version__

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"referee {__version__}\n"
    with pytest.raises(SystemExit) as info:
        main(["simulate", "--game", "banka-bever", "--fats"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage: referee simulate" in err
    assert "unrecognized arguments: --fats (did you mean --fast?)" in err
    with pytest.raises(SystemExit):
        main(["camera", "read", "x.png", "--jsn"])
    assert "referee camera read: error: unrecognized arguments: --jsn (did you mean --json?)" \
        in capsys.readouterr().err


def test_opencv_says_nothing_of_its_own_on_the_terminal() -> None:
    """Issue 37 polish: OpenCV's '[ WARN … ]' lines leaked around our own message."""
    import subprocess
    import sys

    import pytest

    pytest.importorskip("cv2")
    done = subprocess.run([sys.executable, "-m", "cardtable.cli", "camera", "watch",
                           "/dev/video97"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        "referee: cannot open /dev/video97"], done.stderr
    # a file that is not there is named once (it had been "nonexist.mp4: nonexist.mp4: …")
    done = subprocess.run([sys.executable, "-m", "cardtable.cli", "camera", "watch",
                           "nonexist.mp4"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == ["referee: nonexist.mp4: no such file"]


def test_a_video_of_frames_no_camera_gives_is_named_and_refused(tmp_path: Path) -> None:
    """A video of strips 5 times as wide as high (the locator's input is 160 wide: such frames
    would ask it for a map of another shape than it learned, and a strip 1 high for
    gigabytes): one line saying what the frames are, exit 2, no traceback."""
    import subprocess
    import sys

    cv2 = pytest.importorskip("cv2")
    import numpy as np

    video = tmp_path / "strip.avi"
    writer = cv2.VideoWriter(str(video), cv2.VideoWriter_fourcc(*"MJPG"), 10, (320, 64))
    for _ in range(3):
        writer.write(np.full((64, 320, 3), 90, np.uint8))
    writer.release()
    done = subprocess.run([sys.executable, "-m", "cardtable.cli", "camera", "watch",
                           str(video)], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2
    assert done.stderr.strip().splitlines() == [
        f"referee: {video}: a frame of 320 x 64 pixels: no camera's (at most 4 times as "
        "wide as high, or as high as wide)"], done.stderr


@pytest.mark.parametrize(("where", "said"), [
    ("folder", "cannot write the journal there: Is a directory"),
    ("/dev/null", "cannot write the journal there: not a regular file (a device or a pipe)")])
def test_a_journal_that_cannot_be_a_file_is_said_in_words(
        where: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """--journal onto a folder or a device: one line in words, no errno's form, no name of
    the spare file the header is written to first."""
    path = str(tmp_path) if where == "folder" else where
    assert main(["simulate", "--game", "banka-bever", "--journal", path, "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert err == f"referee: --journal {path}: {said}" + err.split(said, 1)[1]
    assert "Errno" not in err and ".new" not in err and len(err.splitlines()) == 1


def test_an_output_that_cannot_spell_a_seat_s_name_shows_it_escaped(tmp_path: Path) -> None:
    """PYTHONIOENCODING=ascii (or a terminal of another code page): seat names outside it were
    an 'unexpected error' (UnicodeEncodeError); now they are written as \\u escapes."""
    import os
    import subprocess
    import sys

    scenario = Path(__file__).resolve().parents[1] / "data" / "scenarios" / "banka_bever"
    lines = (scenario / "02_challenge_passes_on.jsonl").read_text().splitlines(keepends=True)
    header = json.loads(lines[0])
    header["seats"] = ["Åsa", "Björn", "Cia"]
    journal = tmp_path / "game.jsonl"
    journal.write_text(json.dumps(header, ensure_ascii=False) + "\n" + "".join(lines[1:]),
                       encoding="utf-8")
    done = subprocess.run([sys.executable, "-m", "cardtable.cli", "replay", str(journal)],
                          capture_output=True, timeout=120,
                          env={**os.environ, "PYTHONIOENCODING": "ascii"})
    assert done.returncode == 0, done.stderr
    assert b"\\xc5sa" in done.stdout and b"unexpected" not in done.stderr


def test_run_check_reads_the_file_as_the_table_would_and_touches_nothing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``referee run --check``: install.md's check had been ``load_config``, which passed a
    pin map the table then refused (``slap = 99``)."""
    root = Path(__file__).resolve().parents[2]
    text = (root / "deploy" / "table.full-mock.toml").read_text()
    text = text.replace('journal_dir = "/tmp/card-referee-mock/journals"',
                        f'journal_dir = "{tmp_path / "journals"}"')
    text = text.replace('deck = "synthetic-deck.json"',
                        f'deck = "{root / "deploy" / "synthetic-deck.json"}"')
    text = text.replace('url = "mqtt://127.0.0.1:1883"', 'url = "mqtt://anna:secret@broker:1883"')
    path = tmp_path / "table.toml"
    path.write_text(text)
    assert main(["run", "--config", str(path), "--check"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"{path}: fine\n"), out
    assert "pads: 4" in out and "52 tags" in out and "feed: mqtt://anna@broker:1883" in out
    assert "secret" not in out
    assert not (tmp_path / "journals").exists()  # no journal folder made
    path.write_text(text.replace("slap = 17", "slap = 99", 1))
    assert main(["run", "--config", str(path), "--check"]) == 2
    assert "seats[0].slap: GPIO99 is not on the Raspberry Pi 40-pin header" in (
        capsys.readouterr().err)
    assert main(["run", "--config", str(path), "--check", "--setup"]) == 2
    assert main(["run", "--config", str(tmp_path / "none.toml"), "--check"]) == 2
    assert "none.toml: cannot read the file" in capsys.readouterr().err


@pytest.mark.slow
def test_a_journal_the_disk_refuses_mid_game_is_said_not_reported_as_a_bug(
        tmp_path: Path) -> None:
    """Found by the CLI audit: ``simulate --journal`` on a file the disk stopped taking (a
    5 KiB file size limit standing in for a full disk) ended in "unexpected error … please
    report it", exit 70; and ``--version`` into a full output in a traceback."""
    import resource
    import subprocess
    import sys

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (5120, 5120))

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from cardtable.cli import main; sys.exit(main())",
         "simulate", "--game", "banka-bever", "--players", "3", "--fast", "--journal",
         str(tmp_path / "j.jsonl")], cwd=root, capture_output=True, text=True, timeout=120,
        preexec_fn=small_files)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip().endswith(f"cannot write the journal {tmp_path / 'j.jsonl'}: "
                                        "File too large"), proc.stderr
    assert "unexpected" not in proc.stderr
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-c", "import sys; from cardtable.cli import "
                               "main; sys.exit(main())", "--version"], cwd=root, stdout=full,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    assert proc.returncode == 75 and "Traceback" not in proc.stderr, proc.stderr
    assert "cannot write (No space left on device)" in proc.stderr


@pytest.mark.parametrize("words", [["--once", "--timeout", "inf"], ["--once", "--timeout", "nan"],
                                   ["--once", "--timeout", "-1"],
                                   ["--web", "--bind", "999.1.1.1"]])
def test_display_checks_its_wait_and_its_address(
        words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the CLI audit: ``--timeout inf`` waited for ever and ``nan`` said "within nan
    s" (as ``deck check`` had before it was mended); ``--bind`` was taken unchecked, exit 1."""
    with pytest.raises(SystemExit) as stop:
        main(["display", "--broker", "mqtt://127.0.0.1:1", "--table", "t", *words])
    assert stop.value.code == 2
    assert f"argument {words[1]}:" in capsys.readouterr().err


def test_replay_slaps_and_stats_speak_the_language_asked(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the 2026-12-07 CLI audit: ``--lang sv`` left ``--slaps`` and ``--stats``
    English ("Ruling: …", "Slap statistics at the end of the game")."""
    journal = tmp_path / "j.jsonl"
    assert main(["simulate", "--game", "banka-bever", "--players", "3", "--seed", "7",
                 "--fast", "--journal", str(journal)]) == 0
    capsys.readouterr()
    assert main(["replay", str(journal), "--slaps", "--stats", "--lang", "sv"]) == 0
    out = capsys.readouterr().out
    assert "Utslag: " in out and "Bankningar i siffror när spelet tog slut:" in out
    assert "Ruling" not in out and "Slap statistics" not in out
    assert main(["replay", str(journal), "--slaps", "--stats"]) == 0
    out = capsys.readouterr().out
    assert "  Ruling: " in out and "Slap statistics at the end of the game:" in out


def test_beggar_names_a_mistyped_option_rather_than_a_hand(
        capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the 2026-12-07 CLI audit: ``--josn`` was taken as a hand, and the error then
    blamed another word ("unrecognized arguments: QJ")."""
    with pytest.raises(SystemExit):
        main(["beggar", "--josn", "AK", "QJ"])
    assert "unrecognized arguments: --josn (did you mean --json?)" in capsys.readouterr().err
    assert main(["beggar", "--js", "AK", "QJ"]) == 0  # argparse's prefix of --json
    assert json.loads(capsys.readouterr().out)["winner"] == 1
    assert main(["beggar", "--JQ", "--A-"]) == 0  # hands may start with --
    assert "wins after" in capsys.readouterr().out


@pytest.mark.parametrize(("words", "why"), [
    (["--port", "8099"], "--port and --bind go with --web"),
    (["--bind", "0.0.0.0"], "--port and --bind go with --web"),
    (["--timeout", "2"], "--timeout goes with --once"),
])
def test_display_options_that_would_be_ignored_are_refused(
        words: list[str], why: str, capsys: pytest.CaptureFixture[str]) -> None:
    # found by the 2026-12-07 CLI audit: taken, then ignored without --web or --once
    assert main(["display", "--broker", "mqtt://127.0.0.1:1", "--table", "t", *words]) == 2
    assert why in capsys.readouterr().err
