"""A journal folder whose game is not the configured one (issue 37, findings 1 and 2): the
referee says so, goes on with it under its own name or (asked to) archives it under its own
name and deals the configured game; nothing is ever labelled with the other game's name."""

from __future__ import annotations

import asyncio
import json
import logging
import subprocess
import sys

import pytest

from cardtable.clock import TableClock
from cardtable.config import load_config
from cardtable.errors import OtherGameError
from cardtable.fullstack import full_stack_config, run_full_stack
from cardtable.service import RefereeService
from referee.journal import read_journal
from referee.model import Input

MS = 1_000_000


class FakeTime:
    def __init__(self, t: int = 10_000 * MS) -> None:
        self.t = t

    def __call__(self) -> int:
        return self.t


def write_config(tmp_path, game, seats, *, name="table.toml", extra="", seed=5):
    path = tmp_path / name
    path.write_text(f"""
[table]
id = "k"
game = "{game}"
seats = {json.dumps(list(seats))}
journal_dir = "journals"
seed = {seed}
settle_ms = 20
{extra}
""")
    return load_config(path)


def open_service(cfg, now, **kw) -> RefereeService:
    svc = RefereeService(cfg, clock=TableClock(source=now), fsync=False)
    svc.open_game(**kw)
    return svc


def unfinished_banka_bever(tmp_path, seats=("Anna", "Bo")) -> FakeTime:
    """The folder holds an unfinished Banka bäver game of Anna and Bo, three cards in."""
    now = FakeTime()
    svc = open_service(write_config(tmp_path, "banka-bever", seats), now)
    for _ in range(3):
        now.t += 500 * MS
        svc.submit(Input(svc.clock.now(), svc.state()["turn"], "lay"))
        now.t += 30 * MS
        svc.step()
    assert svc.state()["cards_played"] == 3 and not svc.state()["over"]
    svc.close()
    return now


def archived(tmp_path) -> list:
    return sorted(p for p in (tmp_path / "journals").glob("2*.jsonl"))


def test_another_game_in_the_folder_goes_on_under_its_own_name(tmp_path, caplog) -> None:
    now = unfinished_banka_bever(tmp_path)
    changed = write_config(tmp_path, "vandatta", ("Xavier", "Yves", "Zoe"), name="changed.toml")
    with caplog.at_level(logging.WARNING, "cardtable.service"):
        svc = open_service(changed, now)
    state = svc.state()
    assert state["game"] == "banka-bever" and state["seats"] == ["Anna", "Bo"]
    assert state["cards_played"] == 3
    # the service's own idea of the game is the journal's: the console greets with it
    assert svc.config.game == "banka-bever" and svc.config.seats == ("Anna", "Bo")
    said = caplog.text
    assert "Banka bäver (Anna, Bo)" in said and "Vändåtta (Xavier, Yves, Zoe)" in said
    assert svc.other_game is not None and "Banka bäver (Anna, Bo)" in svc.other_game
    # 'new' at the console: the old game is archived under its own name, the configured dealt
    svc.start_game()
    [old] = archived(tmp_path)
    assert old.name.endswith("-banka-bever.jsonl")
    assert read_journal(old).header.game == "banka-bever"
    header = read_journal(svc.current_path).header
    assert (header.game, header.seats) == ("vandatta", ("Xavier", "Yves", "Zoe"))
    assert svc.config.game == "vandatta" and svc.other_game is None
    svc.close()


def test_new_game_archives_the_other_game_under_its_own_name(tmp_path, caplog) -> None:
    now = unfinished_banka_bever(tmp_path)
    changed = write_config(tmp_path, "vandatta", ("Xavier", "Yves", "Zoe"), name="changed.toml")
    with caplog.at_level(logging.WARNING, "cardtable.service"):
        svc = open_service(changed, now, other_game="new")
    assert svc.state()["game"] == "vandatta"
    assert svc.state()["seats"] == ["Xavier", "Yves", "Zoe"]
    [old] = archived(tmp_path)
    assert old.name.endswith("-banka-bever.jsonl")
    assert read_journal(old).inputs[-1].act == "lay"  # the whole old game, kept
    assert "archived it under its own name" in caplog.text
    svc.close()


