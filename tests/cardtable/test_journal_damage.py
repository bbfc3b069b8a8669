"""Journal damage of every kind (issue 36, attack 1), tried on every reader of a journal:
``referee replay``, ``referee history``, the table resuming its game, and what the displays
and the hall show (the state's alerts). Each gives a clear message naming the file and the
line, never a traceback; no game is altered or dropped unseen (a damaged file is kept whole
beside the game that goes on); a journal that cannot be read is never appended to."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from cardtable.cli import main
from cardtable.clock import TableClock
from cardtable.config import load_config
from cardtable.display.scene import table_alerts
from cardtable.history import read_history
from cardtable.service import RefereeService
from cardtable.simulate import Simulation
from referee.journal import MAX_LINE_BYTES, dump_journal, read_journal
from referee.table import replay

Lines = list[bytes]


def _other_game_line() -> bytes:
    sim = Simulation("vandatta", 3, 4)
    sim.run()
    play = next(i for i in sim.table.inputs if i.act == "play")
    return (json.dumps(play.to_json()) + "\n").encode()


#: Each damage: what it does to the lines of a journal (header first), and the line a reader
#: must name (None: the journal is still whole, and judged as it was).
DAMAGES: dict[str, tuple[Callable[[Lines], bytes], int | None]] = {
    "truncated mid-line": (lambda ls: b"".join(ls[:40]) + ls[40][:15] + b"\n"
                           + b"".join(ls[41:]), 41),
    "final newline missing": (lambda ls: b"".join(ls).rstrip(b"\n"), None),
    "a duplicated line": (lambda ls: b"".join(ls[:40] + [ls[39]] + ls[40:]), 41),
    "two lines swapped": (lambda ls: b"".join(ls[:40] + [ls[41], ls[40]] + ls[42:]), None),
    "invalid UTF-8": (lambda ls: b"".join(ls[:40]) + ls[40].replace(b"}", b', "x": "\xff"}')
                      + b"".join(ls[41:]), 41),
    "one 50 MB line": (lambda ls: b"".join(ls[:40]) + b'{"t": 1, "seat": 0, "act": "lay", '
                       b'"x": "' + b"a" * 50_000_000 + b'"}\n' + b"".join(ls[40:]), 41),
    "NUL bytes": (lambda ls: b"".join(ls[:40]) + b"\0" * 512 + b"\n" + b"".join(ls[40:]), 41),
    "a wrong header": (lambda ls: b'{"journal": 2, "game": "chess"}\n' + b"".join(ls[1:]), 1),
    "a missing header": (lambda ls: b"".join(ls[1:]), 1),
    "a line of another game": (lambda ls: b"".join(ls[:40]) + _other_game_line()
                               + b"".join(ls[40:]), None),
    "an empty file": (lambda ls: b"", 1),
}


@pytest.fixture(scope="module")
def finished() -> Lines:
    """A whole game's journal, as `referee simulate --journal` writes it."""
    sim = Simulation("banka-bever", 3, 4)
    sim.run()
    return dump_journal(sim.header, sim.table.inputs).encode().splitlines(keepends=True)


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_replay_names_the_file_and_line_or_judges_the_same_game(damage, finished, tmp_path,
                                                                capsys) -> None:
    spoil, line = DAMAGES[damage]
    path = tmp_path / "game.jsonl"
    path.write_bytes(spoil(finished))
    status = main(["replay", str(path), "--json"])
    out, err = capsys.readouterr()
    assert "Traceback" not in err and "unexpected" not in err
    if line is None:
        assert status == 0, err
        states = [json.loads(row) for row in out.splitlines() if row.startswith('{"state"')]
        whole = replay(read_journal(_write(tmp_path / "whole.jsonl", b"".join(finished))))
        if damage == "a line of another game":  # judged and refused, as docs/journal.md says
            assert '"code": "unknown_act"' in out
        assert states[-1]["state"]["cards_played"] == whole.state["cards_played"]
        assert states[-1]["state"]["winners"] == whole.state["winners"]
        return
    assert status in (1, 2), err
    assert f"{path}: line {line}: " in err, err


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


