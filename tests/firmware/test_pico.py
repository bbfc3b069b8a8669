"""The reference Pico firmware (firmware/pico/main.py), run on CPython: its codec against the
shared vectors, and its protocol logic against the host link in virtual time, with faults."""

import importlib.util
import random
from pathlib import Path

import pytest

from firmware_bridge.emulator import BoardClock, Faults, FaultyLine
from firmware_bridge.events import BoardEvent, LinkStatus
from firmware_bridge.link import LinkCore
from firmware_bridge.protocol import Led, LedPattern, Reader
from firmware_bridge.vectors import load_vectors

MS = 1_000_000
FIRMWARE = Path(__file__).resolve().parents[2] / "firmware" / "pico" / "main.py"


@pytest.fixture(scope="module")
def fw():
    spec = importlib.util.spec_from_file_location("pico_main", FIRMWARE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_firmware_codec_passes_the_shared_vectors(fw) -> None:
    assert fw.selftest(load_vectors()) == []


def test_firmware_selftest_can_fail(fw) -> None:
    vec = load_vectors()
    vec["frames"][0]["wire"] = vec["frames"][0]["wire"].replace("A5", "A6", 1)
    vec["crc16"]["vectors"][1]["crc"] = "0000"
    fails = fw.selftest(vec)
    assert any(f.startswith("crc") for f in fails) and any("hello" in f for f in fails)


class Bench:
    """Host LinkCore and the firmware on a faulty virtual line."""

    def __init__(self, fw, faults: Faults | None, drift_ppm: float, seed: int) -> None:
        self.t = 10**12
        self.rng = random.Random(seed)
        self.clock = BoardClock(drift_ppm, 2**32 - 3_000_000, self.t)
        self.to_host = FaultyLine(faults, self.rng, lambda: 60_000)
        self.to_board = FaultyLine(faults, self.rng, lambda: 60_000)
        self.leds: list[tuple] = []
        self.readers: list[tuple] = []
        self.board = fw.Firmware(
            ticks=lambda: self.clock.raw(self.t), ms=lambda: self.t // MS,
            write=lambda data: self.to_host.push(data, self.t), boot_id=self.rng.randrange(2**32),
            readers=2, seats=6, on_led=lambda *a: self.leds.append(a),
            on_reader=lambda *a: self.readers.append(a))
        self.link = LinkCore(boot_id=7)
        self.link.start(self.t)
        self.events: list = []

    def run(self, seconds: float, stop=None) -> bool:
        end = self.t + int(seconds * 1e9)
        while self.t < end:
            data = self.to_board.due(self.t)
            if data:
                self.board.on_bytes(data)
            self.board.poll()
            data = self.to_host.due(self.t)
            if data:
                self.link.receive(data, self.t)
            self.link.poll(self.t)
            out = self.link.take_output()
            if out:
                self.to_board.push(out, self.t)
            self.events += self.link.take_events()
            if stop is not None and stop():
                return True
            self.t += 200_000  # the firmware's main loop runs every 0.2 ms
        return False


def test_firmware_and_host_link_interoperate_under_faults(fw) -> None:
    bench = Bench(fw, Faults(corrupt=0.01, drop=0.01), drift_ppm=-100.0, seed=2)
    assert bench.run(10, lambda: bench.link.online)
    assert bench.link.board.name == "pico" and bench.link.board.seats == 6
    truth: dict[int, float] = {}
    n = 2000
    sent = 0

    def feed() -> None:
        nonlocal sent
        if sent < n and bench.board.pending() < 200:  # one per firmware loop: distinct ticks
            ticks = bench.clock.ticks(bench.t)
            truth[ticks & 0xFFFFFFFF] = bench.clock.host_ns(ticks)
            if sent % 2:
                bench.board.button(sent % 8, True, ticks)
            else:
                bench.board.card(sent % 2, sent.to_bytes(3, "big"), ticks)
            sent += 1

    commands = [Led(i % 6, (i, 0, 0), LedPattern.SOLID, 0) for i in range(40)] + [Reader(1, False)]
    for cmd in commands:
        bench.link.submit(cmd)

    def done() -> bool:
        feed()
        return sum(isinstance(e, BoardEvent) for e in bench.events) >= n

    assert bench.run(120, done)
    events = [e for e in bench.events if isinstance(e, BoardEvent)]
    assert len(events) == n
    assert len({e.ticks for e in events}) == n  # every one, once
    cards = sorted(int.from_bytes(e.tag, "big") for e in events if e.kind == "card")
    assert cards == list(range(0, n, 2))  # no damaged tag got through
    assert max(abs(e.t - truth[e.ticks]) for e in events) < 1 * MS  # ticks wrapped on the way
    bench.run(3, lambda: len(bench.leds) == 40 and bench.readers)
    assert bench.leds == [(i % 6, i, 0, 0, 1, 0) for i in range(40)]  # in order, once each
    assert bench.readers == [(1, False)]
    assert not [e for e in bench.events if isinstance(e, LinkStatus) and e.kind == "board_offline"]
    assert sum(bench.link.stats.bad_frames.values()) > 300 and bench.link.stats.duplicates > 10


def test_firmware_keeps_events_while_the_host_is_away(fw) -> None:
    bench = Bench(fw, None, drift_ppm=0.0, seed=3)
    assert bench.run(5, lambda: bench.link.online)
    saved = bench.to_board.push
    bench.to_board.push = lambda data, now: None  # the host's bytes stop arriving
    bench.board.button(2, True)
    bench.run(3)
    assert not bench.board.online()
    bench.to_board.push = saved
    assert bench.run(5, lambda: any(isinstance(e, BoardEvent) for e in bench.events))
    (ev,) = [e for e in bench.events if isinstance(e, BoardEvent)]
    assert ev.button == 2 and ev.pressed


def test_firmware_reports_a_full_queue(fw) -> None:
    bench = Bench(fw, None, drift_ppm=0.0, seed=4)
    for i in range(fw.QUEUE_LIMIT + 5):
        bench.board.button(1, True, i)
    assert bench.board.dropped == 5
    bench.run(5, lambda: any(getattr(e, "code", 0) == 5 for e in bench.events))
    (err,) = [e for e in bench.events if getattr(e, "code", 0) == 5]
    assert "5 events dropped" in err.text


def test_debounce_reports_the_first_edge_of_a_change_and_a_settled_level(fw) -> None:
    db = fw.Debounce([1, 1], quiet_us=5000)
    t0 = 2**32 - 2000  # the window crosses the 32-bit wrap
    assert db.edge(0, 0, t0) == 0  # pressed: reported, stamped at this first edge
    assert db.edge(0, 1, t0 + 300) is None and db.edge(0, 0, t0 + 700) is None  # bounce
    assert db.settle(0, 0, (t0 + 4999) & 0xFFFFFFFF) is None  # the window is still open
    assert db.settle(0, 0, (t0 + 5000) & 0xFFFFFFFF) is None and db.open == 0  # settled down
    assert db.edge(1, 0, 10) == 0 and db.edge(1, 1, 2000) is None  # a 2 ms press
    assert db.settle(1, 1, 5010) == 1  # released: reported once its window is over
    assert db.edge(1, 1, 20000) is None  # no change
    assert db.edge(1, 0, 30000) == 0 and db.level == [0, 0]
