"""The set-up wizard (issue 34): an empty folder becomes a working ``table.toml`` on the mock
backend, each pad learned by pressing its mock pin; the file stays one a person reads and
edits (comments kept, the previous one kept beside it), and what cannot be a configuration is
refused before anything is written."""

from __future__ import annotations

import asyncio
import contextlib
import json
import threading
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from cardtable.config import load_config, set_up_place
from cardtable.errors import ConfigError
from cardtable.operator.setup import (
    CANDIDATE_LINES,
    Answers,
    PadLearner,
    table_document,
    write_table,
)
from cardtable.operator.wizard import SetupSite
from cardtable.wiring import build_service
from firmware_bridge.deck import synthetic_deck
from firmware_bridge.emulator import VirtualBoard
from hardware.mock import MonotonicClock, VirtualMockFactory


def client() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def post(s: aiohttp.ClientSession, url: str, body: Any, csrf: str | None = None
               ) -> tuple[int, dict[str, Any]]:
    origin = url.split("/setup/")[0].split("/operator/")[0]
    headers = {"Origin": origin, **({"X-CSRF-Token": csrf} if csrf else {})}
    async with s.post(url, json=body, headers=headers) as r:
        return r.status, json.loads(await r.read())


@pytest.mark.slow
def test_an_empty_folder_becomes_a_working_table(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    factory = VirtualMockFactory(MonotonicClock())

    async def press_soon(line: int) -> None:
        await asyncio.sleep(0.2)
        pin = factory.pin(line)
        pin.drive_low()
        await asyncio.sleep(0.05)
        pin.drive_high()

    async def go() -> Path | None:
        board = VirtualBoard(deck=synthetic_deck(1), seed=1)
        port = await board.start()
        site = SetupSite(path, port=0, pin_factory=factory, ports=(port,))
        running = asyncio.create_task(site.run())
        while not site.server.port:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)
        base = site.url
        try:
            async with client() as s:
                async with s.get(base) as r:  # the table's screen leads to the wizard
                    assert r.url.path == "/setup/"
                    assert "Set up the table" in await r.text()
                code = site.pairing.current(site.clock()).code
                status, answer = await post(s, base + "operator/api/pair",
                                            {"code": code, "name": "Anna's phone"})
                assert status == 200, answer
                csrf = answer["csrf"]
                async with s.get(base + "setup/api/state") as r:
                    state = json.loads(await r.read())
                assert not state["exists"] and state["mock"] and state["learn"] is None
                # Each pad: "press seat N's pad now", and the test presses a mock pin.
                lines = {}
                for seat, pin in ((0, 17), (1, 5), (2, 23)):
                    taken = list(lines.values())
                    presser = asyncio.create_task(press_soon(pin))
                    status, answer = await post(s, base + "setup/api/learn",
                                                {"seat": seat, "role": "slap", "taken": taken},
                                                csrf)
                    await presser
                    assert answer == {"ok": True, "line": pin,
                                      "text": f"seat {seat + 1}'s slap pad is GPIO {pin}"}
                    lines[seat] = pin
                # A line already taken is not learned again: the next free one is pressed.
                presser = asyncio.create_task(press_soon(27))
                factory.pin(17).drive_low()  # seat 1's pad held down: not a new pad
                status, answer = await post(s, base + "setup/api/learn",
                                            {"seat": 0, "role": "call",
                                             "taken": list(lines.values())}, csrf)
                await presser
                factory.pin(17).drive_high()
                assert answer["line"] == 27
                # The board is found by probing the serial ports.
                status, answer = await post(s, base + "setup/api/probe", {}, csrf)
                assert answer["ok"] and answer["boards"][0]["port"] == port, answer
                answers = {"table_id": "kitchen", "game": "banka-bever",
                           "seats": ["Anna", "Bo", "Cia"],
                           "pads": [{"slap": 17, "call": 27, "led": None},
                                    {"slap": 5, "call": None, "led": None},
                                    {"slap": 23, "call": None, "led": None}],
                           "pin_factory": "mock", "card_source": "board",
                           "board_port": port, "broker_url": None}
                # A change without the phone's token is refused, and writes nothing.
                status, answer = await post(s, base + "setup/api/save", {"answers": answers})
                assert status == 403 and not path.exists()
                status, answer = await post(s, base + "setup/api/save", {
                    "answers": dict(answers, seats=["Anna", "anna", "Cia"])}, csrf)
                assert status == 400 and "already the name of seat 0" in answer["text"]
                assert not path.exists()
                status, answer = await post(s, base + "setup/api/save", {"answers": answers},
                                            csrf)
                assert status == 200 and answer["text"] == (
                    "saved table.toml: the table starts now"), answer
            return await asyncio.wait_for(running, 5)
        finally:
            running.cancel()
            await board.close()

    saved = asyncio.run(go())
    assert saved == path
    text = path.read_text()
    assert text.startswith("# The card table referee's configuration")
    cfg = load_config(path)  # what referee run reads
    assert cfg.table_id == "kitchen" and cfg.seats == ("Anna", "Bo", "Cia")
    assert cfg.card_source == "board" and cfg.journal_dir == tmp_path / "journals"
    service = build_service(cfg, console=False, pin_factory=factory,
                            deck=synthetic_deck(1))
    pads = [e for e in service.edges if type(e).__name__ == "GpioEdge"]
    assert len(pads) == 1
    # The phone that set the table up stays paired once it runs (the same folder).
    assert (tmp_path / "journals" / "operator-devices.json").exists()


