"""Journal reading and writing: strict, line-numbered errors, nothing before an error lost."""

import errno
import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from referee.errors import InputError, JournalError, JournalExistsError, JournalWriteError
from referee.games import parse_options
from referee.journal import JournalHeader, JournalWriter, durable_length, parse_lines, read_journal
from referee.model import Input
from referee.options import OptionError

HEADER = {"journal": 1, "game": "banka-bever", "seats": ["Anna", "Bo", "Cia"], "dealer": 2,
          "options": {"false_slap_penalty": "none"}, "seed": 7, "deal": None}


def lines(*objs: object) -> list[str]:
    return [(o if isinstance(o, str) else json.dumps(o)) + "\n" for o in objs]


def test_header_and_inputs_are_read() -> None:
    j = parse_lines(lines(HEADER, {"t": 5, "seat": 0, "act": "lay", "card": "QH"},
                          {"t": 9, "seat": 1, "act": "slap"}))
    assert j.header.game == "banka-bever" and j.header.seats == ("Anna", "Bo", "Cia")
    assert [i.act for i in j.inputs] == ["lay", "slap"] and j.lines == [2, 3]
    assert str(j.inputs[0].card) == "QH"


@pytest.mark.parametrize(
    "bad, words",
    [
        ("{nope", "not valid JSON"),
        ({"t": 1, "seat": 0, "act": "dance"}, "unknown act"),
        ({"seat": 0, "act": "slap"}, "missing field 't'"),
        ({"t": 1, "seat": 5, "act": "slap"}, "out of range"),
        ({"t": 1, "seat": 0, "act": "lay", "card": "QX"}, "not a card"),
        ({"t": -1, "seat": 0, "act": "slap"}, "non-negative"),
        ({"t": 1.5, "seat": 0, "act": "slap"}, "integer"),
        # within the line limit, JSON Python will not read: a RecursionError and a ValueError
        # whose advice (sys.set_int_max_str_digits) is not ours to give
        ('{"t": 1, "seat": 0, "act": "slap", "x": ' + "[" * 30000 + "]" * 30000 + "}",
         "not valid JSON (values nested too deeply)"),
        ('{"t": ' + "9" * 5000 + ', "seat": 0, "act": "slap"}',
         "not valid JSON (a number too long to read)"),
    ],
)
def test_malformed_line_names_line_and_reason_and_keeps_what_came_before(bad, words) -> None:
    with pytest.raises(JournalError) as info:
        parse_lines(lines(HEADER, {"t": 5, "seat": 0, "act": "lay"}, bad,
                          {"t": 9, "seat": 1, "act": "slap"}))
    assert info.value.line == 3 and words in info.value.reason
    assert info.value.journal is not None and len(info.value.journal.inputs) == 1


def test_vandatta_play_fields() -> None:
    head = dict(HEADER, game="vandatta", options={})
    j = parse_lines(lines(head, {"t": 1, "seat": 0, "act": "play", "cards": ["8H"], "as": "QS"}))
    assert str(j.inputs[0].as_) == "QS"
    with pytest.raises(JournalError, match="'as'"):
        parse_lines(lines(head, {"t": 1, "seat": 0, "act": "play", "cards": ["8H"], "as": "X"}))
    with pytest.raises(JournalError, match="cards"):
        parse_lines(lines(head, {"t": 1, "seat": 0, "act": "play"}))


@pytest.mark.parametrize(
    "change, words",
    [
        ({"options": {"false_slap_penalty": "kick"}}, "false_slap_penalty"),
        ({"options": {"banana": 1}}, "banana"),
        ({"options": {"collect_grace_ms": -3}}, "collect_grace_ms"),
        ({"game": "poker"}, "'game'"),
        ({"seats": ["A"]}, "seats"),
        ({"seats": ["Anna", " ", "Cia"]}, "seat 1's name must not be empty"),
        ({"seats": ["Anna", "Bo", "anna "]}, "is already the name of seat 0"),
        ({"dealer": 3}, "dealer"),
        ({"journal": 2}, "version"),
        ({"deal": {"stacks": [["QH"], ["QH"], []], "pile": []}}, "more than once"),
    ],
)
def test_bad_header_names_the_key(change, words) -> None:
    with pytest.raises(JournalError) as info:
        parse_lines(lines(dict(HEADER, **change)))
    assert info.value.line == 1 and words in info.value.reason


