"""Latency of the table feed: a verdict handed to ``TableFeed.publish()`` until it arrives at a
subscriber through a real Mosquitto. Prints one JSON line with p50/p99 in milliseconds.

``publish()`` stands in for the end of the slap edge → arbiter → engine → verdict path: what is
measured is everything after the verdict exists (queue, publisher task, the state and the event
at QoS 1, the broker, a display's client). The broker is a private ``mosquitto`` on free
loopback ports with the same kind of setup as the tests (password file, ACL, no anonymous); the
subscriber is a paho client in its own process, logged in as a read-only display.

    python3 bench/feed_latency.py [--n 1000] [--interval-ms 5] [--ws]
"""

from __future__ import annotations

import argparse
import asyncio
import getpass
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from cardtable.feed import TableFeed

WARMUP = 50


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _binary(name: str, fallback: str) -> str:
    path = shutil.which(name) or (fallback if os.path.exists(fallback) else None)
    if path is None:
        sys.exit(f"feed_latency: {name} not found (apt-get install -y mosquitto)")
    return path


class PrivateBroker:
    """A Mosquitto on free loopback ports with users ``referee`` and ``display``."""

    def __init__(self, workdir: Path) -> None:
        self.binary = _binary("mosquitto", "/usr/sbin/mosquitto")
        passwd_tool = _binary("mosquitto_passwd", "/usr/bin/mosquitto_passwd")
        self.passwords = {"referee": "bench-referee", "display": "bench-display"}
        passwd = workdir / "passwd"
        passwd.write_text("")
        for user, pw in self.passwords.items():
            subprocess.run([passwd_tool, "-b", str(passwd), user, pw], check=True,
                           capture_output=True)
        acl = workdir / "acl"
        acl.write_text("user referee\ntopic readwrite cardtable/#\n\n"
                       "user display\ntopic read cardtable/#\n")
        self.port, self.ws_port = _free_port(), _free_port()
        self.config = workdir / "mosquitto.conf"
        self.config.write_text(
            f"user {getpass.getuser()}\nper_listener_settings false\nallow_anonymous false\n"
            f"password_file {passwd}\nacl_file {acl}\npersistence false\nset_tcp_nodelay true\n"
            f"log_dest file {workdir / 'mosquitto.log'}\n"
            f"listener {self.port} 127.0.0.1\nprotocol mqtt\n"
            f"listener {self.ws_port} 127.0.0.1\nprotocol websockets\n")
        self.proc: subprocess.Popen[bytes] | None = None

    def version(self) -> str:
        """``mosquitto 2.0.11`` or so."""
        out = subprocess.run([self.binary, "-h"], capture_output=True, text=True).stdout
        first = out.splitlines()[0] if out else "mosquitto"
        return first.replace(" version", "").strip()

    def __enter__(self) -> PrivateBroker:
        self.proc = subprocess.Popen([self.binary, "-c", str(self.config)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), 0.2), \
                        socket.create_connection(("127.0.0.1", self.ws_port), 0.2):
                    return self
            except OSError:
                if self.proc.poll() is not None:
                    break
                time.sleep(0.02)
        self.__exit__()
        sys.exit("feed_latency: mosquitto did not start")

    def __exit__(self, *exc: object) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            self.proc.wait(5)


def _state(i: int) -> dict[str, Any]:
    """A four-seat Banka bäver state of realistic size."""
    return {
        "game": "banka-bever", "counts": [12, 14, 9, 11], "turn": i % 4,
        "pile": ["2C", "5S", "9D", "QH", "7S", "7H"], "bottom": "4D",
        "challenge": None, "claim": None, "out": [], "over": False, "winners": None,
        "cards_played": i, "tricks": i // 10,
    }


#: The display: a paho subscriber in its own process (no shared GIL with the referee), which
#: notes CLOCK_MONOTONIC at each arrival and prints them all as JSON when done.
SUBSCRIBER = r"""
import json, sys, threading, time
import paho.mqtt.client as paho
port, password, total, ws = int(sys.argv[1]), sys.argv[2], int(sys.argv[3]), sys.argv[4] == "ws"
arrived, done = {}, threading.Event()
def on_message(client, userdata, msg):
    now = time.monotonic_ns()
    arrived[json.loads(msg.payload)["t"]] = now
    if len(arrived) >= total:
        done.set()
c = paho.Client(paho.CallbackAPIVersion.VERSION2, client_id="bench-display",
                transport="websockets" if ws else "tcp")
if ws:
    c.ws_set_options(path="/mqtt")
c.username_pw_set("display", password)
c.on_message = on_message
c.on_connect = lambda cl, *a: cl.subscribe("cardtable/bench/events", qos=1)
c.on_subscribe = lambda *a: print("ready", flush=True)
c.connect("127.0.0.1", port)
if not ws:
    import socket
    c.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
c.loop_start()
done.wait(float(sys.argv[5]))
c.loop_stop()
print(json.dumps(arrived), flush=True)
"""


async def _measure(broker: PrivateBroker, n: int, interval: float, ws: bool) -> dict[str, Any]:
    total = n + WARMUP
    sub = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SUBSCRIBER, str(broker.ws_port if ws else broker.port),
        broker.passwords["display"], str(total), "ws" if ws else "tcp",
        str(total * interval + 30), stdout=asyncio.subprocess.PIPE)
    assert sub.stdout is not None
    line = await asyncio.wait_for(sub.stdout.readline(), 15)
    if line.strip() != b"ready":
        sys.exit("feed_latency: the subscriber could not subscribe")

    sent: dict[int, int] = {}
    url = f"mqtt://referee:{broker.passwords['referee']}@127.0.0.1:{broker.port}"
    async with TableFeed(url, "bench", seats=["Anna", "Bo", "Cia", "Dag"]) as feed:
        if not await feed.wait_connected(10):
            sys.exit("feed_latency: the feed could not connect")
        for i in range(total):
            verdict = {"t": i, "verdict": "pile_won", "seat": i % 4, "reason": "double",
                       "cards": 6}
            sent[i] = time.monotonic_ns()
            feed.publish(_state(i), [verdict])
            await asyncio.sleep(interval)
        out, _ = await sub.communicate()
    arrived = {int(k): v for k, v in json.loads(out.decode().strip().splitlines()[-1]).items()}

    lat = sorted((arrived[i] - sent[i]) / 1e6 for i in range(WARMUP, total) if i in arrived)
    if not lat:
        sys.exit("feed_latency: nothing arrived")
    q = statistics.quantiles(lat, n=100, method="inclusive")
    return {
        "bench": "feed_latency",
        "path": "TableFeed.publish(verdict) -> Mosquitto -> subscriber (events, QoS 1)",
        "transport": "websockets" if ws else "tcp",
        "broker": broker.version(),
        "n": len(lat),
        "lost": n - len(lat),
        "interval_ms": interval * 1000,
        "p50_ms": round(q[49], 3),
        "p99_ms": round(q[98], 3),
        "max_ms": round(lat[-1], 3),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its JSON line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=1000, help="verdicts measured (default 1000)")
    p.add_argument("--interval-ms", type=float, default=5.0,
                   help="pause between verdicts (default 5 ms)")
    p.add_argument("--ws", action="store_true",
                   help="the subscriber reads over websockets, as the browser display does")
    args = p.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="feed-latency-") as tmp, \
            PrivateBroker(Path(tmp)) as broker:
        result = asyncio.run(_measure(broker, args.n, args.interval_ms / 1000, args.ws))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
