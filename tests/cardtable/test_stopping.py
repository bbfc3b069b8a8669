"""Issue 10.6: every configuration of ``referee run`` stops cleanly within 2 s of SIGTERM,
SIGINT or the console's ``quit``, and a table on a broker leaves ``offline`` as its status.

Before the fix a referee with a console kept running after every one of them: the console read
standard input in the default executor, and ``asyncio.run`` waits for that thread at exit, so
the process stayed until someone pressed Enter.
"""

from __future__ import annotations

import asyncio
import signal
import subprocess
import sys
import time
from pathlib import Path

import aiomqtt
import pytest

from cardtable.feed import parse_broker_url
from tests.broker import Broker

#: (console, broker, board) → how the run is stopped; every combination once, and the one that
#: used to hang (console and broker) in all three ways.
CASES = [
    (False, False, False, "SIGTERM"),
    (False, False, True, "SIGINT"),
    (False, True, False, "SIGINT"),
    (False, True, True, "SIGTERM"),
    (True, False, False, "quit"),
    (True, False, True, "SIGTERM"),
    (True, True, False, "SIGTERM"),
    (True, True, False, "SIGINT"),
    (True, True, False, "quit"),
    (True, True, True, "quit"),
]


def _config(tmp_path: Path, console: bool, broker: Broker | None, port: str | None) -> Path:
    source = "board" if port else ("console" if console else "virtual")
    text = (f'[table]\nid = "stop"\ngame = "banka-bever"\nseats = ["Anna", "Bo"]\n'
            f'card_source = "{source}"\njournal_dir = "journals"\n')
    if port:
        text += f'\n[board]\nport = "{port}"\nbuttons = [0, 1]\n'
    if broker is not None:
        text += f'\n[broker]\nurl = "{broker.url()}"\n'
    path = tmp_path / "table.toml"
    path.write_text(text)
    return path


async def _status(url: str) -> str | None:
    """The retained status of the table, or None if there is none."""
    async with aiomqtt.Client(**parse_broker_url(url).client_kwargs(), timeout=5) as client:
        await client.subscribe("cardtable/stop/status", qos=1)
        try:
            async with asyncio.timeout(2):
                async for message in client.messages:
                    return bytes(message.payload).decode()  # type: ignore[arg-type]
        except TimeoutError:
            return None
    return None


@pytest.mark.parametrize("console, use_broker, board, how", CASES)
@pytest.mark.slow
def test_every_configuration_stops_within_2_s(tmp_path: Path, mosquitto: Broker,
                                              console: bool, use_broker: bool, board: bool,
                                              how: str) -> None:
    emulator = None
    port = None
    if board:
        emulator = subprocess.Popen([sys.executable, "-m", "firmware_bridge.cli", "emulate",
                                     "--seats", "2"], stdin=subprocess.PIPE,
                                    stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
        assert emulator.stdout is not None
        port = emulator.stdout.readline().strip()
        assert port.startswith("/dev/")
    cfg = _config(tmp_path, console, mosquitto if use_broker else None, port)
    args = [sys.executable, "-m", "cardtable.cli", "run", "--config", str(cfg)]
    if not console:
        args.append("--no-console")
    proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, text=True)
    try:
        journal = tmp_path / "journals" / "current.jsonl"
        deadline = time.monotonic() + 20
        while not journal.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert journal.exists(), "the referee did not start"
        if use_broker:
            while asyncio.run(_status(mosquitto.url())) != "online":
                assert time.monotonic() < deadline, "the feed never came online"
        else:
            time.sleep(0.7)  # the loop runs and the edges have started
        start = time.monotonic()
        if how == "quit":
            assert proc.stdin is not None
            proc.stdin.write("quit\n")
            proc.stdin.flush()
        else:
            proc.send_signal(signal.SIGTERM if how == "SIGTERM" else signal.SIGINT)
        try:
            code = proc.wait(2.0)
        except subprocess.TimeoutExpired:
            pytest.fail(f"still running 2 s after {how}")
        took = time.monotonic() - start
        assert code == 0, proc.stderr.read() if proc.stderr else ""
        assert took < 2.0
        if use_broker:
            assert asyncio.run(_status(mosquitto.url())) == "offline"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        if emulator is not None:
            emulator.kill()
            emulator.wait()
