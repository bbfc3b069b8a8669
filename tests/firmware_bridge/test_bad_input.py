"""The audit's bad input at the bridge's edges: files that are not ours at the paths we write
(a device node, a FIFO, a journal), impossible port settings, and out-of-range command-line
values. Each gets one clear line and exit 2, never a traceback, a hang or lost data.

Device nodes are made in tmp_path (never the real /dev/null: an earlier bug replaced it)."""

import asyncio
import errno
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from firmware_bridge.deck import Deck, DeckError, synthetic_deck
from firmware_bridge.emulator import VirtualBoard
from firmware_bridge.link import Link
from referee.errors import RefereeError

pytestmark = pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pty")


def run(coro, timeout: float = 20):
    async def guarded():
        return await asyncio.wait_for(coro, timeout)
    return asyncio.run(guarded())


def _special_nodes(tmp_path: Path) -> list[Path]:
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    nodes = [fifo]
    try:  # a copy of /dev/null's node (needs root, as the audit ran)
        node = tmp_path / "null.json"
        os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        nodes.append(node)
    except PermissionError:
        pass
    return nodes


# -- 1. Deck.save ------------------------------------------------------------------------------

def test_deck_save_refuses_a_device_node_or_a_fifo(tmp_path) -> None:
    nodes = _special_nodes(tmp_path)
    for node in nodes:
        kind = stat.S_IFMT(node.lstat().st_mode)
        with pytest.raises(DeckError, match="not a regular file") as info:
            synthetic_deck().save(node)
        assert isinstance(info.value, OSError)  # what `referee deck synthetic` answers
        assert stat.S_IFMT(node.lstat().st_mode) == kind  # still the node it was
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(p.name for p in nodes)


def test_deck_synthetic_overwrite_refuses_a_device_node(tmp_path, capsys) -> None:
    from cardtable.cli import main

    for node in _special_nodes(tmp_path):
        kind = stat.S_IFMT(node.lstat().st_mode)
        assert main(["deck", "synthetic", str(node), "--overwrite"]) == 2
        err = capsys.readouterr().err
        assert "not a regular file" in err and "unexpected" not in err
        assert len(err.strip().splitlines()) == 1
        assert stat.S_IFMT(node.lstat().st_mode) == kind