def test_the_file_keeps_what_a_person_wrote(tmp_path: Path) -> None:
    path = tmp_path / "table.toml"
    first = Answers(table_id="t", game="vandatta", seats=["A", "B", "C"], card_source="virtual")
    assert write_table(path, first) is None
    edited = path.read_text().replace(
        '[table]', '# our kitchen table, set up in May\n[table]').replace(
        'card_source = "virtual"', 'card_source = "virtual"  # no cards yet\nseed = 7')
    path.write_text(edited)
    second = Answers(table_id="t", game="vandatta", seats=["A", "B", "Cia"],
                     card_source="virtual", pads=[{"slap": 17}, {"slap": 5}, {"slap": 6}],
                     pin_factory="mock")
    kept = write_table(path, second)
    assert kept == tmp_path / "table.toml.previous" and kept.read_text() == edited
    now = path.read_text()
    assert "# our kitchen table, set up in May" in now and "seed = 7" in now
    assert "# no cards yet" in now and '"Cia"' in now and "[[seats]]" in now
    cfg = load_config(path)
    assert cfg.seed == 7 and cfg.seats == ("A", "B", "Cia")
    # Answers that are not a configuration: refused with the key, the file as it was.
    with pytest.raises(ConfigError, match="table.game"):
        write_table(path, Answers(table_id="t", game="snap", seats=["A", "B"]))
    assert path.read_text() == now
    assert not list(tmp_path.glob(".table.toml.*"))  # no spare file left behind
    assert "journal_dir" in table_document(Answers())


