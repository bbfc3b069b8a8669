"""Found by the issue 36 audit of the commands: each of these ended in ``unexpected error``
(exit 70), a fork bomb, a memory blow-up or a privileged port; each is now one line with the
exit status docs/faults.md gives."""

from __future__ import annotations

import errno
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from cardtable.cli import main
from referee.errors import DealError
from referee.games.beggar_my_neighbour import MAX_NOTATION_CARDS, play_notation


def said(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err
    assert "unexpected error" not in err and "Traceback" not in err
    return err


def test_analyse_refuses_more_processes_than_sense_and_checks_its_folder_first(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyse", "--game", "beggar-my-neighbour", "--games", "5",
                 "--jobs", "99999999999999999999"]) == 2
    assert "at most 256 processes" in said(capsys)
    blocked = tmp_path / "file"
    blocked.write_text("")
    assert main(["analyse", "--game", "beggar-my-neighbour", "--games", "5", "--jobs", "1",
                 "--out", str(blocked / "report")]) == 2
    assert "cannot make the folder" in said(capsys)


def test_a_full_stack_journal_folder_that_cannot_be_one(tmp_path: Path,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    a_file = tmp_path / "journal.jsonl"
    a_file.write_text("")
    assert main(["simulate", "--game", "banka-bever", "--fast", "--full-stack",
                 "--journal-dir", str(a_file)]) == 2
    assert "not a folder" in said(capsys)
    # a folder no one can make, root included (/proc takes no new entries)
    assert main(["simulate", "--game", "banka-bever", "--fast", "--full-stack",
                 "--journal-dir", "/proc/no-such-process/journals"]) == 75
    assert "cannot make the folder" in said(capsys)


@pytest.mark.parametrize("inside", ["current.jsonl", ".lock"])
def test_a_full_stack_journal_folder_holding_a_folder_where_a_file_goes(
        inside: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # found by a probe of crashes: "unexpected error (IsADirectoryError)", exit 70
    (tmp_path / "j" / inside).mkdir(parents=True)
    assert main(["simulate", "--game", "banka-bever", "--fast", "--full-stack",
                 "--journal-dir", str(tmp_path / "j")]) == 2
    assert said(capsys).strip() == (f"referee: --journal-dir {tmp_path / 'j'}: cannot use it: "
                                    f"{tmp_path / 'j' / inside}: Is a directory")


def test_a_relative_full_stack_journal_folder_is_named_too(
        tmp_path: Path, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    # found by the 2026-12-07 CLI audit: given relative, it said only "Is a directory"
    (tmp_path / "j" / ".lock").mkdir(parents=True)
    monkeypatch.chdir(tmp_path)
    assert main(["simulate", "--game", "banka-bever", "--fast", "--full-stack",
                 "--journal-dir", "j"]) == 2
    assert said(capsys).strip() == (f"referee: --journal-dir j: cannot use it: "
                                    f"{tmp_path / 'j' / '.lock'}: Is a directory")


@pytest.mark.parametrize(("words", "why"), [
    (["simulate", "--game", "banka-bever", "--speed", "1e-320"], "--speed: must be from 0.01"),
    (["simulate", "--game", "banka-bever", "--full-stack", "--settle-ms", "nan"],
     "--settle-ms: must be 0 to 1000 ms"),
    (["analyse", "--game", "banka-bever", "--seed", "9" * 4300], "more than 4 000 digits"),
])
def test_numbers_that_had_failed_after_they_were_taken(
        words: list[str], why: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the 2026-12-07 CLI audit: ``--speed 1e-320`` overflowed (exit 70), a seed of
    4 300 digits failed once the games were played, ``--settle-ms nan`` was said of an
    internal ``<full-stack>: table.settle_ms``."""
    with pytest.raises(SystemExit) as info:
        main(words)
    assert info.value.code == 2 and why in said(capsys)


def test_settle_ms_goes_with_the_full_stack(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--game", "banka-bever", "--fast", "--settle-ms", "5"]) == 2
    assert "--settle-ms goes with --full-stack" in said(capsys)


def test_display_ports_are_ascii_numbers_in_range(capsys: pytest.CaptureFixture[str]) -> None:
    for port in ("99999", "-1", "\u0663\u0663"):  # the last: Arabic-Indic 33
        with pytest.raises(SystemExit) as info:
            main(["display", "--broker", "mqtt://127.0.0.1:1", "--table", "t", "--web",
                  "--port", port])
        assert info.value.code == 2
        assert "is not a port number 0..65535" in said(capsys)


def test_a_full_disk_under_the_output_is_a_temporary_failure(
        monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    def full(*_args: object, **_kw: object) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    import sys

    monkeypatch.setattr(sys.modules["referee.games.beggar_my_neighbour"], "play_notation", full)
    assert main(["beggar", "-K-", "--Q"]) == 75
    assert said(capsys).strip() == "referee: cannot write (No space left on device)"

    def full_file(*_args: object, **_kw: object) -> None:  # a file is named (found by a
        raise OSError(errno.ENOSPC, "No space left on device", "/j/current.jsonl")  # probe)

    monkeypatch.setattr(sys.modules["referee.games.beggar_my_neighbour"], "play_notation",
                        full_file)
    assert main(["beggar", "-K-", "--Q"]) == 75
    assert said(capsys).strip() == ("referee: cannot write /j/current.jsonl (No space left on "
                                    "device)")


def test_notation_hands_are_bounded() -> None:
    half = MAX_NOTATION_CARDS // 2
    assert play_notation("-" * (half - 1) + "A", "-" * (half - 1) + "K")["status"] == "finished"
    with pytest.raises(DealError, match="at most 1040"):
        play_notation("-" * half + "A", "-" * half + "K")


@pytest.mark.parametrize("value", ["../../etc", "", ".sv", "sv/../en"])
def test_a_language_that_is_no_locale_name_is_refused_not_taken_for_english(
        value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["simulate", "--game", "banka-bever", "--fast", "-o",
                 f"language={value}"]) == 2
    assert "no words in" in said(capsys)


@pytest.mark.parametrize("baud", ["99999999999999999999", "0", "-5", "fast"])
def test_deck_check_refuses_a_baud_rate_no_line_has(baud: str,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["deck", "check", "--port", "/nonexistent", "--baud", baud, "deck.toml"])
    assert info.value.code == 2 and "is not a baud rate 1..4000000" in said(capsys)


@pytest.mark.parametrize(("timeout", "words"), [
    ("-1", "must be a number above 0"), ("nan", "must be a number above 0"),
    ("inf", "must be a number above 0"), ("1e308", "must be at most 3600 seconds")])
def test_deck_check_refuses_a_wait_no_board_is_worth(timeout: str, words: str,
                                                      capsys: pytest.CaptureFixture[str]) -> None:
    """'within -1 s', 'within nan s', and 1e308 waited for ever."""
    with pytest.raises(SystemExit) as info:
        main(["deck", "check", "--port", "/nonexistent", "--timeout", timeout, "deck.toml"])
    assert info.value.code == 2 and words in capsys.readouterr().err


def test_a_bad_card_in_a_hand_is_placed_in_the_hand_as_typed(
        capsys: pytest.CaptureFixture[str]) -> None:
    """The leading space the command adds to a hand starting with '-' moved the position by
    one and showed in the quote; a long hand was quoted whole. Positions count from 1, as a
    person counts the cards of a hand (the second card had been "position 1")."""
    assert main(["beggar", "--", "-x", "A"]) == 2
    assert "'x' at position 2 of \"-x\" (use A K Q J" in capsys.readouterr().err
    assert main(["beggar", "--", "x-", "A"]) == 2
    assert "'x' at position 1 of \"x-\"" in capsys.readouterr().err
    assert main(["beggar", "--", "-" * 900 + "x", "A"]) == 2
    err = capsys.readouterr().err
    assert "'x' at position 901 of" in err and len(err) < 300


JOURNAL = Path(__file__).parents[1] / "data" / "races" / "photo_finish.jsonl"


def _referee_with(args: str, redirect: str) -> subprocess.CompletedProcess[str]:
    # the shell closes the stream (>&-): no Python API starts a child without one
    return subprocess.run(f"{shlex.quote(sys.executable)} -m cardtable.cli {args} {redirect}",
                          shell=True, capture_output=True, text=True, timeout=60, check=False)


def test_a_closed_output_is_said_not_printed_into_nothing() -> None:
    # Python leaves a closed stdout None and print() then writes nowhere: replay said exit 0
    done = _referee_with(f"replay {shlex.quote(str(JOURNAL))}", ">&-")
    assert done.returncode == 2
    assert "the output is closed" in done.stderr and "Traceback" not in done.stderr
    done = _referee_with(f"replay {shlex.quote(str(JOURNAL))}", "<&-")  # input closed: fine
    assert done.returncode == 0 and "Cia" in done.stdout, done.stderr


@pytest.mark.parametrize(("words", "why"), [
    (["analyse", "--game", "banka-bever", "--games", "4", "--compare",
      "bottom_match=true,false", "--compare", "slap_back_in=true,false"],
     "--compare is given twice"),
    (["analyse", "--game", "banka-bever", "--games", "4", "--compare", "bottom_match=true,true"],
     "'true' is given twice"),
    (["analyse", "--game", "banka-bever", "--games", "4", "--compare",
      "bottom_match=true,,false"], "a value is empty"),
    (["analyse", "--game", "banka-bever", "--games", "4", "-o", "bottom_match=true", "-o",
      "bottom_match=false"], "-o 'bottom_match' is given twice"),
    (["simulate", "--game", "banka-bever", "--fast", "-o", "bottom_match=true", "-o",
      "bottom_match=false"], '-o "bottom_match" is given twice'),
])
def test_options_given_twice_are_refused_not_half_taken(
        words: list[str], why: str, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the 2026-12-07 CLI audit: the first ``--compare`` and the first ``-o`` of a
    key given twice were dropped without a word, and ``true,true`` compared a value with
    itself."""
    assert main(words) == 2
    assert why in said(capsys)


def test_a_reader_and_a_journal_folder_that_cannot_be(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # found by the 2026-12-07 CLI audit: --reader -1 left every read out without a word, and
    # journal_dir = "" put the journal among the configuration files
    with pytest.raises(SystemExit):
        main(["deck", "enroll", str(tmp_path / "d.json"), "--port", "/dev/null",
              "--reader", "-1"])
    assert "must be a reader 0..254" in said(capsys)
    toml = tmp_path / "table.toml"
    toml.write_text('[table]\nid = "t"\ngame = "banka-bever"\nseats = ["A", "B"]\n'
                    'card_source = "virtual"\njournal_dir = ""\n')
    assert main(["run", "--config", str(toml), "--check"]) == 2
    assert "table.journal_dir: must name a folder, not be empty" in said(capsys)


def test_a_path_of_the_wrong_kind_is_named_for_what_it_is(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # found by the 2026-12-07 CLI audit: a folder was "the file already exists … add
    # --overwrite", a file "no journal folder", a file "Connection refused", a missing folder
    # "not a folder", and an empty deck file JSON's own "Expecting value"
    folder, a_file = tmp_path / "adir", tmp_path / "afile"
    folder.mkdir()
    a_file.write_text("")
    assert main(["simulate", "--game", "banka-bever", "--fast", "--journal", str(folder)]) == 2
    assert f"--journal {folder}: a folder; give a file's path" in said(capsys)
    assert main(["history", "--journal-dir", str(a_file)]) == 2
    assert f"{a_file} is a file, not a journal folder" in said(capsys)
    assert main(["console", "--socket", str(a_file), "pause"]) == 2
    assert f"{a_file} is not the referee's console socket (a file)" in said(capsys)
    assert main(["deck", "show", str(a_file)]) == 2
    assert f"{a_file}: not a deck file (not JSON:" in said(capsys)


def test_an_analyse_report_the_disk_refuses_is_said_and_no_file_is_left_cut_short(
        tmp_path: Path) -> None:
    # found by the 2026-12-07 CLI audit: results.json was left cut at 5 KiB (not JSON), and
    # the command ended in "unexpected error", exit 70
    import resource

    def small_files() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (5120, 5120))

    root = Path(__file__).resolve().parents[2]
    proc = subprocess.run(
        [sys.executable, "-c", "import sys; from cardtable.cli import main; sys.exit(main())",
         "analyse", "--game", "banka-bever", "--players", "2", "--games", "50", "--jobs", "1",
         "--out", str(tmp_path / "rep")], cwd=root, capture_output=True, text=True,
        timeout=300, preexec_fn=small_files)
    assert proc.returncode == 2, proc.stderr
    assert f"cannot write the report in {tmp_path / 'rep'} (File too large)" in proc.stderr
    assert not (tmp_path / "rep" / "results.json").exists()
    assert list((tmp_path / "rep").iterdir()) == []  # no spare file left either


def test_an_operator_table_whose_page_cannot_be_served_stops(tmp_path: Path) -> None:
    # found by the 2026-12-07 CLI audit: it played one game, then waited for ever for a
    # page that was never served, and the hint named [web], which --port had replaced
    import socket

    root = Path(__file__).resolve().parents[2]
    with socket.socket() as holder:
        holder.bind(("127.0.0.1", 0))
        holder.listen()
        port = holder.getsockname()[1]
        proc = subprocess.run(
            [sys.executable, "-c", "import sys; from cardtable.cli import main; "
             "sys.exit(main())", "simulate", "--game", "banka-bever", "--players", "2",
             "--full-stack", "--fast", "--operator", "--port", str(port)],
            cwd=root, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 75, proc.stdout + proc.stderr
    assert "(or --bind and --port) say where" in proc.stdout
    assert "no operator page, so nobody could deal" in proc.stderr


def test_whole_numbers_are_written_in_ascii_digits(capsys: pytest.CaptureFixture[str]) -> None:
    # found by the 2026-12-07 CLI audit: --players ٤ (Arabic-Indic four) played four seats,
    # while --port ٣٣ was refused
    for words in (["simulate", "--game", "banka-bever", "--players", "\u0664"],
                  ["beggar", "--max-cards", "\u0663", "AK", "QJ"]):  # every whole number
        with pytest.raises(SystemExit) as info:
            main(words)
        assert info.value.code == 2 and "is not a whole number" in said(capsys)


def test_an_empty_broker_is_refused_not_taken_as_none(capsys: pytest.CaptureFixture[str]) -> None:
    # found by the 2026-12-07 CLI audit: --broker '' played without a feed, without a word
    assert main(["simulate", "--game", "banka-bever", "--fast", "--broker", ""]) == 2
    assert "--broker is empty" in said(capsys)
