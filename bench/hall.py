"""The hall with many live tables (issue 13): every table's latest state shown within 1 s of
its publication. Prints one JSON line.

``--tables`` seeded tables (default 50) publish at once through their real ``TableFeed`` to one
private Mosquitto, each a change every ``--interval`` seconds, for ``--seconds``. ``referee
display --hall --web`` runs as its own process; what it *shows* is measured twice:

- ``stream_*``: on its ``/events`` stream (a reader in this process), the moment a hall scene
  holds the table at that ``seq`` or newer;
- ``page_*``: in headless Chromium on the hall page, the moment ``drawHall`` drew the table at
  that ``seq`` or newer (wrapped in the page, times on the page's clock; skipped with
  ``--no-browser`` or without Chromium).

Latency = that moment − the moment the change was handed to ``publish()``, for every change
(a change the hall skipped counts as shown once a newer one is). ``lost``: tables whose last
``seq`` never reached the hall (the bench then fails). CPU over the run, from
``/proc/<pid>/stat``: the broker, the hall process, and the browser (every Chromium process).
The baseline, in the same run: a plain MQTT subscriber to ``cardtable/+/state`` (this
process), publication → arrival.

    python3 bench/hall.py [--tables 50] [--interval 0.5] [--seconds 20] [--no-browser]
"""

from __future__ import annotations

import argparse
import asyncio
import bisect
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # tests.broker, tests.hall_tables

import aiomqtt  # noqa: E402

from cardtable.feed import parse_broker_url  # noqa: E402
from tests.broker import make_broker  # noqa: E402
from tests.hall_tables import run_tables  # noqa: E402

TARGET_MS = 1000.0
TICK = os.sysconf("SC_CLK_TCK")

#: Wraps the page's drawHall: records, for each table, when each new seq was first drawn.
PAGE_PROBE = """
(() => {
  window.__seen = []; const last = {}; const draw = drawHall;
  drawHall = function (sc) {
    draw(sc);
    const t = performance.timeOrigin + performance.now();
    if (sc) for (const x of sc.tables) {
      if (last[x.table] !== x.seq) {
        last[x.table] = x.seq; window.__seen.push([x.table, x.seq, t]);
      }
    }
  };
  return true;
})()
"""


def cpu_ticks(pid: int) -> int:
    """utime + stime of a process, in clock ticks (0 once it is gone)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0
    return int(fields[11]) + int(fields[12])


def tree(pid: int) -> list[int]:
    """``pid`` and all its descendants."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            ppid = int(Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, IndexError, ValueError):
            continue
        children.setdefault(ppid, []).append(int(entry))
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += children.get(p, [])
    return out


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    values = sorted(values)
    return values[min(len(values) - 1, int(round(q / 100 * (len(values) - 1))))]


def latencies(published: list[tuple[str, int, float]],
              shown: dict[str, list[tuple[float, int]]]) -> tuple[list[float], int]:
    """For every publication, ms until the table was shown at that seq or newer; and how
    many publications were never shown."""
    by_change = latency_by_change(published, shown)
    return list(by_change.values()), len(published) - len(by_change)


def latency_by_change(published: list[tuple[str, int, float]],
                      shown: dict[str, list[tuple[float, int]]]) -> dict[tuple[str, int], float]:
    """ms from each publication (table, seq) until it was shown at that seq or newer."""
    out: dict[tuple[str, int], float] = {}
    for points in shown.values():
        points.sort()
    best: dict[str, tuple[list[float], list[int]]] = {}
    for table, points in shown.items():
        times, seqs, top = [], [], 0
        for t, seq in points:
            if seq > top:  # the running maximum: shown at seq or newer from t on
                top = seq
                times.append(t)
                seqs.append(seq)
        best[table] = (times, seqs)
    for table, seq, t_pub in published:
        times, seqs = best.get(table, ([], []))
        i = bisect.bisect_left(seqs, seq)
        if i < len(seqs):
            out[(table, seq)] = max(0.0, times[i] - t_pub) * 1000
    return out


