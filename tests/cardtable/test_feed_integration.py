"""The feed end to end: `referee simulate --broker` and `referee run` publish to a real broker."""

from __future__ import annotations

import asyncio
import json

import aiomqtt
import pytest

from cardtable.cli import main
from cardtable.config import parse_config
from cardtable.feed import parse_broker_url
from cardtable.wiring import build_service
from tests.broker import Broker


async def retained(url: str, topic: str, timeout: float = 5.0) -> dict:
    """The retained JSON message on ``topic`` (as a display joining now would get it)."""
    async with aiomqtt.Client(**parse_broker_url(url).client_kwargs()) as client:
        await client.subscribe(topic, qos=1)
        async with asyncio.timeout(timeout):
            async for message in client.messages:
                return json.loads(message.payload)
    raise AssertionError("no retained message")


def test_simulate_publishes_the_game_to_the_broker(mosquitto: Broker, capsys) -> None:
    assert main(["simulate", "--game", "banka-bever", "--players", "3", "--seed", "2",
                 "--json", "--broker", mosquitto.url(), "--table", "simt"]) == 0
    final = json.loads(capsys.readouterr().out.splitlines()[-1])["state"]
    state = asyncio.run(retained(mosquitto.url("display"), "cardtable/simt/state"))
    assert state["over"] is True
    assert state["counts"] == final["counts"] and state["winners"] == final["winners"]
    assert state["seq"] > 100  # one change per step of the game
    seat = asyncio.run(retained(mosquitto.url("display"), "cardtable/simt/seat/0"))
    assert seat["name"] == "Anna"


@pytest.mark.slow
def test_simulate_with_broker_down_still_plays(capsys) -> None:
    """The game is played and told, and the exit status says that nothing was published
    (issue 37: it was 0)."""
    assert main(["simulate", "--game", "beggar-my-neighbour", "--players", "2", "--seed", "1",
                 "--fast", "--broker", "mqtt://127.0.0.1:9", "--table", "x"]) == 75
    captured = capsys.readouterr()
    assert "not reachable" in captured.err and "winner: Anna" in captured.out
    assert "never answered: nothing of the game was published" in captured.err


def test_referee_run_publishes_its_table(mosquitto: Broker, tmp_path) -> None:
    user, password = "referee", mosquitto.passwords["referee"]
    cfg = parse_config({
        "table": {"id": "run1", "game": "beggar-my-neighbour", "seats": ["Anna", "Bo"],
                  "journal_dir": str(tmp_path / "j"), "seed": 4},
        "broker": {"url": f"mqtt://127.0.0.1:{mosquitto.port}", "username": user,
                   "password": password},
    })
    svc = build_service(cfg, console=False)
    svc.fsync = False

    async def go() -> dict:
        task = asyncio.create_task(svc.run())
        await asyncio.sleep(0.3)
        from referee.model import Input

        for _ in range(3):
            svc.submit(Input(svc.clock.now(), svc.state()["turn"], "slap"))  # virtual deck
            await asyncio.sleep(0.08)
        state = await retained(mosquitto.url("display"), "cardtable/run1/state")
        status = await _status(mosquitto)
        svc.stop()
        await task
        return {"state": state, "status": status}

    got = asyncio.run(go())
    assert got["state"]["cards_played"] == 3 and got["state"]["table"] == "run1"
    assert got["status"] == "online"
    assert asyncio.run(_status(mosquitto)) == "offline"


async def _status(broker: Broker) -> str:
    async with aiomqtt.Client(**parse_broker_url(broker.url("display")).client_kwargs()) as c:
        await c.subscribe("cardtable/run1/status")
        async with asyncio.timeout(5):
            async for m in c.messages:
                return m.payload.decode()
    return ""
