"""Slap → display page latency with hundreds of pages following the table (issue 34).

Path: a mock GPIO edge (stamped by the pad) → ``RefereeService`` (journal synced to disk, the
arbiter's settle window, the Banka bäver engine: each press is a false slap) → the referee's own
display (:class:`cardtable.operator.local.LocalDisplay`) → server-sent events → N pages, each a
raw HTTP connection in one of two client processes, which stamp every read with the monotonic
time (the same clock as the press: one machine) and find the scenes in the bytes afterwards.
Latency of press k at a page: the arrival of the first scene numbered past press k's change
minus the time the bench pressed.

``written_to_every_page``: press → the scene handed to every page's socket (the server's own
share; the rest is the clients' processes reading hundreds of sockets on the same two cores).
Rows: ``threads_32``, the baseline: the display server as it was before issue 34 (a
``ThreadingHTTPServer``, a thread per page, at most 32 pages; kept below as it was) fed the same
scenes; ``aiohttp_32`` and ``aiohttp_500``: the server of now (``cardtable.webserver``, aiohttp in
the service's own loop), with as many pages and with 500. Each row also gives the verdict's own
p99 inside the referee (edge → judged): the table must keep refereeing at the same pace. The
``_rr`` rows run the referee and its server as deploy/systemd runs them (round-robin real time,
priority 10; the pages' processes at the default policy), the old server and the new alike.

    python3 bench/display_streams.py [--n 150] [--pages 500]
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
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from slap_to_display import unit_priority

from cardtable.config import parse_config
from cardtable.operator.local import LocalDisplay
from cardtable.webserver import StreamBudget, WebServer, new_app
from cardtable.wiring import build_service
from hardware.mock import MonotonicClock, VirtualMockFactory

SLAP_PINS = (17, 5, 23, 16)
DEBUG = False
#: Slaps before the measured ones.
WARM_UP = 12
SETTLE_MS = 20.0

#: The pages: GET /events on raw connections read by one epoll loop, stamping each read with the
#: monotonic time (the scenes are found in the bytes afterwards, so a page costs a read and a
#: stamp while the table plays: the clients stand for other devices and should take as little
#: of the two cores as they can); print "<page> <seq> <monotonic ns>" per scene.
CLIENT = r"""
import re, select, socket, sys, time
port, first, count, until = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4])
EVENT = re.compile(rb'data: [^\n]*?"seq":(\d+)[^\n]*\n\n')
socks = {}
for k in range(first, first + count):
    s = socket.create_connection(("127.0.0.1", port))
    s.sendall(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
    s.setblocking(False)
    socks[s.fileno()] = (k, s)
poll = select.epoll()
for fd in socks:
    poll.register(fd, select.EPOLLIN)
reads = []
now = time.monotonic_ns
print("ready", flush=True)
end = time.monotonic() + until
while time.monotonic() < end:
    for fd, _ in poll.poll(0.05):
        k, s = socks[fd]
        try:
            data = s.recv(1 << 17)
        except BlockingIOError:
            continue
        reads.append((k, now(), data))
        if not data:
            poll.unregister(fd)
bufs, out = {}, []
for k, t, data in reads:
    buf = bufs.get(k, b"") + data
    last = 0
    for m in EVENT.finditer(buf):
        out.append(f"{k} {m.group(1).decode()} {t}")
        last = m.end()
    bufs[k] = buf[last:]
print("\n".join(out), flush=True)
"""


class ThreadedDisplay:
    """The display's stream server before issue 34, as it was (cardtable/display/web.py at
    commit 7633d9a): a condition variable, a thread per page, at most 32 pages."""

    MAX_STREAMS = 32

    def __init__(self) -> None:
        self.cond = threading.Condition()
        self.version, self.body, self.closed = 0, b"{}", False
        streams = threading.BoundedSemaphore(self.MAX_STREAMS)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            timeout = 30

            def do_GET(self) -> None:  # noqa: N802
                if not streams.acquire(blocking=False):
                    self.send_error(503)
                    return
                try:
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream; charset=utf-8")
                    self.end_headers()
                    self.wfile.write(b"retry: 500\n\n")
                    self.wfile.flush()
                    version = 0
                    while True:
                        with outer.cond:
                            outer.cond.wait_for(
                                lambda seen=version: outer.version > seen or outer.closed, 15.0)
                            if outer.closed:
                                return
                            got = (outer.version, outer.body) if outer.version > version else None
                        if got is None:
                            self.wfile.write(b": keep-alive\n\n")
                        else:
                            version, body = got
                            self.wfile.write(b"data: " + body + b"\n\n")
                        self.wfile.flush()
                except OSError:
                    pass
                finally:
                    streams.release()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def publish(self, body: bytes) -> None:
        with self.cond:
            self.version += 1
            self.body = body
            self.cond.notify_all()

    def close(self) -> None:
        with self.cond:
            self.closed = True
            self.cond.notify_all()
        self.server.shutdown()
        self.server.server_close()


class VerdictTimes:
    """An output of the service: each false slap's edge → judged time (ns)."""

    def __init__(self, service: Any) -> None:
        self.service = service
        self.ns: list[int] = []

    def update(self, verdicts: list[Any], state: dict[str, Any]) -> None:
        now = self.service.clock.now()
        self.ns += [now - v.t for v in verdicts if v.verdict == "false_slap"]