class StreamReader(threading.Thread):
    """Reads the hall's /events (server-sent events): (time, table, seq) of every scene."""

    def __init__(self, url: str) -> None:
        super().__init__(daemon=True)
        self.url = url
        self.shown: dict[str, list[tuple[float, int]]] = {}
        self.scenes = 0
        self.stop = False

    def run(self) -> None:
        with urllib.request.urlopen(self.url, timeout=30) as stream:
            for raw in stream:
                if self.stop:
                    return
                if not raw.startswith(b"data: "):
                    continue
                now = time.time()
                scene = json.loads(raw[6:])
                self.scenes += 1
                for t in scene["tables"]:
                    self.shown.setdefault(t["table"], []).append((now, t["seq"]))


async def baseline_subscriber(url: str, shown: dict[str, list[tuple[float, int]]],
                              stop: asyncio.Event) -> None:
    async with aiomqtt.Client(**parse_broker_url(url).client_kwargs()) as client:
        await client.subscribe("cardtable/+/state", qos=1)
        messages = aiter(client.messages)
        stopper = asyncio.create_task(stop.wait())
        while True:
            nxt = asyncio.ensure_future(anext(messages))
            done, _ = await asyncio.wait({nxt, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if nxt not in done:
                nxt.cancel()
                return
            m = nxt.result()
            assert isinstance(m.payload, bytes)
            seq = json.loads(m.payload).get("seq") or 0
            shown.setdefault(m.topic.value.split("/")[1], []).append((time.time(), seq))


def browser(url: str, profile: Path) -> Any:
    """Headless Chromium on the hall page with the probe, or None without Chromium."""
    try:
        from tests.web_pages import Chromium
    except ImportError:
        return None
    binary = next((p for p in ("/usr/bin/chromium", "/usr/bin/chromium-browser")
                   if os.path.exists(p)), None)
    if binary is None:
        return None
    page = Chromium(binary, profile, 1600, 900)
    page.goto(url)
    page.wait("typeof drawHall === 'function'")
    page.js(PAGE_PROBE)
    return page


def summary(values: list[float]) -> dict[str, float]:
    return {"p50_ms": round(percentile(values, 50), 1), "p99_ms": round(percentile(values, 99), 1),
            "max_ms": round(max(values), 1) if values else float("nan")}


def publisher(url: str, n: int, interval: float, seconds: float, out: str) -> int:
    """The tables' process: prints ``ready`` once all are connected and ``played`` after the
    last change, then writes every publication (table, seq, time.time()) to ``out``."""
    published: list[tuple[str, int, float]] = []
    offset = time.time() - time.monotonic()

    async def go() -> dict[str, int]:
        ready = asyncio.Event()
        play = asyncio.create_task(run_tables(
            url, n, interval=interval, duration=seconds, ready=ready,
            on_publish=lambda t, s, at: published.append((t, s, at + offset))))
        await ready.wait()
        print("ready", flush=True)
        last = await play
        print("played", flush=True)
        return last

    last = asyncio.run(go())
    Path(out).write_text(json.dumps({"last": last, "published": published}))
    return 0


def main() -> int:
    if sys.argv[1:2] == ["--publisher"]:
        url, n, interval, seconds, out = sys.argv[2:7]
        return publisher(url, int(n), float(interval), float(seconds), out)
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=50)
    ap.add_argument("--interval", type=float, default=0.5,
                    help="seconds between two changes of one table (default 0.5)")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--no-browser", action="store_true")
    args = ap.parse_args()

    work = Path(tempfile.mkdtemp(prefix="bench-hall-"))
    broker = make_broker(work / "mosquitto")
    broker.start()
    assert broker.proc is not None
    hall = subprocess.Popen(
        [sys.executable, "-m", "cardtable.cli", "display", "--hall", "--web", "--port", "0",
         "--broker", broker.url("display")],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)})
    page = None
    try:
        assert hall.stdout is not None
        match = re.search(r"http://127\.0\.0\.1:\d+/", hall.stdout.readline())
        if not match:
            sys.exit("hall: referee display --hall --web did not start: "
                     + (hall.stderr.read() if hall.stderr else ""))
        base = match.group(0)
        reader = StreamReader(base + "events")
        reader.start()
        if not args.no_browser:
            page = browser(base, work / "profile")
        plain: dict[str, list[tuple[float, int]]] = {}
        marks: dict[str, Any] = {}
        record = work / "published.json"

        async def go() -> None:
            stop = asyncio.Event()
            sub = asyncio.create_task(baseline_subscriber(broker.url("display"), plain, stop))
            # The tables publish from a process of their own, as tables do from their Pis.
            tables = await asyncio.create_subprocess_exec(
                sys.executable, __file__, "--publisher", broker.url(), str(args.tables),
                str(args.interval), str(args.seconds), str(record),
                stdout=asyncio.subprocess.PIPE, cwd=ROOT)
            assert tables.stdout is not None
            if (await tables.stdout.readline()).strip() != b"ready":
                sys.exit("hall: the tables could not connect")
            pids = {"broker": [broker.proc.pid], "hall": [hall.pid],  # type: ignore[union-attr]
                    "tables": [tables.pid],
                    "page": tree(page.proc.pid) if page is not None else []}
            marks["pids"] = pids
            marks["t0"] = time.monotonic()
            marks["ticks0"] = {k: sum(cpu_ticks(p) for p in v) for k, v in pids.items()}
            await tables.stdout.readline()  # "played": the last change is handed over
            marks["t1"] = time.monotonic()
            marks["ticks1"] = {k: sum(cpu_ticks(p) for p in v) for k, v in pids.items()}
            await tables.wait()
            await asyncio.sleep(1.0)  # the last scenes come in
            stop.set()
            await sub

        asyncio.run(go())
        done = json.loads(record.read_text())
        last: dict[str, int] = done["last"]
        published = [(t, s, at) for t, s, at in done["published"]]
        reader.stop = True
        wall = marks["t1"] - marks["t0"]
        cpu = {k: round(100 * (marks["ticks1"][k] - marks["ticks0"][k]) / TICK / wall, 1)
               for k in marks["pids"]}
        stream, stream_missing = latencies(published, reader.shown)
        base_lat, _ = latencies(published, plain)
        final_shown = {t: max((s for _, s in pts), default=0)
                       for t, pts in reader.shown.items()}
        lost = sorted(t for t, seq in last.items() if final_shown.get(t, 0) < seq)
        out: dict[str, Any] = {
            "bench": "hall", "tables": args.tables,
            "changes_per_s": round(args.tables / args.interval, 1),
            "seconds": round(wall, 1), "changes": len(published),
            "stream": summary(stream), "stream_within_1s": round(
                sum(x <= TARGET_MS for x in stream) / max(1, len(stream)), 4),
            "hall_scenes": reader.scenes, "lost": len(lost),
            "cpu_pct": {"broker": cpu["broker"], "hall": cpu["hall"], "tables": cpu["tables"]},
        }
        if page is not None:
            seen = page.js("window.__seen") or []
            page_shown: dict[str, list[tuple[float, int]]] = {}
            for table, seq, t_ms in seen:
                page_shown.setdefault(table, []).append((t_ms / 1000, seq))
            page_lat, _ = latencies(published, page_shown)
            out["page"] = summary(page_lat)
            out["page_within_1s"] = round(
                sum(x <= TARGET_MS for x in page_lat) / max(1, len(page_lat)), 4)
            out["cpu_pct"]["page"] = cpu["page"]
        else:
            out["page"] = None
        # The hall's own share: its latency minus the plain subscriber's, change by change
        # (what both share, a busy publisher or machine, cancels out).
        hall_by = latency_by_change(published, reader.shown)
        plain_by = latency_by_change(published, plain)
        own = [hall_by[k] - plain_by[k] for k in hall_by if k in plain_by]
        out["stream_over_baseline"] = {"p50_ms": round(percentile(own, 50), 1),
                                       "p99_ms": round(percentile(own, 99), 1)}
        out["target_ms"] = TARGET_MS
        out["within_target"] = bool(stream) and percentile(stream, 99) <= TARGET_MS and (
            page is None or percentile(page_lat, 99) <= TARGET_MS)
        out["baseline"] = {"mqtt_subscriber": summary(base_lat)}
        print(json.dumps(out), flush=True)
        if lost:
            print(f"hall: {len(lost)} tables never shown at their last state: {lost[:5]}",
                  file=sys.stderr)
            return 1
        return 0
    finally:
        if page is not None:
            page.close()
        hall.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            hall.wait(5)
        broker.stop()


if __name__ == "__main__":
    sys.exit(main())