def test_saves_at_the_same_moment_leave_one_whole_file(tmp_path: Path) -> None:
    # Two phones (or one retrying): each save ran on a thread of its own and they shared one
    # spare file, which left table.toml one answer with the tail of the other glued on.
    path = tmp_path / "table.toml"
    short = Answers(table_id="t", game="vandatta", seats=["a", "b"], card_source="virtual")
    long = Answers(table_id="x" * 200, game="vandatta", card_source="virtual",
                   seats=[ch * 40 for ch in "ABCDEFG"])
    barrier = threading.Barrier(16)
    failed: list[BaseException] = []

    def save(answers: Answers) -> None:
        barrier.wait()
        try:
            write_table(path, answers)
        except Exception as exc:
            failed.append(exc)

    threads = [threading.Thread(target=save, args=(short if i % 2 else long,))
               for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failed
    assert load_config(path).seats in (("a", "b"), tuple(ch * 40 for ch in "ABCDEFG"))
    assert load_config(tmp_path / "table.toml.previous").table_id in ("t", "x" * 200)
    assert not list(tmp_path.glob(".table.toml*"))  # no spare file left behind
    assert path.stat().st_mode & 0o777 == 0o644  # readable, as a person's own file is


def test_a_learner_times_out_without_a_press() -> None:
    factory = VirtualMockFactory(MonotonicClock())

    async def go() -> int | None:
        return await PadLearner(factory, candidates=(4, 5)).learn([], timeout=0.2)

    assert asyncio.run(go()) is None


def test_taken_lines_that_are_no_list_of_numbers_are_refused_in_words(tmp_path: Path) -> None:
    # found by probing the pages: 5, [[1]] and [{}] had answered 500; every line taken
    # waited the whole LEARN_S for a press that could not be seen
    factory = VirtualMockFactory(MonotonicClock())

    async def go() -> list[tuple[str, object, int, str]]:
        site = SetupSite(tmp_path / "table.toml", port=0, pin_factory=factory)
        running = asyncio.create_task(site.run())
        while not site.server.port:
            await asyncio.sleep(0.01)
        got = []
        try:
            async with client() as s:
                code = site.pairing.current(site.clock()).code
                _, answer = await post(s, site.url + "operator/api/pair",
                                       {"code": code, "name": "phone"})
                csrf = answer["csrf"]
                for route in ("learn", "mock-press"):
                    for taken in (5, [[1]], [{}], "4567", [True], list(CANDIDATE_LINES)):
                        status, answer = await asyncio.wait_for(post(
                            s, site.url + f"setup/api/{route}",
                            {"seat": 0, "role": "slap", "taken": taken}, csrf), 5)
                        got.append((route, taken, status, answer["text"]))
        finally:
            running.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await running
        return got

    for route, taken, status, text in asyncio.run(go()):
        if taken == list(CANDIDATE_LINES):
            assert (status, text) == (409, "every line is taken"), (route, text)
        else:
            assert status == 400 and text.endswith("?"), (route, taken, status, text)


def test_the_system_s_language_and_a_new_journal_folder_are_saved(tmp_path: Path) -> None:
    # found by probing the pages: both were answered "saved" and the file kept the old value
    path = tmp_path / "table.toml"
    first = Answers(table_id="t", game="vandatta", seats=["A", "B"], card_source="virtual",
                    language="sv")
    write_table(path, first)
    assert load_config(path).language == "sv"
    write_table(path, Answers(table_id="t", game="vandatta", seats=["A", "B"],
                              card_source="virtual", language=None, journal_dir="spel"))
    text = path.read_text()
    assert "language" not in text
    assert load_config(path).journal_dir == tmp_path / "spel"
    assert "# every game is kept here" in text  # the key's comment stays with it


def test_a_language_from_the_page_is_written_as_the_catalogs_name_it(tmp_path: Path) -> None:
    # "SV_se" was written as sent, and the page's list then showed the system's language
    path = tmp_path / "table.toml"
    write_table(path, Answers.from_json({"seats": ["A", "B"], "language": "SV_se"}))
    assert 'language = "sv"' in path.read_text()
    with pytest.raises(ConfigError, match="language"):
        write_table(path, Answers.from_json({"seats": ["A", "B"], "language": "xx"}))


def test_the_wizard_s_address_in_use_is_said_once_and_may_pass(tmp_path: Path) -> None:
    """An address another program holds: said once (it had been said twice), exit 75 (a
    failure that may pass, which the systemd unit restarts; it had been 1, which no list
    named); with the file there, ``--setup`` says it changes it (it had said "no
    configuration yet")."""
    import os
    import socket
    import subprocess
    import sys

    from tests.web_pages import ROOT

    holder = socket.socket()
    holder.bind(("127.0.0.1", 0))
    holder.listen()
    port = holder.getsockname()[1]
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock"}
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "cardtable.cli", "run", "--config",
             str(tmp_path / "table.toml"), "--port", str(port), "--no-console"],
            cwd=ROOT, capture_output=True, text=True, timeout=60, env=env)
    finally:
        holder.close()
    said = proc.stdout + proc.stderr
    assert proc.returncode == 75, said
    assert said.count(f"cannot serve the table's pages on 127.0.0.1:{port}") == 1, said
    (tmp_path / "table.toml").write_text('[table]\nid = "t"\ngame = "banka-bever"\n'
                                         'seats = ["Anna", "Bo"]\n')
    proc2 = subprocess.Popen(
        [sys.executable, "-m", "cardtable.cli", "run", "--config", str(tmp_path / "table.toml"),
         "--setup", "--port", "0", "--no-console"], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, env=env)
    try:
        assert proc2.stdout is not None
        line = proc2.stdout.readline()
        while line and "set-up wizard:" not in line:
            line = proc2.stdout.readline()
        assert line.rstrip().endswith("/setup/ (changing table.toml)"), line
    finally:
        proc2.terminate()
        proc2.wait(15)