def test_options_defaults_and_errors() -> None:
    opts = parse_options("banka-bever", {})
    assert (opts.false_slap_penalty, opts.collect_grace_ms, opts.slap_back_in,
            opts.bottom_match) == ("none", 1500, False, True)
    v = parse_options("vandatta", {"lappen": True})
    assert v.lappen and v.reshuffle_discards and not v.points_game
    with pytest.raises(OptionError) as info:
        parse_options("vandatta", {"lappen": "yes"})
    assert info.value.key == "lappen"


def test_writer_round_trip_and_torn_tail(tmp_path) -> None:
    path = tmp_path / "j.jsonl"
    header = JournalHeader.from_json(HEADER).resolved()
    with JournalWriter(path, header) as w:
        w.append(Input(10, 0, "lay"))
        w.append(Input(20, 1, "slap"))
    again = read_journal(path)
    assert again.header.deal == header.deal and [i.t for i in again.inputs] == [10, 20]
    with open(path, "a") as fh:
        fh.write('{"t": 30, "seat": 2, "ac')  # a power cut mid-line
    with pytest.raises(JournalError):
        read_journal(path)
    torn = read_journal(path, tolerate_torn_tail=True)
    assert len(torn.inputs) == 2 and torn.torn_tail is not None
    # Appending after a torn tail must start a fresh line.
    with JournalWriter(path) as w:
        w.append(Input(40, 0, "lay"))
    assert [i.t for i in read_journal(path, tolerate_torn_tail=True).inputs][-1] == 40


def test_input_round_trip() -> None:
    obj = {"t": 3, "seat": 1, "act": "deal", "hands": [["QH"], ["2C"]], "stock": ["3C"],
           "upcard": "4D"}
    assert Input.from_json(obj).to_json() == obj
    with pytest.raises(InputError):
        Input.from_json(["not", "an", "object"])


_json = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 10**10) | st.floats(allow_nan=False)
    | st.sampled_from(["QH", "10D", "lay", "slap", "play", "draw", "x", ""]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["t", "seat", "act", "card", "cards", "as", "call", "hands", "stock",
                         "upcard", "junk"]), inner, max_size=6),
    max_leaves=12,
)


@settings(max_examples=300, deadline=None)
@given(st.lists(_json.map(json.dumps) | st.text(max_size=30), max_size=6))
@pytest.mark.slow
def test_any_journal_text_reads_or_fails_with_a_line_number(body: list[str]) -> None:
    text = [json.dumps(HEADER) + "\n"] + [line.replace("\n", " ") + "\n" for line in body]
    try:
        journal = parse_lines(text)
    except JournalError as exc:
        assert 2 <= exc.line <= len(text) and exc.reason
        assert exc.journal is not None and len(exc.journal.inputs) <= exc.line - 2
    else:
        assert len(journal.inputs) <= len(body)


def test_bytes_that_are_not_text_are_a_line_error(tmp_path) -> None:
    path = tmp_path / "j.jsonl"
    path.write_bytes(json.dumps(HEADER).encode() + b"\n" + b'{"t": 1, \xd0\xff}\n')
    with pytest.raises(JournalError) as info:
        read_journal(path)
    assert info.value.line == 2
    assert info.value.reason == "is not UTF-8 text (byte 0xd0 at byte 10 of the line)"


def test_text_that_is_not_utf8_is_damage_even_where_json_would_take_it(tmp_path) -> None:
    """Issue 36: a Latin-1 name in the header was read as 'Bj\ufffdrn' and the game went on
    under the altered name; docs/journal.md says bytes that are not UTF-8 make a line
    malformed."""
    path = tmp_path / "j.jsonl"
    header = json.dumps(HEADER).encode().replace(b'"Anna"', '"Björn"'.encode("latin-1"))
    path.write_bytes(header + b"\n")
    with pytest.raises(JournalError) as info:
        read_journal(path)
    assert info.value.line == 1 and "not UTF-8" in info.value.reason


