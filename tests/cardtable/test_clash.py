"""Issue 10.7: a second referee with the same table id on one broker is refused at start, and
the live table's displays stay right throughout (its status online, its session in the state).

Before the fix the second one ran: the retained state flipped between the two sessions, and
when it exited it left a retained ``offline`` for the live table."""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiomqtt
import pytest

from cardtable.clash import live_referee
from cardtable.feed import parse_broker_url
from tests.broker import Broker


def _config(tmp_path: Path, name: str, broker: Broker) -> Path:
    folder = tmp_path / name
    folder.mkdir()
    path = folder / "table.toml"
    path.write_text('[table]\nid = "t7"\ngame = "banka-bever"\nseats = ["Anna", "Bo"]\n'
                    'card_source = "virtual"\njournal_dir = "journals"\n\n'
                    f'[broker]\nurl = "{broker.url()}"\n')
    return path


async def _retained(url: str) -> dict[str, str]:
    got: dict[str, str] = {}
    async with aiomqtt.Client(**parse_broker_url(url).client_kwargs(), timeout=5) as client:
        await client.subscribe("cardtable/t7/status", qos=1)
        await client.subscribe("cardtable/t7/state", qos=1)
        try:
            async with asyncio.timeout(1.5):
                async for message in client.messages:
                    payload = bytes(message.payload)  # type: ignore[arg-type]
                    if message.topic.matches("cardtable/t7/status"):
                        got["status"] = payload.decode()
                    else:
                        got["session"] = json.loads(payload)["session"]
                    if len(got) == 2:
                        break
        except TimeoutError:
            pass
    return got


@pytest.mark.slow
def test_a_second_referee_of_the_same_table_is_refused(tmp_path: Path, mosquitto: Broker) -> None:
    address = parse_broker_url(mosquitto.url())
    assert asyncio.run(live_referee(address, "t7")) is None  # nobody yet: answered at once
    one = subprocess.Popen([sys.executable, "-m", "cardtable.cli", "run", "--config",
                            str(_config(tmp_path, "one", mosquitto)), "--no-console"],
                           stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while (seen := asyncio.run(_retained(mosquitto.url()))).get("status") != "online":
            assert time.monotonic() < deadline, "the first referee never came online"
        live = asyncio.run(live_referee(address, "t7"))
        assert live is not None and live.session == seen["session"]

        two = subprocess.run([sys.executable, "-m", "cardtable.cli", "run", "--config",
                              str(_config(tmp_path, "two", mosquitto)), "--no-console"],
                             capture_output=True, text=True, timeout=30)
        assert two.returncode == 75
        assert "already refereed" in two.stderr and "Traceback" not in two.stderr
        assert not (tmp_path / "two" / "journals" / "current.jsonl").exists()
        after = asyncio.run(_retained(mosquitto.url()))
        assert after == {"status": "online", "session": seen["session"]}
    finally:
        one.send_signal(signal.SIGTERM)
        assert one.wait(10) == 0
    assert asyncio.run(_retained(mosquitto.url()))["status"] == "offline"
    assert asyncio.run(live_referee(address, "t7")) is None  # free again


async def _retain(url: str, topic: str, payload: bytes) -> None:
    async with aiomqtt.Client(**parse_broker_url(url).client_kwargs(), timeout=5) as client:
        await client.publish(topic, payload, qos=1, retain=True)


def test_a_retained_state_nested_too_deep_or_too_large_does_not_stop_the_start(
        mosquitto: Broker) -> None:
    """Found by the issue 36 audit: a retained ``[[[…]]]`` 100 000 deep made the start-up
    check raise RecursionError, and ``referee run`` exited 70 on every restart."""
    address = parse_broker_url(mosquitto.url())
    asyncio.run(_retain(mosquitto.url(), "cardtable/t7/status", b"online"))
    for state in (b"[" * 100_000 + b"]" * 100_000, b'{"session": "' + b"x" * (2 << 20) + b'"}'):
        asyncio.run(_retain(mosquitto.url(), "cardtable/t7/state", state))
        live = asyncio.run(live_referee(address, "t7"))
        assert live is not None and live.session is None
    asyncio.run(_retain(mosquitto.url(), "cardtable/t7/state", b'{"session": "s1"}'))
    live = asyncio.run(live_referee(address, "t7"))
    assert live is not None and live.session == "s1"
