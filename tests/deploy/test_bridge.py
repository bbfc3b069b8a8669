"""deploy/mosquitto/bridge.conf: two real Mosquitto brokers on loopback, tables publishing on
one and the hall following the other, connected by the shipped bridge configuration (only the
address and the bridge's account put in): every table's state reaches the hall, retained, then
its live changes and its referee's offline status; nothing flows back to the tables."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import aiomqtt

from cardtable.display.hall import HallView, follow_hall
from cardtable.feed import TableFeed, parse_broker_url
from tests.broker import Broker, make_broker

ROOT = Path(__file__).resolve().parents[2]
STATE = {"game": "banka-bever", "seats": ["Anna", "Bo"], "counts": [20, 32], "pile": ["5S"],
         "turn": 0, "out": [], "over": False, "winners": None, "cards_played": 1, "tricks": 0}


def bridged(tables: Broker, workdir: Path) -> Broker:
    """The hall broker with deploy/mosquitto/bridge.conf pointing at ``tables`` (the bridge
    logs in with the tables broker's read-only display account)."""
    conf = (ROOT / "deploy" / "mosquitto" / "bridge.conf").read_text()
    for old, new in [("address tables-broker.local:1883", f"address 127.0.0.1:{tables.port}"),
                     ("remote_username bridge-hall", "remote_username display"),
                     ("remote_password CHANGE-ME",
                      f"remote_password {tables.passwords['display']}")]:
        assert old in conf, old
        conf = conf.replace(old, new)
    return make_broker(workdir, extra_config=conf)


async def retained_json(url: str, topic: str) -> dict[str, object]:
    async with aiomqtt.Client(**parse_broker_url(url).client_kwargs()) as client:
        await client.subscribe(topic, qos=1)
        async with asyncio.timeout(5):
            async for message in client.messages:
                assert isinstance(message.payload, bytes)
                return dict(json.loads(message.payload))
    raise AssertionError("nothing retained")


async def wait_for(check: object, timeout: float = 10.0) -> None:
    async with asyncio.timeout(timeout):
        while not check():  # type: ignore[operator]
            await asyncio.sleep(0.02)


def test_a_tables_state_reaches_the_hall_through_the_bridge(tmp_path: Path) -> None:
    tables = make_broker(tmp_path / "tables")
    tables.start()
    hall_broker = bridged(tables, tmp_path / "hall")
    hall_broker.start()
    try:
        async def go() -> None:
            async with TableFeed(tables.url(), "kitchen", seats=["Anna", "Bo"]) as feed:
                assert await feed.wait_connected(5)
                for k in range(5):
                    feed.publish({**STATE, "cards_played": k + 1}, [])
                # A display joining the hall broker now gets the retained, newest state.
                state: dict[str, object] = {}
                for _ in range(100):
                    state = await retained_json(hall_broker.url("display"),
                                                "cardtable/kitchen/state")
                    if state.get("seq") == 5:
                        break
                    await asyncio.sleep(0.05)
                assert state["seq"] == 5 and state["cards_played"] == 5
                # The hall, on the hall broker only, follows the live changes.
                hall = HallView()
                stop = asyncio.Event()
                follower = asyncio.create_task(follow_hall(
                    parse_broker_url(hall_broker.url("display")), hall, stop=stop))
                await wait_for(lambda: "kitchen" in hall.tables
                               and hall.tables["kitchen"].seq == 5)
                assert hall.tables["kitchen"].status == "online"
                feed.publish({**STATE, "turn": 1, "cards_played": 6}, [])
                await wait_for(lambda: hall.tables["kitchen"].seq == 6)
                assert hall.scene()["tables"][0]["headline"] == "Bo to play"
                # Nothing flows back: a write on the hall broker never reaches the tables.
                async with aiomqtt.Client(**parse_broker_url(
                        hall_broker.url("referee")).client_kwargs()) as writer:
                    await writer.publish("cardtable/kitchen/state", b'{"seq": 99}', qos=1,
                                         retain=True)
                await asyncio.sleep(0.3)
                assert (await retained_json(tables.url("display"),
                                            "cardtable/kitchen/state"))["seq"] == 6
            # The referee stops: its offline status crosses the bridge too.
            await wait_for(lambda: hall.tables["kitchen"].status == "offline")
            stop.set()
            await follower

        asyncio.run(go())
    finally:
        hall_broker.stop()
        tables.stop()