def test_a_new_journal_never_lands_on_an_existing_file(tmp_path) -> None:
    """Issue 10.1: a path given by a person receives one game; replacing takes ``replace``."""
    path = tmp_path / "j.jsonl"
    header = JournalHeader.from_json(HEADER).resolved()
    with JournalWriter.create(path, header) as w:
        w.append(Input(10, 0, "lay"))
    before = path.read_bytes()
    with pytest.raises(JournalExistsError) as info:
        JournalWriter.create(path, header)
    assert isinstance(info.value, FileExistsError) and "already exists" in str(info.value)
    assert path.read_bytes() == before
    with JournalWriter.create(path, header, replace=True) as w:
        w.append(Input(20, 1, "lay"))
    assert [i.t for i in read_journal(path).inputs] == [20]


def test_a_last_line_that_lost_only_its_newline_is_torn_for_reader_and_writer(tmp_path) -> None:
    """Issue 10.2: a complete-looking last line without its newline was never judged (the
    newline is written and synced with the line): recovery's reader and the writer both cut it,
    so they agree on the inputs of the game."""
    path = tmp_path / "j.jsonl"
    header = JournalHeader.from_json(HEADER).resolved()
    with JournalWriter.create(path, header) as w:
        for t in (10, 20, 30):
            w.append(Input(t, 0, "lay"))
    path.write_bytes(path.read_bytes()[:-1])  # truncate -s -1
    recovered = read_journal(path, tolerate_torn_tail=True)
    assert [i.t for i in recovered.inputs] == [10, 20]
    assert recovered.torn_tail is not None and '"t": 30' in recovered.torn_tail
    assert durable_length(path.read_bytes()) < len(path.read_bytes())
    with JournalWriter.resume(path) as w:
        w.append(Input(40, 0, "lay"))
    assert [i.t for i in read_journal(path).inputs] == [10, 20, 40]
    assert '"t": 30' in (tmp_path / "j.jsonl.torn").read_text()


def test_a_failed_write_leaves_whole_lines_and_the_writer_usable(tmp_path, monkeypatch) -> None:
    """Issue 10.4: disk full in the middle of a line: the part written is cut off again, the
    error is a JournalWriteError (an OSError), and the next write once there is room is whole."""
    path = tmp_path / "j.jsonl"
    header = JournalHeader.from_json(HEADER).resolved()
    w = JournalWriter.create(path, header)
    w.append(Input(10, 0, "lay"))
    real_write = os.write

    def half_then_full(fd: int, data: bytes) -> int:
        if len(data) > 4:
            real_write(fd, bytes(data[:4]))  # part of the line reaches the file
            return 4
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "write", half_then_full)
    with pytest.raises(JournalWriteError) as info:
        w.append(Input(20, 1, "lay"))
    assert isinstance(info.value, OSError) and "No space left" in str(info.value)
    monkeypatch.setattr(os, "write", real_write)
    assert read_journal(path).inputs == [Input(10, 0, "lay")]
    w.append(Input(30, 1, "lay"))
    w.close()
    assert [i.t for i in read_journal(path).inputs] == [10, 30]
    with pytest.raises(JournalWriteError):
        w.append(Input(40, 1, "lay"))


def test_a_journal_on_a_full_disk(tmp_path) -> None:
    """The real thing: /dev/full refuses every write with ENOSPC."""
    if not os.path.exists("/dev/full"):
        pytest.skip("no /dev/full here")
    path = tmp_path / "j.jsonl"
    header = JournalHeader.from_json(HEADER).resolved()
    # The header goes to a spare file first (see the next test): that one is on the full disk.
    (tmp_path / f".j.jsonl.{os.getpid()}.new").symlink_to("/dev/full")
    with pytest.raises(JournalWriteError, match="No space left"):
        JournalWriter.create(path, header, replace=True)
    assert not path.exists() and list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("replace", [False, True])