def quantiles(values: list[float]) -> dict[str, float]:
    q = statistics.quantiles(values, n=100, method="inclusive")
    return {"p50_ms": round(q[49], 3), "p99_ms": round(q[98], 3),
            "max_ms": round(max(values), 3)}


async def _run(server: str, pages: int, n: int, journal_dir: str) -> dict[str, Any]:
    config = parse_config({
        "table": {"id": "bench", "game": "banka-bever", "seats": ["Anna", "Bo", "Cia", "Dag"],
                  "card_source": "virtual", "seed": 1, "journal_dir": journal_dir,
                  "settle_ms": SETTLE_MS},
        "hardware": {"pin_factory": "mock"},
        "seats": [{"name": f"s{i}", "slap": pin} for i, pin in enumerate(SLAP_PINS)],
    })
    factory = VirtualMockFactory(MonotonicClock())
    service = build_service(config, console=False, pin_factory=factory)
    service.outputs = [o for o in service.outputs if type(o).__name__ != "LogOutput"]
    times = VerdictTimes(service)
    service.outputs.append(times)
    local = LocalDisplay("bench", StreamBudget(pages + 10))
    web_server = None
    threaded = None
    if server == "threads":
        threaded = ThreadedDisplay()
        port = threaded.port
        local.stream.publish = threaded.publish  # type: ignore[method-assign]
    else:
        app = new_app()
        app.router.add_get("/events", local.stream.serve)
        web_server = WebServer(app, "127.0.0.1", 0)
        await web_server.start()
        port = web_server.port
    written: dict[int, int] = {}  # scene number → when it was in every page's socket
    send = local.stream.publish

    def publish_and_note(body: bytes) -> None:
        send(body)
        written[local.seq] = time.monotonic_ns()

    local.stream.publish = publish_and_note  # type: ignore[method-assign]
    service.outputs.append(local)
    service.edges.append(local)
    task = asyncio.create_task(service.run())
    await asyncio.sleep(0.3)
    duration = (n + WARM_UP) * 0.05 + 6
    halves = [(0, pages // 2), (pages // 2, pages - pages // 2)]
    clients = [subprocess.Popen([sys.executable, "-c", CLIENT, str(port), str(first),
                                 str(count), str(duration)], stdout=subprocess.PIPE, text=True)
               for first, count in halves if count]
    for c in clients:  # the pages stand for other devices: the default policy, whatever ours
        with contextlib.suppress(OSError):
            os.sched_setscheduler(c.pid, os.SCHED_OTHER, os.sched_param(0))
    for c in clients:
        assert c.stdout is not None
        # awaited: the loop must go on accepting the pages' connections meanwhile
        assert (await asyncio.to_thread(c.stdout.readline)).strip() == "ready"
    pins = [factory.pin(p) for p in SLAP_PINS]
    for i in range(WARM_UP):  # the first slaps of a service are slower (not the server's)
        pins[i % len(pins)].drive_low()
        await asyncio.sleep(0.025)
        pins[i % len(pins)].drive_high()
        await asyncio.sleep(0.025)
    await asyncio.sleep(0.5)
    seq0 = local.seq
    pressed: list[int] = []
    for i in range(n):
        pin = pins[i % len(pins)]
        pressed.append(time.monotonic_ns())
        pin.drive_low()
        await asyncio.sleep(0.025)
        pin.drive_high()
        await asyncio.sleep(0.025)
    arrivals: dict[int, list[tuple[int, int]]] = {}
    for c in clients:
        out, _ = await asyncio.to_thread(c.communicate)
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[0].isdigit():
                arrivals.setdefault(int(parts[0]), []).append((int(parts[1]), int(parts[2])))
    service.stop()
    await task
    if web_server is not None:
        await web_server.stop()
    if threaded is not None:
        threaded.close()
    lat: list[float] = []
    by_press: dict[int, list[float]] = {}
    for seen in arrivals.values():
        seen.sort()
        j = 0
        for k, t in enumerate(pressed):
            want = seq0 + k + 1
            while j < len(seen) and seen[j][0] < want:
                j += 1
            if j < len(seen):
                lat.append((seen[j][1] - t) / 1e6)
                by_press.setdefault(k, []).append(lat[-1])
    served = len(arrivals)
    sent = []  # press → the scene of its change handed to every page's socket
    for k, t in enumerate(pressed):
        when = min((w for q, w in written.items() if q >= seq0 + k + 1), default=None)
        if when is not None:
            sent.append((when - t) / 1e6)
    if DEBUG:
        print(server, pages, [round(statistics.median(by_press[k]), 1) for k in sorted(by_press)],
              file=sys.stderr)
    return {"pages": pages, "pages_served": served, "scenes": len(lat),
            **(quantiles(lat) if lat else {}),
            "written_to_every_page": quantiles(sent) if sent else None,
            "verdict": quantiles([x / 1e6 for x in times.ns]) if times.ns else None}


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its JSON line."""
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--n", type=int, default=150, help="slaps measured per row (default 150)")
    p.add_argument("--pages", type=int, default=500, help="pages of the big row (default 500)")
    p.add_argument("--no-rr", action="store_true",
                   help="leave out the rows run as deployed (round-robin real time)")
    args = p.parse_args(argv)
    result: dict[str, Any] = {
        "bench": "display_streams",
        "path": "GPIO edge -> pads -> journal (fsync) -> arbiter -> engine -> the referee's "
                "display scene -> server-sent events -> pages",
        "settle_ms": SETTLE_MS, "n": args.n,
    }
    big_row = f"aiohttp_{args.pages}"
    rows = [("threads_32", "threads", 32, None), ("aiohttp_32", "aiohttp", 32, None),
            (big_row, "aiohttp", args.pages, None)]
    if not args.no_rr:
        rows += [("threads_32_rr", "threads", 32, "rr"), (f"{big_row}_rr", "aiohttp", args.pages,
                                                          "rr")]
    for name, server, pages, policy in rows:
        with tempfile.TemporaryDirectory(prefix="display-streams-") as jdir, \
                unit_priority(policy, result):
            result[name] = asyncio.run(_run(server, pages, args.n, jdir))
    for base_row, row, key in (("threads_32", big_row, "p99_vs_baseline"),
                               ("threads_32_rr", f"{big_row}_rr", "p99_vs_baseline_rr")):
        base, big = result.get(base_row, {}), result.get(row, {})
        if "p99_ms" in base and "p99_ms" in big:
            result[key] = round(big["p99_ms"] / base["p99_ms"], 2)
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