def test_a_table_set_up_again_is_served_where_its_file_says(tmp_path: Path) -> None:
    """``--setup`` on a file that names its ``[web]`` address and journal folder serves the
    wizard there and keeps the paired phones in that folder (found by reading install.md
    against the code: the wizard served on 127.0.0.1:8080 whatever ``[web]`` said, and kept
    its phones in ``journals`` beside the file, where the service cannot write)."""
    path = tmp_path / "table.toml"
    web, folder, why = set_up_place(path)  # no file yet
    assert (web.bind, web.port, folder, why) == ("127.0.0.1", 8080, tmp_path / "journals", None)
    path.write_text('[table]\njournal_dir = "/var/lib/card-referee/journals"\n\n'
                    '[web]\nbind = "0.0.0.0"\nport = 8443\nhosts = ["Kitchen.local"]\n')
    web, folder, why = set_up_place(path)
    assert (web.bind, web.port, web.hosts) == ("0.0.0.0", 8443, ("kitchen.local",))
    assert folder == Path("/var/lib/card-referee/journals") and why is None
    path.write_text('[table]\njournal_dir = "spel"\n[web]\nport = "eighty"\n')
    web, folder, why = set_up_place(path)
    assert (web.bind, web.port, folder) == ("127.0.0.1", 8080, tmp_path / "spel")
    assert why is not None and "web.port" in why
    path.write_text("[table\n")  # not TOML: the wizard writes it whole
    assert set_up_place(path) == (set_up_place(tmp_path / "none.toml")[0],
                                  tmp_path / "journals", None)
    site = SetupSite(path, journal_dir=tmp_path / "spel", hosts=("kitchen.local",))
    assert site.pairing.folder == tmp_path / "spel" and "kitchen.local" in site.allowed_hosts


def test_the_wizard_serves_on_the_files_web_port(tmp_path: Path) -> None:
    import os
    import socket
    import subprocess
    import sys

    from tests.web_pages import ROOT

    with socket.socket() as probe:  # a port free a moment ago
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    path = tmp_path / "table.toml"
    path.write_text(f'[table]\nid = "t"\njournal_dir = "spel"\n\n[web]\nport = {port}\n')
    proc = subprocess.Popen(
        [sys.executable, "-m", "cardtable.cli", "run", "--config", str(path), "--setup",
         "--no-console"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock"})
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        while line and "set-up wizard:" not in line:
            line = proc.stdout.readline()
        assert f"http://127.0.0.1:{port}/setup/" in line, line
    finally:
        proc.terminate()
        proc.wait(15)
    assert (tmp_path / "spel").is_dir() and not (tmp_path / "journals").exists()


def test_the_file_kept_as_previous_is_as_private_as_it_was(tmp_path: Path) -> None:
    """Found walking install.md's wizard route for the service: ``table.toml.previous`` was
    written readable by all (0644) beside a ``table.toml`` of mode 0640, and it may name the
    broker's password."""
    import os

    path = tmp_path / "table.toml"
    path.write_text('[table]\njournal_dir = "spel"\n')
    os.chmod(path, 0o640)
    kept = write_table(path, Answers(table_id="t", seats=["A", "B"], journal_dir="spel"))
    assert kept is not None and os.stat(kept).st_mode & 0o777 == 0o640
    assert os.stat(path).st_mode & 0o777 == 0o640
    os.chmod(path, 0o600)  # a .previous there already takes the file's mode too
    write_table(path, Answers(table_id="t", seats=["A", "B", "C"], journal_dir="spel"))
    assert os.stat(kept).st_mode & 0o777 == 0o600


def test_a_wizard_that_could_never_save_is_not_served(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Found by the 2026-12-07 CLI audit: ``run --config /proc/table.toml`` served a wizard
    that could never save, ``--setup --no-web`` served it anyway, and a misspelt file name
    served a wizard beside the file that was meant without a word."""
    import os
    import subprocess
    import sys

    from cardtable.cli import main
    from tests.web_pages import ROOT

    assert main(["run", "--config", "/proc/table.toml", "--no-console"]) == 2
    assert "no file can be made in /proc" in capsys.readouterr().err
    (tmp_path / "table.toml").write_text('[table]\nid = "t"\n')
    assert main(["run", "--config", str(tmp_path / "table.toml"), "--setup", "--no-web"]) == 2
    assert "the set-up wizard is a web page: leave out --no-web" in capsys.readouterr().err
    proc = subprocess.Popen(
        [sys.executable, "-m", "cardtable.cli", "run", "--config", str(tmp_path / "tabel.toml"),
         "--port", "0", "--no-console"], cwd=ROOT, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT, text=True, env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock"})
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
    finally:
        proc.terminate()
        proc.wait(15)
    assert "does not exist yet" in first and "beside it: table.toml" in first, first
