"""``referee history`` and :mod:`cardtable.history`: every game of a journal folder judged
again, damaged journals listed with the reason, the evening's standings and a points game's
round table — checked against the golden verdicts of the scenario journals (tests/data)."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import time
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
from rich.console import Console

from cardtable.cli import main
from cardtable.config import parse_config
from cardtable.display.view import TableView
from cardtable.feed import parse_broker_url
from cardtable.history import EVENING_GAP_S, read_history, standings, summary
from cardtable.simulate import Simulation
from cardtable.wiring import build_service
from referee.model import Input
from tests.broker import Broker

SCENARIOS = Path(__file__).resolve().parents[1] / "data" / "scenarios"
NOW = 1_800_000_000.0  # a fixed "now" (seconds since the epoch) for the evening


def golden(name: str) -> list[dict[str, Any]]:
    """The expected verdict lines of a scenario (tests/data), not the code under test."""
    path = SCENARIOS / f"{name}.expected.jsonl"
    lines = [json.loads(x) for x in path.read_text().splitlines() if x.strip()]
    return [x for x in lines if "verdict" in x]  # the final state line is left out


def put(folder: Path, scenario: str, name: str, end: float) -> Path:
    """Copy a scenario journal into ``folder`` as ``name``, last written at ``end``."""
    target = folder / name
    shutil.copy(SCENARIOS / f"{scenario}.jsonl", target)
    os.utime(target, (end, end))
    return target


@pytest.fixture
def evening(tmp_path: Path) -> Path:
    """A journal folder: three Vändåtta games tonight, a Banka bäver game the day before."""
    put(tmp_path, "banka_bever/14_last_player", "20261130-190000-banka-bever.jsonl",
        NOW - EVENING_GAP_S - 3600)
    put(tmp_path, "vandatta/13_round_won", "20261201-190000-vandatta.jsonl", NOW - 3000)
    put(tmp_path, "vandatta/17b_points_all_reach_100_tie_shares",
        "20261201-191000-vandatta.jsonl", NOW - 2000)
    put(tmp_path, "vandatta/16_points_game", "20261201-192000-vandatta.jsonl", NOW - 1000)
    return tmp_path


def test_every_game_is_judged_again_from_its_journal(evening: Path) -> None:
    history = read_history(evening)
    assert [g.file for g in history.games] == sorted(p.name for p in evening.glob("*.jsonl"))
    for g in history.games:
        scenario = {"20261130-190000-banka-bever.jsonl": "banka_bever/14_last_player",
                    "20261201-190000-vandatta.jsonl": "vandatta/13_round_won",
                    "20261201-191000-vandatta.jsonl":
                        "vandatta/17b_points_all_reach_100_tie_shares",
                    "20261201-192000-vandatta.jsonl": "vandatta/16_points_game"}[g.file]
        expected = golden(scenario)
        over = [v for v in expected if v["verdict"] == "game_over"]
        assert g.status == "finished" and g.problem is None
        assert g.winners == over[0]["winners"]
        rounds = [v for v in expected if v["verdict"] == "round_over"]
        assert [(r.winner, r.scores, r.totals) for r in g.rounds] == [
            (v["winner"], v["scores"], v["totals"]) for v in rounds]
        inputs = [json.loads(x) for x in (evening / g.file).read_text().splitlines()[1:]]
        assert g.inputs == len(inputs)
        last = max([i["t"] for i in inputs] + [v["t"] for v in expected])
        assert g.duration_s == pytest.approx((last - inputs[0]["t"]) / 1e9)
        assert g.end == pytest.approx((evening / g.file).stat().st_mtime)
        assert g.start == pytest.approx(g.end - g.duration_s)
    bb = history.games[0]
    assert (bb.game, bb.seats, bb.winner_names) == ("banka-bever", ["A", "B", "C"], ["A"])
    assert bb.options["false_slap_penalty"] == "none"  # the defaults are filled in


def test_the_evening_standings_count_wins_by_name(evening: Path) -> None:
    history = read_history(evening)
    tonight = history.evening(NOW)
    assert [g.file for g in tonight] == ["20261201-190000-vandatta.jsonl",
                                         "20261201-191000-vandatta.jsonl",
                                         "20261201-192000-vandatta.jsonl"]
    table = standings(tonight)
    # By hand: 13 Anna wins; 17b Anna and Cia share; 16 Cia wins. Bo never.
    assert table["games"] == 3
    assert table["players"] == [
        {"name": "Anna", "played": 3, "wins": 2, "shared": 1},
        {"name": "Cia", "played": 3, "wins": 2, "shared": 1},
        {"name": "Bo", "played": 3, "wins": 0, "shared": 0},
    ]
    points = table["points"]  # the latest points game of the evening: 16
    assert points["file"] == "20261201-192000-vandatta.jsonl" and points["over"]
    assert [(r["round"], r["winner"], r["scores"], r["totals"]) for r in points["rounds"]] == [
        (1, 2, [65, 100, 0], [65, 100, 0]),
        (2, 0, [0, None, 40], [65, 100, 40]),
        (3, 2, [55, None, 0], [120, 100, 40]),
    ]
    # Long after the last game, a new evening has no standings yet.
    assert history.evening(NOW + EVENING_GAP_S + 1) == []


def test_damaged_and_unreadable_journals_are_listed_with_the_reason(evening: Path) -> None:
    good = evening / "20261201-190000-vandatta.jsonl"
    lines = good.read_text().splitlines(keepends=True)
    (evening / "20261201-193000-vandatta.jsonl").write_text(lines[0] + "{not json\n")
    (evening / "20261201-194000-banka-bever.jsonl").write_text("garbage\n")
    (evening / "20261201-195000-banka-bever.jsonl").write_bytes(b"")
    (evening / "damaged-20261201-190500.jsonl").write_text("whatever\n")
    (evening / "current.broken-1764600000.jsonl").write_text("whatever\n")
    (evening / "referee.log").write_text("not a journal\n")
    # found by the 2026-12-07 CLI audit: a journal copied in under another name was left out
    # without a word
    (evening / "anna-s-game.jsonl").write_text(lines[0])
    history = read_history(evening)
    problems = {g.file: g.problem for g in history.games if g.problem}
    assert problems == {
        "20261201-193000-vandatta.jsonl":
            "damaged at line 2 (not valid JSON (Expecting property name enclosed in double "
            "quotes)); judged up to the line before",
        "20261201-194000-banka-bever.jsonl":
            "unreadable: line 1: the header is not valid JSON (Expecting value)",
        "20261201-195000-banka-bever.jsonl":
            "unreadable: line 1: the journal is empty: the first line must be the header",
    }
    assert [a["file"] for a in history.set_aside] == [
        "anna-s-game.jsonl", "current.broken-1764600000.jsonl", "damaged-20261201-190500.jsonl"]
    assert history.set_aside[0]["why"].startswith("left out: not named as the table names")
    # Neither the damaged games nor the files kept aside count in the standings.
    assert standings(history.games)["games"] == 4
    out = summary(history, "kitchen", now=NOW)
    assert {p["file"] for p in out["problems"]} == set(problems)


def test_nothing_is_cached_a_changed_journal_is_judged_anew(evening: Path) -> None:
    path = evening / "20261201-190000-vandatta.jsonl"
    assert read_history(evening).games[1].status == "finished"
    head = path.read_text().splitlines(keepends=True)[0]
    path.write_text(head)  # the same file, now without its inputs
    again = next(g for g in read_history(evening).games if g.file == path.name)
    assert again.file == path.name and again.status == "ended" and again.winners == []


def test_the_game_being_played_is_listed_last_and_not_counted(evening: Path) -> None:
    lines = (SCENARIOS / "vandatta/16_points_game.jsonl").read_text().splitlines(keepends=True)
    current = evening / "current.jsonl"
    current.write_text("".join(lines[:4]) + '{"t": 12')  # a torn last line is no input
    os.utime(current, (NOW - 10, NOW - 10))
    history = read_history(evening)
    g = history.games[-1]
    assert (g.file, g.status, g.problem, g.inputs) == ("current.jsonl", "in progress", None, 3)
    table = standings(history.evening(NOW))
    assert table["games"] == 3  # not decided yet
    assert table["points"]["file"] == "current.jsonl"  # its round table so far
    assert len(table["points"]["rounds"]) == 1 and not table["points"]["over"]


def test_the_command(evening: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["history", "--journal-dir", str(evening)]) == 0
    text = capsys.readouterr().out
    assert "Games at" in text and ": 4 (each judged again" in text
    assert "Banka bäver" in text and "20261130-190000-banka-bever.jsonl" in text
    assert "points_game=true" in text
    assert main(["history", "--journal-dir", str(evening), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [g["winner_names"] for g in out["games"]] == [["A"], ["Anna"], ["Anna", "Cia"],
                                                        ["Cia"]]
    (evening / "20261201-200000-banka-bever.jsonl").write_text("garbage\n")
    assert main(["history", "--journal-dir", str(evening)]) == 1
    captured = capsys.readouterr()
    assert "! 20261201-200000-banka-bever.jsonl: unreadable: line 1" in captured.out
    assert "1 journal could not be read whole" in captured.err
    assert main(["history", "--journal-dir", str(evening / "nope")]) == 2
    assert "no journal folder" in capsys.readouterr().err
    # one or the other: both had been taken, and --config had silently won
    with pytest.raises(SystemExit) as stop:
        main(["history", "--journal-dir", str(evening), "--config", "table.toml"])
    assert stop.value.code == 2
    assert "argument --config: not allowed with argument --journal-dir" in \
        capsys.readouterr().err
    # --config: the folder of the table's configuration (relative to the file).
    (evening / "20261201-200000-banka-bever.jsonl").unlink()
    toml = evening.parent / "table.toml"
    toml.write_text(f'[table]\nid = "t1"\ngame = "vandatta"\nseats = ["Anna", "Bo", "Cia"]\n'
                    f'journal_dir = "{evening.name}"\n')
    assert main(["history", "--config", str(toml), "--json"]) == 0
    assert len(json.loads(capsys.readouterr().out)["games"]) == 4


def test_the_service_publishes_the_history_at_start_and_after_each_game(
        mosquitto: Broker, tmp_path: Path) -> None:
    """A real referee service and a real Mosquitto: the retained ``history`` comes when the
    service starts and again once the game being played is decided."""
    folder = tmp_path / "j"
    folder.mkdir()
    now = time.time()
    put(folder, "vandatta/13_round_won", "20261201-190000-vandatta.jsonl", now - 600)
    lines = (SCENARIOS / "banka_bever/23_slap_win_ends_game.jsonl").read_text().splitlines(
        keepends=True)
    (folder / "current.jsonl").write_text("".join(lines[:3]))  # two cards laid: a double
    cfg = parse_config({
        "table": {"id": "hist1", "game": "banka-bever", "seats": ["A", "B", "C"],
                  "journal_dir": str(folder)},
        "broker": {"url": f"mqtt://127.0.0.1:{mosquitto.port}", "username": "referee",
                   "password": mosquitto.passwords["referee"]},
    })
    svc = build_service(cfg, console=False)
    svc.fsync = False

    async def go() -> list[dict[str, Any]]:
        seen: list[dict[str, Any]] = []
        task = asyncio.create_task(svc.run())
        address = parse_broker_url(mosquitto.url("display"))
        async with aiomqtt.Client(**address.client_kwargs()) as client:
            await client.subscribe("cardtable/hist1/history", qos=1)
            async with asyncio.timeout(10):
                async for message in client.messages:
                    assert isinstance(message.payload, bytes)
                    seen.append(json.loads(message.payload))
                    if len(seen) == 1:
                        svc.submit(Input(svc.clock.now(), 2, "slap"))
                    if seen[-1]["standings"]["games"] == 2:
                        break
        svc.stop()
        await task
        return seen

    seen = asyncio.run(go())
    first, last = seen[0], seen[-1]
    assert first["table"] == "hist1" and first["total_games"] == 2
    assert [g["status"] for g in first["evening"]] == ["finished", "in progress"]
    assert first["standings"]["players"][0] == {"name": "Anna", "played": 1, "wins": 1,
                                                "shared": 0}
    assert [g["status"] for g in last["evening"]] == ["finished", "finished"]
    assert last["evening"][-1]["winners"] == ["C"]
    assert {"name": "C", "played": 1, "wins": 1, "shared": 0} in last["standings"]["players"]


def test_both_displays_show_the_standings_of_the_history_topic(evening: Path) -> None:
    history = summary(read_history(evening), "t1", now=NOW)
    view = TableView("t1")
    state = {"game": "vandatta", "seats": ["Anna", "Bo", "Cia"], "counts": [3, 0, 0],
             "pile": [], "turn": None, "cards_played": 9, "tricks": 3, "session": "s", "seq": 1}
    view.on_state(state)
    assert view.scene()["standings"] is None  # no history yet
    assert not view.on_message("cardtable/t1/history", json.dumps(history).encode())
    st = view.scene()["standings"]
    assert st["games"] == 3
    assert [(p["name"], p["text"]) for p in st["players"]] == [
        ("Anna", "2 wins of 3 (1 shared)"), ("Cia", "2 wins of 3 (1 shared)"),
        ("Bo", "0 wins of 3")]
    assert st["points"]["rounds"] == [
        {"round": 1, "winner": "Cia", "cells": ["65 (65)", "100 (100)", "0 (0)"]},
        {"round": 2, "winner": "Anna", "cells": ["0 (65)", "- (100)", "40 (40)"]},
        {"round": 3, "winner": "Cia", "cells": ["55 (120)", "- (100)", "0 (40)"]}]
    console = Console(width=100, record=True)
    console.print(view.render())
    text = console.export_text()
    assert "Tonight (3 games): Anna 2 wins of 3 (1 shared)" in text
    assert "55 (120)" in text and "Points, round by round" in text
    # An unreadable history shows no standings, and never breaks the display.
    for bad in (b"not json", b"[1, 2]", json.dumps({"standings": {"players": 5}}).encode(),
                json.dumps({"standings": {"players": [{"name": 1}], "points": "x"}}).encode()):
        view.on_message("cardtable/t1/history", bad)
        assert view.scene()["standings"] is None
        console.print(view.render())


def test_the_last_games_history_goes_out_before_the_referee_stops(
        mosquitto: Broker, tmp_path: Path) -> None:
    folder = tmp_path / "j"
    folder.mkdir()
    lines = (SCENARIOS / "banka_bever/23_slap_win_ends_game.jsonl").read_text().splitlines(
        keepends=True)
    (folder / "current.jsonl").write_text("".join(lines[:3]))
    long_game = folder / "20261201-180000-banka-bever.jsonl"
    Simulation("banka-bever", 3, seed=3, journal_path=str(long_game)).run()
    for k in range(1, 12):  # earlier games that take a while to judge again
        shutil.copy(long_game, folder / f"20261201-18{k:02d}00-banka-bever.jsonl")
    cfg = parse_config({
        "table": {"id": "hist2", "game": "banka-bever", "seats": ["A", "B", "C"],
                  "journal_dir": str(folder)},
        "broker": {"url": f"mqtt://127.0.0.1:{mosquitto.port}", "username": "referee",
                   "password": mosquitto.passwords["referee"]},
    })
    svc = build_service(cfg, console=False)
    svc.fsync = False

    async def go() -> dict[str, Any]:
        task = asyncio.create_task(svc.run())
        await asyncio.sleep(0.3)
        svc.submit(Input(svc.clock.now(), 2, "slap"))
        async with asyncio.timeout(5):
            while not svc.state()["over"]:
                await asyncio.sleep(0.005)
        svc.stop()  # at once: the game's history is still being read
        await task
        address = parse_broker_url(mosquitto.url("display"))
        async with aiomqtt.Client(**address.client_kwargs()) as client:
            await client.subscribe("cardtable/hist2/history", qos=1)
            async with asyncio.timeout(5):
                async for message in client.messages:
                    assert isinstance(message.payload, bytes)
                    return dict(json.loads(message.payload))
        raise AssertionError("no history")

    history = asyncio.run(go())
    assert history["total_games"] == 13 and history["standings"]["games"] == 13
    assert history["evening"][-1]["winners"] == ["C"]


class _AtOnce:
    """A stand-in for :class:`threading.Thread` that runs its target when started: the
    history is read at the very moment it is asked for, the race made certain."""

    def __init__(self, target: Any, **_: Any) -> None:
        self.target = target

    def start(self) -> None:
        self.target()


def test_a_game_ended_by_the_operator_is_published_archived_not_in_progress(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The operator's "end" notice goes out before the service archives the journal and
    deals anew; the history read for it must come after the archive, or the summary shows
    the ended game still in progress."""
    import cardtable.history as history
    from cardtable.clock import TableClock
    from cardtable.service import RefereeService

    monkeypatch.setattr(history.threading, "Thread", _AtOnce)
    monkeypatch.setattr(history, "background", lambda: None)
    cfg = parse_config({"table": {"id": "t1", "game": "banka-bever", "seats": ["A", "B"],
                                  "journal_dir": str(tmp_path / "j"), "seed": 5}})
    published: list[dict[str, Any]] = []

    async def go() -> None:
        publisher = history.HistoryPublisher(cfg.journal_dir, "t1", published.append,
                                             asyncio.get_running_loop())

        class Out:
            def update(self, verdicts: Any, state: Any) -> None:
                publisher.update(verdicts)

        svc = RefereeService(cfg, clock=TableClock(source=lambda: 0), fsync=False,
                             outputs=[Out()])
        svc.open_game()
        svc.end_game("tester")
        for _ in range(3):
            await asyncio.sleep(0)
        svc.close()

    asyncio.run(go())
    assert published, "no history was read after the game was ended"
    games = published[-1]["evening"]
    assert [g["status"] for g in games] == ["ended", "in progress"]
    assert games[0]["file"].endswith("-banka-bever.jsonl") and games[1]["file"] == "current.jsonl"
    assert all(g["problem"] is None for g in games)