def test_a_50_mb_line_is_not_read_into_memory(finished, tmp_path) -> None:
    """The reader stops at :data:`MAX_LINE_BYTES` of a line: it says how long the line was
    without holding it (the 50 MB line above costs a few megabytes of reading buffer)."""
    spoil, line = DAMAGES["one 50 MB line"]
    path = _write(tmp_path / "big.jsonl", spoil(finished))
    with pytest.raises(Exception) as info:
        read_journal(path)
    assert info.value.line == line  # type: ignore[attr-defined]
    assert f"a journal line is at most {MAX_LINE_BYTES} bytes" in str(info.value)


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_history_lists_the_damage_with_its_line_and_judges_the_rest(damage, finished, tmp_path,
                                                                    capsys) -> None:
    spoil, line = DAMAGES[damage]
    folder = tmp_path / "journals"
    folder.mkdir()
    _write(folder / "20261205-200000-banka-bever.jsonl", spoil(finished))
    _write(folder / "20261205-210000-banka-bever.jsonl", b"".join(finished))
    records = read_history(folder).games
    assert len(records) == 2  # the good game is never hidden by the bad one
    damaged = next(r for r in records if r.file.startswith("20261205-200000"))
    status = main(["history", "--journal-dir", str(folder)])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    if line is None:
        assert damaged.problem is None and damaged.status == "finished"
        assert status == 0
    else:
        assert damaged.problem is not None and f"line {line}" in damaged.problem
        assert status == 1 and f"line {line}" in out + err


def _config(tmp_path: Path):
    path = tmp_path / "table.toml"
    path.write_text('[table]\nid = "t"\ngame = "banka-bever"\nseats = ["Anna", "Bo", "Cia"]\n'
                    'journal_dir = "journals"\nseed = 4\nsettle_ms = 20\n')
    return load_config(path)


@pytest.mark.parametrize("damage", list(DAMAGES))
def test_the_table_resumes_from_before_the_damage_keeping_the_file_whole(
        damage, finished, tmp_path) -> None:
    spoil, line = DAMAGES[damage]
    unfinished = finished[:200]  # a game being played: 199 inputs
    folder = tmp_path / "journals"
    folder.mkdir()
    spoilt = spoil(unfinished)
    _write(folder / "current.jsonl", spoilt)
    svc = RefereeService(_config(tmp_path), clock=TableClock(source=lambda: 10**12),
                         fsync=False)
    svc.open_game()
    try:
        kept = [p for p in folder.iterdir() if p.name not in ("current.jsonl", ".lock")
                and not p.name.endswith(".torn")]
        words = table_alerts(svc.state())
        if line is None:  # still whole: the very game goes on
            assert kept == [] and svc.resumed
            inputs = read_journal(folder / "current.jsonl").inputs
            assert len(inputs) >= 199 - (damage == "final newline missing")
            return
        # the whole damaged file is kept, byte for byte, and every display says so
        assert [p.read_bytes() for p in kept] == [spoilt], [p.name for p in kept]
        assert any(f"line {line}" in w and kept[0].name in w for w in words), words
        journal = read_journal(folder / "current.jsonl")
        if line > 1:  # the game goes on from the inputs before the damaged line
            assert svc.resumed and len(journal.inputs) == line - 2
        else:  # nothing of it could be read: a new game, the old file kept aside
            assert not svc.resumed and journal.inputs == []
    finally:
        svc.close()


def test_a_journal_that_is_a_folder_or_cannot_be_read_is_said_and_never_written(
        tmp_path, capsys, monkeypatch) -> None:
    folder = tmp_path / "journals"
    (folder / "current.jsonl").mkdir(parents=True)
    assert main(["replay", str(folder / "current.jsonl")]) == 2
    assert "Is a directory" in capsys.readouterr().err
    assert main(["run", "--config", _config(tmp_path).path, "--no-console"]) == 2
    err = capsys.readouterr().err
    assert "table.journal_dir" in err and "Is a directory" in err
    assert (folder / "current.jsonl").is_dir()  # left as it was
    os.rmdir(folder / "current.jsonl")
    # No read permission (faked: the tests may run as root, who reads anything).
    locked = _write(folder / "20261205-200000-banka-bever.jsonl", b'{"journal": 1}\n')
    real_open = open

    def refusing_open(file, *args, **kwargs):
        if Path(file) == locked:
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, *args, **kwargs)

    monkeypatch.setattr("builtins.open", refusing_open)
    [record] = read_history(folder).games
    assert record.problem == "cannot read it (Permission denied)"
    assert main(["replay", str(locked)]) == 2
    assert f"cannot read {locked}: Permission denied" in capsys.readouterr().err