def test_deck_synthetic_in_a_folder_that_takes_no_file_names_the_folder(tmp_path,
                                                                        capsys) -> None:
    """/proc/version, or a folder not there: the file's folder is at fault, and is named (it
    had said "cannot write /proc/version: No such file or directory" of a file that is)."""
    from cardtable.cli import main

    target = tmp_path / "not-here" / "deck.json"
    assert main(["deck", "synthetic", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.strip() == (f"referee deck: cannot write {target}: no file can be made in "
                           f"{target.parent} (No such file or directory)")
    with pytest.raises(DeckError) as info:
        synthetic_deck().save(target)
    assert isinstance(info.value, OSError) and info.value.errno == errno.ENOENT


def test_write_whole_in_a_folder_that_takes_no_file_names_the_folder(tmp_path) -> None:
    from cardtable.files import write_whole

    target = tmp_path / "not-here" / "table.toml"
    with pytest.raises(FileNotFoundError) as info:
        write_whole(target, "x")
    assert info.value.strerror == (f"no file can be made in {target.parent} "
                                   "(No such file or directory)")
    assert info.value.filename == str(target)


def test_deck_save_leaves_no_temporary_file_when_it_fails(tmp_path, monkeypatch) -> None:
    folder = tmp_path / "d"
    folder.mkdir()
    with pytest.raises(OSError):
        synthetic_deck().save(folder)
    assert [p.name for p in tmp_path.iterdir()] == ["d"]
    assert not any(folder.iterdir())
    # A failure after the temporary file was written (a full disk, a rename refused): the old
    # file stays whole and the temporary one goes.
    path = tmp_path / "deck.json"
    synthetic_deck(seed=1).save(path)
    before = path.read_bytes()

    def refuse(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(os, "replace", refuse)
    with pytest.raises(OSError):
        synthetic_deck(seed=2).save(path)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d", "deck.json"]
    assert path.read_bytes() == before
    assert len(Deck.load(path)) == 52


# -- 2 and 5. The emulator's --link ------------------------------------------------------------

def test_emulator_link_refuses_a_file_it_did_not_make(tmp_path) -> None:
    journal = tmp_path / "game.journal"
    journal.write_text("the journal of a game\n")
    folder = tmp_path / "d"
    folder.mkdir()
    other = tmp_path / "other"
    other.symlink_to(journal)

    async def body(path: Path) -> None:
        board = VirtualBoard(link_path=path)
        with pytest.raises(RefereeError, match="not a link this emulator made") as info:
            await board.start()
        assert isinstance(info.value, OSError)
        await board.close()

    nodes = _special_nodes(tmp_path)
    names = sorted(p.name for p in tmp_path.iterdir())
    for path in (journal, folder, other, *nodes):
        run(body(path))
    assert journal.read_text() == "the journal of a game\n"
    assert other.readlink() == journal
    assert all(not stat.S_ISREG(p.lstat().st_mode) for p in nodes)
    assert sorted(p.name for p in tmp_path.iterdir()) == names  # no PATH.new left
    assert not any(folder.iterdir())


def test_emulator_link_takes_over_a_stale_pty_link_and_removes_only_its_own(tmp_path) -> None:
    link = tmp_path / "board"
    link.symlink_to("/dev/pts/999999")  # left by an emulator that was killed

    async def body() -> None:
        board = VirtualBoard(link_path=link)
        path = await board.start()
        assert os.readlink(link) == path
        await board.close()
        assert not os.path.lexists(link)
        # Someone else's file at the path once the board unplugged: closing leaves it.
        board = VirtualBoard(link_path=link)
        await board.start()
        link.unlink()
        link.write_text("someone else's\n")
        await board.close()
        assert link.read_text() == "someone else's\n"

    run(body())


def _emulate(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "firmware_bridge.cli", "emulate", *args],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def test_emulate_link_over_a_journal_says_so_and_keeps_it(tmp_path) -> None:
    journal = tmp_path / "game.journal"
    journal.write_text("the journal of a game\n")
    proc = _emulate("--link", str(journal))
    out, err = proc.communicate(timeout=30)
    assert proc.returncode == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1
    assert str(journal) in err
    assert journal.read_text() == "the journal of a game\n"
    assert [p.name for p in tmp_path.iterdir()] == ["game.journal"]


def test_emulate_stopped_by_sigterm_removes_its_link(tmp_path) -> None:
    link = tmp_path / "board"
    proc = _emulate("--link", str(link))
    try:
        assert proc.stdout is not None
        path = proc.stdout.readline().strip()
        assert path.startswith("/dev/") and os.readlink(link) == path
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=20)
        assert not os.path.lexists(link)
        assert proc.stderr is not None and "Traceback" not in proc.stderr.read()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for f in (proc.stdout, proc.stderr):
            if f is not None:
                f.close()


# -- 3. A port setting pyserial cannot take ----------------------------------------------------

def test_link_open_with_an_impossible_baud_raises_instead_of_hanging() -> None:
    master, slave = os.openpty()
    try:
        async def body() -> None:
            link = Link(os.ttyname(slave), baudrate=99999999999999999999)
            with pytest.raises(Exception, match="baud"):
                await asyncio.wait_for(link.open(), 10)
            await link.close()
        run(body())
    finally:
        os.close(master)
        os.close(slave)


def test_link_open_reports_any_failure_of_its_task(monkeypatch) -> None:
    import serial_asyncio_fast

    async def boom(**kw: object) -> object:
        raise RuntimeError("boom")
    monkeypatch.setattr(serial_asyncio_fast, "open_serial_connection", boom)

    async def body() -> None:
        link = Link("/dev/ttyACM9")
        with pytest.raises(RuntimeError, match="boom"):
            await asyncio.wait_for(link.open(), 10)
        await link.close()
    run(body())


def test_deck_check_with_an_impossible_baud_says_so(tmp_path) -> None:
    deck = tmp_path / "d.json"
    synthetic_deck().save(deck)
    master, slave = os.openpty()
    try:
        proc = subprocess.run(
            [sys.executable, "-c", "import sys; from cardtable.cli import main; "
             "sys.exit(main(sys.argv[1:]))", "deck", "check", str(deck), "--port",
             os.ttyname(slave), "--baud", "99999999999999999999", "--timeout", "2"],
            stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=30)
        assert proc.returncode == 2, proc  # refused where it is typed (the link refuses it too)
        assert "is not a baud rate 1..4000000" in proc.stderr, proc
    finally:
        os.close(master)
        os.close(slave)


# -- 4. The firmware_bridge command's values ---------------------------------------------------

@pytest.fixture(scope="module")
def binary_script(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("script") / "x.png"
    path.write_bytes(b"\x89PNG\r\n\x1a\n\xff\xfe\x00\x01")
    return path


BAD = [
    (["monitor", "--port", "foo://x"], "Cannot open foo://x"),
    (["monitor", "--port", "PTY", "--baud", "-5"], "-5"),
    (["monitor", "--port", "PTY", "--baud", "99999999999999999999"], "99999999999999999999"),
    (["emulate", "--readers", "-1"], "-1"),
    (["emulate", "--readers", "1000"], "1000"),
    (["emulate", "--buttons", "100000"], "100000"),
    (["emulate", "--seats", "-3"], "-3"),
    (["emulate", "--drift-ppm", "nan"], "nan"),
    (["emulate", "--drift-ppm", "inf"], "inf"),
    (["emulate", "--delay-ms", "nan"], "nan"),
    (["emulate", "--tick-start", "-1"], "-1"),
    (["emulate", "--script", "SCRIPT"], "not UTF-8"),
]


@pytest.mark.slow
def test_bad_values_get_one_clear_line_and_exit_2(binary_script) -> None:
    master, slave = os.openpty()
    procs = []
    try:
        for argv, _ in BAD:
            argv = [os.ttyname(slave) if a == "PTY" else str(binary_script) if a == "SCRIPT"
                    else a for a in argv]
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "firmware_bridge.cli", *argv], stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        for proc, (argv, said) in zip(procs, BAD, strict=True):
            try:
                _, err = proc.communicate(timeout=30)
            except subprocess.TimeoutExpired:
                pytest.fail(f"{argv}: still running after 30 s")
            assert proc.returncode == 2, (argv, err)
            assert "Traceback" not in err, (argv, err)
            last = err.strip().splitlines()[-1]
            assert last.startswith("firmware_bridge") and said in last, (argv, err)
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        os.close(master)
        os.close(slave)


def test_a_pipe_is_never_read_as_a_deck_file(tmp_path: Path) -> None:
    """``referee deck show fifo`` waited for ever: open() of a FIFO waits for a writer."""
    fifo = tmp_path / "deck.json"
    os.mkfifo(fifo)
    with pytest.raises(DeckError, match="not a regular file"):
        Deck.load(fifo)


def test_the_emulated_board_keeps_a_bounded_history() -> None:
    """A board emulated for hours (bench/soak.py) kept every frame it sent or took."""
    from firmware_bridge import emulator

    history: list[int] = []
    for k in range(5 * emulator.KEPT):
        emulator._keep(history, k)
    assert emulator.KEPT <= len(history) <= 2 * emulator.KEPT
    assert history[-1] == 5 * emulator.KEPT - 1 and history == sorted(history)


def test_a_link_nobody_reads_keeps_a_bounded_queue(monkeypatch: pytest.MonkeyPatch) -> None:
    """The referee listens to its link (add_listener) and never reads its queue, which kept
    every event of an evening (bench/soak.py's memory grew 140 KB a minute)."""
    from firmware_bridge import link as link_module
    from firmware_bridge.events import LinkStatus

    monkeypatch.setattr(link_module, "QUEUED", 8)
    link = Link("/nonexistent")
    heard: list[object] = []
    link.add_listener(heard.append)

    class Core:
        def __init__(self, n: int) -> None:
            self.events = [LinkStatus("board_offline", k, "x", None) for k in range(n)]

        def take_events(self) -> list[object]:
            out, self.events = self.events, []
            return out

    async def go() -> list[int]:
        link.core = Core(50)  # type: ignore[assignment]
        link._queue = asyncio.Queue(maxsize=link_module.QUEUED)
        link._deliver()
        return [link._queue.get_nowait().t for _ in range(link._queue.qsize())]

    kept = asyncio.run(go())
    assert len(heard) == 50  # the listener hears every one
    assert kept == list(range(42, 50))  # the queue keeps the newest