def test_the_feed_reads_only_the_journals_of_the_last_day(evening: Path) -> None:
    history = read_history(evening, since=NOW - 3 * 3600)
    assert [g.file for g in history.games] == ["20261201-190000-vandatta.jsonl",
                                               "20261201-191000-vandatta.jsonl",
                                               "20261201-192000-vandatta.jsonl"]
    assert history.older == 1  # yesterday's Banka bäver game is not judged again
    assert summary(history, "t1", now=NOW)["total_games"] == 4


# -- the cache of judged journals (issue 36: history over 5 000 journals) -------------------

def _judging_forbidden(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Make judging a journal record its name (and fail the read when it is not allowed)."""
    import cardtable.history as history

    judged: list[str] = []
    real = history.judge_file

    def judge(path: Path) -> Any:
        judged.append(path.name)
        return real(path)

    monkeypatch.setattr(history, "judge_file", judge)
    return judged


def test_a_second_look_takes_unchanged_journals_from_the_cache(evening: Path, monkeypatch
                                                               ) -> None:
    first = [g.to_json() for g in read_history(evening).games]
    assert (evening / ".history-cache.json").exists()
    judged = _judging_forbidden(monkeypatch)
    again = [g.to_json() for g in read_history(evening).games]
    assert judged == [] and again == first  # the same records, none judged again
    # the game being played is judged every time, never cached
    put(evening, "vandatta/13_round_won", "current.jsonl", NOW)
    read_history(evening)
    read_history(evening)
    assert judged == ["current.jsonl", "current.jsonl"]


def test_a_changed_journal_or_other_rules_are_judged_again(evening: Path, monkeypatch) -> None:
    import cardtable.history as history

    read_history(evening)
    judged = _judging_forbidden(monkeypatch)
    changed = evening / "20261201-190000-vandatta.jsonl"
    with changed.open("a") as fh:
        fh.write("not json\n")  # a line more: another size, another time
    records = {g.file: g for g in read_history(evening).games}
    assert judged == [changed.name]
    assert "line" in (records[changed.name].problem or "")
    monkeypatch.setattr(history, "rules_digest", lambda: "other rules")
    judged.clear()
    read_history(evening)
    assert sorted(judged) == sorted(p.name for p in evening.glob("2*.jsonl"))


def test_a_damaged_or_unwritable_cache_is_never_in_the_way(evening: Path, monkeypatch) -> None:
    first = [g.to_json() for g in read_history(evening).games]
    (evening / ".history-cache.json").write_text('{"rules": [1, 2], "records": "x"')
    assert [g.to_json() for g in read_history(evening).games] == first
    (evening / ".history-cache.json").unlink()

    def refuse(*_a: Any, **_k: Any) -> None:
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(os, "replace", refuse)  # a folder the reader may not write
    assert [g.to_json() for g in read_history(evening).games] == first
    assert not (evening / ".history-cache.json").exists()
    assert not list(evening.glob(".history-cache.json.*"))


def test_a_journal_whose_times_span_more_than_a_week_is_listed_with_that_problem(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Times of 30 digits (valid JSON, valid inputs) put the start before year 1 and made the
    listing raise OverflowError; such a journal is listed with why, at its file's time."""
    head = (SCENARIOS / "banka_bever/02_challenge_passes_on.jsonl").read_text().splitlines()[0]
    path = tmp_path / "20260101-180000-banka-bever.jsonl"
    path.write_text(head + '\n{"t": 0, "seat": 0, "act": "lay"}\n'
                    '{"t": ' + "9" * 30 + ', "seat": 1, "act": "lay"}\n')
    os.utime(path, (NOW, NOW))
    game = read_history(tmp_path).games[0]
    assert game.problem is not None and "days, not one game's" in game.problem
    assert game.duration_s == 0.0 and game.start == game.end == NOW
    for argv in ([], ["--json"]):
        assert main(["history", "--journal-dir", str(tmp_path), *argv]) == 1
        assert "unexpected" not in capsys.readouterr().err


@pytest.mark.parametrize(("key", "value"), [
    ("duration_s", "x"), ("winners", [7]), ("seats", 5), ("end", 1e300), ("start", -1.0),
    ("cards_played", True), ("game", "chess"), ("rounds", [{"round": 1, "winner": 9,
                                                            "scores": [], "totals": None}])])
def test_a_cache_edited_by_hand_is_judged_again_not_trusted(
        evening: Path, key: str, value: Any, capsys: pytest.CaptureFixture[str]) -> None:
    """A record whose stamp still matches but whose fields are not what judging gives (a
    field of another type, a winner who is no seat, a time out of range): judged again, the
    same listing as without a cache; before, the listing raised on every run after."""
    first = read_history(evening)
    cache = evening / ".history-cache.json"
    data = json.loads(cache.read_text())
    for entry in data["records"].values():
        entry["record"][key] = value
    cache.write_text(json.dumps(data))
    again = read_history(evening)
    assert [g.file for g in again.games] == [g.file for g in first.games]
    assert [(g.winners, g.duration_s, g.end) for g in again.games] == \
        [(g.winners, g.duration_s, g.end) for g in first.games]
    assert main(["history", "--journal-dir", str(evening)]) == 0
    assert "unexpected" not in capsys.readouterr().err