def test_other_seats_or_options_are_another_game_too(tmp_path) -> None:
    now = unfinished_banka_bever(tmp_path)
    renamed = write_config(tmp_path, "banka-bever", ("Cia", "Dan"), name="renamed.toml",
                           extra="[options]\nfalse_slap_penalty = \"burn\"")
    svc = open_service(renamed, now)
    assert svc.state()["seats"] == ["Anna", "Bo"] and svc.state()["cards_played"] == 3
    assert svc.other_game is not None
    assert "configured seats: Cia, Dan" in svc.other_game
    assert "false_slap_penalty = none (configured burn)" in svc.other_game
    svc.close()
    # the very configured game is simply resumed, with nothing to say
    svc = open_service(write_config(tmp_path, "banka-bever", ("Anna", "Bo")), now)
    assert svc.other_game is None and svc.state()["cards_played"] == 3
    svc.close()


def test_a_table_wired_for_fewer_seats_cannot_go_on_with_it(tmp_path) -> None:
    now = unfinished_banka_bever(tmp_path, ("Anna", "Bo", "Cia"))
    pins = ('[hardware]\npin_factory = "mock"\n' + "".join(
        f'[[seats]]\nname = "{n}"\nslap = {17 + i}\n' for i, n in enumerate("XY")))
    wired = write_config(tmp_path, "vandatta", ("X", "Y"), name="wired.toml", extra=pins)
    with pytest.raises(OtherGameError, match=r"wired for 2 seats.*--new-game"):
        open_service(wired, now)


def test_a_table_wired_for_more_seats_goes_on_with_fewer_players(tmp_path) -> None:
    """A game started from the operator page with fewer players than the table has pads
    (issue 34) goes on after a restart: the first pads are theirs."""
    now = unfinished_banka_bever(tmp_path)
    pins = ('[hardware]\npin_factory = "mock"\n' + "".join(
        f'[[seats]]\nname = "{n}"\nslap = {17 + i}\n' for i, n in enumerate("XYZ")))
    wired = write_config(tmp_path, "vandatta", ("X", "Y", "Z"), name="wired.toml", extra=pins)
    svc = open_service(wired, now)
    assert svc.state()["seats"] == ["Anna", "Bo"] and svc.other_game is not None
    svc.close()


def test_referee_run_says_so_and_exits_2_when_it_cannot_go_on(tmp_path) -> None:
    unfinished_banka_bever(tmp_path, ("Anna", "Bo", "Cia"))
    pins = ('[hardware]\npin_factory = "mock"\n' + "".join(
        f'[[seats]]\nname = "{n}"\nslap = {17 + i}\n' for i, n in enumerate("XY")))
    wired = write_config(tmp_path, "vandatta", ("X", "Y"), name="wired.toml", extra=pins)
    done = subprocess.run([sys.executable, "-m", "cardtable.cli", "run", "--config",
                           wired.path, "--no-console"], capture_output=True, text=True,
                          timeout=60, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "unfinished game of Banka bäver (Anna, Bo, Cia)" in done.stderr
    assert "Traceback" not in done.stderr


@pytest.mark.slow
def test_full_stack_archives_a_finished_other_game_and_plays_the_asked_for_one(
        tmp_path) -> None:
    journal_dir = str(tmp_path / "jh")
    first = full_stack_config("vandatta", 3, 4, journal_dir=journal_dir, settle_ms=2,
                              options={"points_game": False})
    done = asyncio.run(run_full_stack(first, seed=4, speed=200, timeout_s=120))
    assert done.table is not None and done.table.engine.over
    second = full_stack_config("banka-bever", 2, 6, journal_dir=journal_dir, settle_ms=2)
    svc = asyncio.run(run_full_stack(second, seed=6, speed=200, timeout_s=120))
    assert svc.state()["game"] == "banka-bever" and svc.state()["over"]
    header = read_journal(svc.current_path).header
    assert (header.game, header.seed, len(header.seats)) == ("banka-bever", 6, 2)
    [old] = sorted((tmp_path / "jh").glob("2*.jsonl"))
    assert old.name.endswith("-vandatta.jsonl")
    assert read_journal(old).header.game == "vandatta"
