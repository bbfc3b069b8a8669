"""Latency from a slap button edge to its verdict at a display, through the whole service.

Path: a mock GPIO edge (stamped by the pad) → ``RefereeService`` (journal synced to disk, the
arbiter's settle window, the Banka bäver engine) → ``TableFeed`` → a private Mosquitto → a paho
subscriber in its own process. Each press is judged a false slap (nothing on the pile), whose
verdict carries the edge's own time, so arrival minus ``t`` is the latency. Two runs: ``progress``
(the service releases a slap as soon as the GPIO pads are past it, ``[table] release =
"progress"``, the default) and the baseline ``window`` (``release = "window"``: every slap waits
the whole settle window, the service as it was); ``beyond_settle`` is what the rest of the path
adds to the window. Every input is synced to disk before it is judged, so the disk's own fsync
time is measured beside them (``fsync_ms``: a bare ``os.fsync`` of one journal line, p50/p99, on
the journal's disk), and ``progress_tmpfs`` runs the progress case with the journal on
``/dev/shm`` (when there is one), where fsync costs nothing: what the referee itself adds.
``progress_loaded`` is the ``progress`` run again while ``--load`` busy loops (default one per
core, each a process spinning at the default priority, as ``stress --cpu N`` does) compete
for the cores with the referee, the broker and the display, these three scheduled as the
systemd units run the referee and the broker (round-robin real time, ``CPUSchedulingPolicy=rr``
at priority 10, deploy/systemd; ``loaded_policy`` says so, or that this process may not);
``progress_loaded_nice`` the same at ``Nice=-10`` (the units before) and
``progress_loaded_default`` at the default priority.

    python3 bench/slap_to_display.py [--n 200] [--load N]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

from feed_latency import SUBSCRIBER, PrivateBroker

from cardtable.config import parse_config
from cardtable.wiring import build_service
from hardware.mock import MonotonicClock, VirtualMockFactory

SLAP_PINS = (17, 5, 23, 16)
SETTLE_MS = 20.0


async def _measure(broker: PrivateBroker, n: int, journal_dir: str, release: str) -> dict:
    sub = await asyncio.create_subprocess_exec(
        sys.executable, "-c", SUBSCRIBER, str(broker.port), broker.passwords["display"],
        str(n), "tcp", str(n * 0.05 + 30), stdout=asyncio.subprocess.PIPE)
    assert sub.stdout is not None
    if (await asyncio.wait_for(sub.stdout.readline(), 15)).strip() != b"ready":
        sys.exit("slap_to_display: the subscriber could not subscribe")
    config = parse_config({
        "table": {"id": "bench", "game": "banka-bever", "seats": ["Anna", "Bo", "Cia", "Dag"],
                  "card_source": "virtual", "seed": 1, "journal_dir": journal_dir,
                  "settle_ms": SETTLE_MS, "release": release},
        "hardware": {"pin_factory": "mock"},
        "seats": [{"name": f"s{i}", "slap": pin} for i, pin in enumerate(SLAP_PINS)],
        "broker": {"url": f"mqtt://127.0.0.1:{broker.port}", "username": "referee",
                   "password": broker.passwords["referee"]},
    })
    factory = VirtualMockFactory(MonotonicClock())
    service = build_service(config, console=False, pin_factory=factory)
    service.outputs = [o for o in service.outputs if type(o).__name__ != "LogOutput"]
    task = asyncio.create_task(service.run())
    feed = next(o for o in service.outputs if type(o).__name__ == "FeedOutput").feed
    if not await feed.wait_connected(10):
        sys.exit("slap_to_display: the feed could not connect")
    pins = [factory.pin(p) for p in SLAP_PINS]
    for i in range(n):
        pin = pins[i % len(pins)]
        pin.drive_low()
        await asyncio.sleep(0.025)
        pin.drive_high()
        await asyncio.sleep(0.025)
    out, _ = await sub.communicate()
    service.stop()
    await task
    arrived = {int(k): v for k, v in json.loads(out.decode().strip().splitlines()[-1]).items()}
    lat = sorted((at - t) / 1e6 for t, at in arrived.items())
    if not lat:
        sys.exit("slap_to_display: no verdict arrived")
    q = statistics.quantiles(lat, n=100, method="inclusive")
    return {
        "n": len(lat), "lost": n - len(lat),
        "p50_ms": round(q[49], 3), "p99_ms": round(q[98], 3), "max_ms": round(lat[-1], 3),
        "beyond_settle_p50_ms": round(q[49] - SETTLE_MS, 3),
        "beyond_settle_p99_ms": round(q[98] - SETTLE_MS, 3),
    }


def fsync_times(folder: Path, n: int = 200) -> dict[str, float]:
    """p50/p99 of appending one journal line and syncing it, in ``folder``."""
    fd = os.open(folder / "fsync-probe", os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    times = []
    try:
        for _ in range(n):
            os.write(fd, b'{"t": 1234567890123, "seat": 1, "act": "slap"}\n')
            start = time.perf_counter()
            os.fsync(fd)
            times.append((time.perf_counter() - start) * 1e3)
    finally:
        os.close(fd)
    q = statistics.quantiles(times, n=100, method="inclusive")
    return {"p50": round(q[49], 3), "p99": round(q[98], 3)}


@contextlib.contextmanager
def busy_loops(n: int) -> Iterator[None]:
    """``n`` processes spinning on a core each while the block runs."""
    procs = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(n)]
    for proc in procs:  # at the default policy and priority, whatever the bench's own
        with contextlib.suppress(OSError):
            os.sched_setscheduler(proc.pid, os.SCHED_OTHER, os.sched_param(0))
        os.setpriority(os.PRIO_PROCESS, proc.pid, 0)
    try:
        time.sleep(0.5)  # let them take their cores before the first slap
        yield
    finally:
        for proc in procs:
            proc.kill()
            proc.wait()


#: The scheduling deploy/systemd gives the referee and the broker (``CPUSchedulingPolicy=rr``,
#: ``CPUSchedulingPriority=10``), and the niceness it gave them before (``Nice=-10``).
UNIT_PRIORITY = 10
UNIT_NICE = -10


@contextlib.contextmanager
def unit_priority(how: str | None, result: dict) -> Iterator[None]:
    """Run the block (and the broker and display it starts) as the units run the referee and
    the broker (``how`` "rr": round-robin real time at :data:`UNIT_PRIORITY`; "nice": at
    :data:`UNIT_NICE`), when allowed; the busy loops set their own, the default."""
    if how is None:
        yield
        return
    before = os.getpriority(os.PRIO_PROCESS, 0)
    try:
        if how == "rr":
            os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(UNIT_PRIORITY))
            result["loaded_policy"] = f"SCHED_RR {UNIT_PRIORITY}"
        else:
            os.setpriority(os.PRIO_PROCESS, 0, UNIT_NICE)
            result["loaded_nice"] = UNIT_NICE
    except PermissionError:
        result[f"loaded_{how}"] = "not allowed here: at the default priority"
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        os.setpriority(os.PRIO_PROCESS, 0, before)


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its JSON line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=200, help="slaps measured (default 200)")
    p.add_argument("--load", type=int, default=os.cpu_count() or 1,
                   help="busy loops of the loaded run (default: one per core)")
    args = p.parse_args(argv)
    result: dict = {
        "bench": "slap_to_display",
        "path": "GPIO edge -> pads -> journal (fsync) -> arbiter -> engine -> feed -> Mosquitto "
                "-> subscriber",
        "settle_ms": SETTLE_MS,
    }
    runs = [("progress", "progress", None, 0), ("window", "window", None, 0)]
    if Path("/dev/shm").is_dir():
        runs.append(("progress_tmpfs", "progress", "/dev/shm", 0))
    if args.load:
        runs.append(("progress_loaded", "progress", None, args.load))
        runs.append(("progress_loaded_nice", "progress", None, args.load))
        runs.append(("progress_loaded_default", "progress", None, args.load))
        result["load"] = f"{args.load} busy loops"
    for name, release, where, load in runs:
        with tempfile.TemporaryDirectory(prefix="slap-display-") as tmp, \
                unit_priority({"progress_loaded": "rr", "progress_loaded_nice": "nice"}.get(name),
                              result), \
                PrivateBroker(Path(tmp)) as broker, \
                tempfile.TemporaryDirectory(prefix="slap-journal-", dir=where) as jdir, \
                busy_loops(load):
            if name == "progress":
                result["fsync_ms"] = fsync_times(Path(jdir))
            result[name] = asyncio.run(_measure(broker, args.n, jdir, release))
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