def test_a_stop_while_the_header_is_written_leaves_no_journal(tmp_path, monkeypatch,
                                                              replace: bool) -> None:
    """A stop (``referee run`` turns SIGTERM at start into SystemExit) or a power cut between
    creating the journal and writing its header must not leave a journal without a header:
    the header is on disk before the journal has its name."""
    path = tmp_path / "current.jsonl"
    header = JournalHeader.from_json(HEADER).resolved()

    def stopped(fd: int, data: bytes) -> int:
        assert not path.exists(), "the journal has its name before its header"
        raise SystemExit(0)

    monkeypatch.setattr(os, "write", stopped)
    with pytest.raises(SystemExit):
        JournalWriter.create(path, header, replace=replace)
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []
    with JournalWriter.create(path, header, replace=replace) as w:
        w.append(Input(10, 0, "lay"))
    assert read_journal(path).header == header and [i.t for i in read_journal(path).inputs] == [10]
    assert list(tmp_path.iterdir()) == [path]


def test_create_still_refuses_a_journal_that_exists(tmp_path) -> None:
    path = tmp_path / "j.jsonl"
    header = JournalHeader.from_json(HEADER).resolved()
    path.write_text("someone's game\n")
    with pytest.raises(JournalExistsError):
        JournalWriter.create(path, header)
    assert path.read_text() == "someone's game\n" and list(tmp_path.iterdir()) == [path]


def _device(path: Path) -> Path:
    """A character device like /dev/null (major 1, minor 3) where a test may make one, else a
    named pipe: neither may be read or written as a journal."""
    import stat

    try:
        os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except (PermissionError, AttributeError):
        os.mkfifo(path)
    return path


def test_a_device_or_a_pipe_is_never_read_or_replaced_as_a_journal(tmp_path: Path) -> None:
    """Found by the issue 36 audit: ``simulate --journal /dev/null --overwrite`` as root replaced
    /dev/null itself with a regular file, and ``replay /dev/zero`` never ended."""
    import stat

    for name in ("null", "pipe"):
        node = tmp_path / name
        if name == "null":
            _device(node)
        else:
            os.mkfifo(node)
        kind = stat.S_IFMT(node.lstat().st_mode)
        with pytest.raises(OSError, match="not a regular file"):
            read_journal(node)  # at once: a pipe is not even opened (that would wait)
        with pytest.raises(OSError, match="not a regular file"):
            JournalWriter.create(node, JournalHeader.from_json(HEADER).resolved(), fsync=False,
                                 replace=True)
        assert stat.S_IFMT(node.lstat().st_mode) == kind  # still what it was
        assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


def test_a_header_too_deep_too_long_or_dealt_against_the_rules_is_refused_as_line_1() -> None:
    for header, words in (
            ('{"journal": 1, "x": ' + "[" * 30000 + "]" * 30000 + "}", "nested too deeply"),
            ('{"journal": 1, "seed": ' + "9" * 5000 + "}", "a number too long to read"),
            # the form of the deal is right, the game's rules refuse it: a seat dealt nothing
            ({**HEADER, "seed": None, "deal": {"stacks": [["AS", "KS"], ["QS"], []], "pile": []}},
             "every seat must be dealt at least one card")):
        with pytest.raises(JournalError) as info:
            parse_lines(lines(header, {"t": 5, "seat": 0, "act": "lay"}))
        assert info.value.line == 1 and words in info.value.reason, info.value.reason


@pytest.mark.parametrize("version", [True, 1.0, "1"])
def test_a_header_s_version_is_the_whole_number_1_not_what_equals_it(version: object) -> None:
    """docs/journal.md: any other value is refused (true and 1.0 equal 1 in Python)."""
    with pytest.raises(JournalError, match="not a table journal of version 1"):
        parse_lines(lines({**HEADER, "journal": version}))
