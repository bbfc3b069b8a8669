"""The real link on a real pty: the emulator on the master end, pyserial-asyncio-fast on the
slave end, faults on the bytes in between."""

import asyncio
import json
import os
import subprocess
import sys
import time

import pytest

from firmware_bridge.deck import synthetic_deck
from firmware_bridge.emulator import Faults, FaultyLine, Script, VirtualBoard
from firmware_bridge.events import BoardEvent, LinkStatus
from firmware_bridge.link import Link
from firmware_bridge.protocol import (
    ALL,
    BuzzerPattern,
    Frame,
    Led,
    LedPattern,
    StreamDecoder,
    TimeSyncReply,
)
from firmware_bridge.sim import SimulatedLink
from referee.cards import Card, full_deck

MS = 1_000_000

pytestmark = pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs a pty")


def run(coro, timeout: float = 60):
    async def guarded():
        return await asyncio.wait_for(coro, timeout)
    return asyncio.run(guarded())


async def _pair(**board_kw) -> tuple[VirtualBoard, Link]:
    deck = board_kw.pop("deck", synthetic_deck())
    board = VirtualBoard(deck=deck, **board_kw)
    path = await board.start()
    link = Link(path, deck=deck)
    await link.open()
    await link.wait_online(10)
    return board, link


async def _events(link: Link, n: int) -> list[BoardEvent]:
    out: list[BoardEvent] = []
    while len(out) < n:
        ev = await link.next_event(10)
        if isinstance(ev, BoardEvent):
            out.append(ev)
    return out


def test_handshake_card_read_and_commands() -> None:
    async def body() -> None:
        board, link = await _pair(seed=1, readers=2, seats=6)
        try:
            assert link.board is not None and link.board.readers == 2 and link.board.seats == 6
            (status,) = [await link.next_event(1)]
            assert isinstance(status, LinkStatus) and status.kind == "board_online"
            before = time.monotonic_ns()
            board.lay(Card.parse("QH"), reader=1)
            (ev,) = await _events(link, 1)
            assert ev.kind == "card" and ev.card == Card.parse("QH") and ev.reader == 1
            # The board's ticks become table time through the clock sync, whose error bound
            # the event carries: a stamp may lie that far after now (once 0.57 ms, bound
            # 2.75 ms, on a loaded CI machine).
            assert before - 2 * MS - ev.error_ns < ev.t <= time.monotonic_ns() + ev.error_ns
            assert ev.to_input(seat=3).to_json() == {"t": ev.t, "seat": 3, "act": "lay",
                                                     "card": "QH"}
            board.press(5, True)
            (ev,) = await _events(link, 1)
            assert (ev.kind, ev.button, ev.pressed) == ("button", 5, True)
            assert ev.to_input(seat=1).act == "slap"

            link.set_led(2, (0, 255, 0), LedPattern.BLINK, 500)
            link.set_led(ALL, (9, 9, 9))
            link.buzz(BuzzerPattern.CHIRP, 2500, 60)
            link.set_reader(0, False)
            for _ in range(200):
                if len(board.core.commands) == 4:
                    break
                await asyncio.sleep(0.01)
            assert board.core.leds[2] == Led(ALL, (9, 9, 9))
            assert board.core.commands[0] == Led(2, (0, 255, 0), LedPattern.BLINK, 500)
            assert board.core.buzzes[0].pattern == BuzzerPattern.CHIRP
            assert board.core.readers_on == {0: False, 1: True}
            assert not board.lay(Card.parse("2C"), reader=0)  # that reader is off
        finally:
            await link.close()
            await board.close()

    run(body())


def _fault_run(n: int, faults: Faults, seed: int) -> tuple[list[BoardEvent], Link, VirtualBoard]:
    async def body():
        board, link = await _pair(faults=faults, seed=seed, drift_ppm=80,
                                  tick_start=2**32 - 2_000_000)
        try:
            tags = [i.to_bytes(4, "big") + b"\x00\xa5" for i in range(n)]
            events: list[BoardEvent] = []

            async def feed() -> None:
                for i, tag in enumerate(tags):
                    board.read_tag(tag, i % 4)
                    if i % 64 == 63:
                        await asyncio.sleep(0)
                        while board.core.sender.pending > 256:
                            await asyncio.sleep(0.002)

            feeder = asyncio.ensure_future(feed())
            online = False
            while len(events) < n:
                ev = await link.next_event(20)
                if isinstance(ev, BoardEvent):
                    events.append(ev)
                elif isinstance(ev, LinkStatus) and ev.kind == "board_online":
                    online = True
                elif isinstance(ev, LinkStatus) and ev.kind == "board_offline" and online:
                    # an offline said before the first online is a handshake slower than
                    # lost_after_s on a loaded machine (the faults hit hellos too), not a loss
                    raise AssertionError(f"went offline: {ev.reason}")
            await feeder
            # Anything left would be a double: give resends time to show up.
            await asyncio.sleep(0.3)
            while not link._queue.empty():
                ev = link._queue.get_nowait()
                if isinstance(ev, BoardEvent):
                    events.append(ev)
            return events, link, board
        finally:
            await link.close()
            await board.close()

    return run(body(), timeout=120)


@pytest.mark.slow
def test_10000_card_reads_over_the_pty_with_1pct_corrupt_and_1pct_dropped_bytes() -> None:
    n = 10_000
    events, link, board = _fault_run(n, Faults(corrupt=0.01, drop=0.01, seed=4), seed=4)
    tags = sorted(e.tag for e in events)
    assert len(events) == n  # none lost, none doubled ...
    assert tags == sorted(i.to_bytes(4, "big") + b"\x00\xa5" for i in range(n))  # none damaged
    for e in events:
        assert e.reader == int.from_bytes(e.tag[:4], "big") % 4
    assert board.line_out.stats["corrupted"] > 1000 and board.line_out.stats["dropped"] > 1000
    assert sum(link.stats.bad_frames.values()) > 1000 and link.stats.duplicates > 0


@pytest.mark.slow
def test_duplicated_and_delayed_bytes() -> None:
    n = 1500
    faults = Faults(corrupt=0.005, drop=0.005, duplicate=0.01, delay=0.002, delay_ms=8, seed=9)
    events, link, board = _fault_run(n, faults, seed=9)
    assert len(events) == n and len({e.tag for e in events}) == n
    assert board.line_out.stats["duplicated"] > 50 and board.line_out.stats["delayed"] > 10


@pytest.mark.slow
def test_cable_pulled_goes_offline_keeps_events_and_comes_back_online() -> None:
    async def body() -> None:
        board, link = await _pair(seed=2)
        seen: list[str] = []
        link.add_listener(lambda ev: seen.append(getattr(ev, "kind", "")))
        try:
            board.mute(True)
            board.press(1, True)  # happens while the cable is out
            while True:
                ev = await link.next_event(5)
                if isinstance(ev, LinkStatus) and ev.kind == "board_offline":
                    break
            assert not link.online and "no frame from the board" in ev.reason
            board.mute(False)
            got = []
            while not got:
                ev = await link.next_event(5)
                if isinstance(ev, BoardEvent):
                    got.append(ev)
            assert link.online and got[0].button == 1
            assert seen.count("board_offline") == 1 and seen.count("board_online") >= 1
            assert seen.index("board_offline") < len(seen) - 1 - seen[::-1].index("board_online")
        finally:
            await link.close()
            await board.close()

    run(body())


@pytest.mark.parametrize("ppm", [-100.0, 100.0])
@pytest.mark.slow
def test_clock_sync_over_the_pty_within_its_reported_bound(ppm: float) -> None:
    """Board ticks onto the host clock over the real pty (±100 ppm drift, across the 32-bit
    wrap): every event lies within the error bound the sync reports for it, and the sync gets
    that bound under 1 ms.

    The bound is the one that holds on a loaded machine, where a fixed 1 ms does not. Board and
    link share this process: when it is descheduled between writing a time-sync request (t1) and
    reading the reply (t4), the round trip grows by the stall. The stamps still bracket the
    board's instant (t1 is taken before the write, t4 after the read), so the truth stays within
    rtt / 2 of the exchange's middle. The reported bound is made of that half round trip (the
    scheduling delay included), the fit's residuals, and the crystal's tolerance (200 ppm) times
    the distance to the exchanges: it widens with the delay instead of being broken by it. The
    old fixed 1 ms failed on the first event, mapped while only the first exchange of the
    handshake burst was back, its round trip 2-5 ms under load: 1.1-2.4 ms off, within its bound.
    1 ms is asserted with the timing controlled in the next test; here a loaded machine stalls
    some exchanges, not all of them for seconds, so the test waits (up to 100 presses) for an
    event whose bound is under 1 ms.
    """
    async def body() -> None:
        board, link = await _pair(seed=3, drift_ppm=ppm, tick_start=2**32 - 1_500_000)
        try:
            truth: dict[int, float] = {}

            def press(i: int) -> None:
                ticks = board.clock.ticks(time.monotonic_ns())
                truth[ticks & 0xFFFFFFFF] = board.clock.host_ns(ticks)
                board.press(i % 4, bool(i % 2), ticks)

            for i in range(150):  # 3 s: crosses the 32-bit wrap
                press(i)
                await asyncio.sleep(0.02)
            events = await _events(link, 150)
            assert all(abs(e.t - truth[e.ticks]) <= e.error_ns for e in events)
            for i in range(150, 250):
                press(i)
                (ev,) = await _events(link, 1)
                assert abs(ev.t - truth[ev.ticks]) <= ev.error_ns
                if ev.error_ns < 1 * MS:
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError(f"no event with a bound under 1 ms: {ev.error_ns} ns")
        finally:
            await link.close()
            await board.close()

    run(body())


def _stall_first_sync_reply(monkeypatch: pytest.MonkeyPatch, line: FaultyLine,
                            stall_ns: int) -> None:
    """The host reads the board's first TIME_SYNC reply (and what follows it) ``stall_ns``
    late, as when its process is descheduled right then."""
    push, decoder, stalled = line.push, StreamDecoder(), []

    def push_stalled(data: bytes, now: int) -> None:
        if not stalled and any(isinstance(f, Frame) and isinstance(f.msg, TimeSyncReply)
                               for f in decoder.feed(data)):
            stalled.append(now)
            now += stall_ns
        push(data, now)

    monkeypatch.setattr(line, "push", push_stalled)


@pytest.mark.parametrize("ppm", [-100.0, 100.0])
def test_clock_sync_in_virtual_time_within_1ms_after_a_stalled_first_exchange(
        ppm: float, monkeypatch: pytest.MonkeyPatch) -> None:
    """The pty run above with the timing controlled (:mod:`firmware_bridge.sim`, so the same
    every time): the same board (drift, ticks across the wrap), each write delayed as on a pty
    (50 µs + exp(150 µs)), the first time-sync reply read 5 ms late as on a loaded machine, a
    press every 20 ms from the moment the link is online, for 60 s. The first event is mapped
    on that one exchange alone: over 1 ms off, and within its bound. Every later one is within
    1 ms and its bound, and within 200 µs once the drift is measured (left uncorrected, 100 ppm
    would put the last ones ~3 ms off)."""
    sim = SimulatedLink(drift_ppm=ppm, tick_start=2**32 - 1_500_000, seed=3,
                        latency_ns=lambda r: int(50_000 + r.expovariate(1 / 150_000)))
    _stall_first_sync_reply(monkeypatch, sim.to_host, 5 * MS)
    assert sim.run_for(2, lambda: sim.link.online)
    truth: dict[int, int] = {}
    t0 = sim.t

    def press(i: int) -> None:
        ticks = sim.board_clock.ticks(sim.t)
        truth[ticks & 0xFFFFFFFF] = round(sim.board_clock.host_ns(ticks))
        sim.board.button(i % 4, bool(i % 2), ticks)

    for i in range(3000):
        sim.at(t0 + i * 20 * MS, lambda i=i: press(i))
    sim.run_for(61)
    events = [e for e in sim.events if isinstance(e, BoardEvent)]
    assert len(events) == 3000
    errors = [abs(e.t - truth[e.ticks]) for e in events]
    assert all(err <= e.error_ns for err, e in zip(errors, events, strict=True))
    assert errors[0] > 1 * MS and events[0].error_ns > 1 * MS  # the stalled exchange alone
    assert max(errors[1:]) < 1 * MS
    assert max(errors[-1000:]) < 200_000
    assert sim.link.clock.estimate.drift_ppm == pytest.approx(ppm, abs=1)


def test_script_lays_cards_presses_buttons_and_pulls_the_cable(tmp_path) -> None:
    script_file = tmp_path / "s.json"
    script_file.write_text(json.dumps({"events": [
        {"at": 0.05, "lay": "QH", "reader": 2},
        {"at": 0.10, "press": 4, "hold": 0.05},
        {"at": 0.20, "tag": "DEADBEEF"},
        {"at": 0.25, "mute": 0.1},
        {"at": 0.30, "lay": "10S"},
    ]}))

    async def body() -> None:
        board, link = await _pair(seed=5, drift_ppm=50)
        try:
            t0 = board.clock.ticks(time.monotonic_ns())
            await board.run_script(Script.load(script_file, board.deck))
            events = sorted(await _events(link, 5), key=lambda e: e.t)
            assert [(e.kind, str(e.card) if e.card else e.tag_hex or e.pressed)
                    for e in events] == [("card", "QH"), ("button", True), ("button", False),
                                         ("card", "DEADBEEF"), ("card", "10S")]
            assert events[0].reader == 2 and events[3].card is None
            gap = (events[2].t - events[1].t) / 1e9
            assert gap == pytest.approx(0.05 / (1 + 50e-6), abs=0.001)
            assert (events[4].ticks - t0) % 2**32 >= 300_000
        finally:
            await link.close()
            await board.close()

    run(body())


def test_a_port_that_cannot_open_raises() -> None:
    async def body() -> None:
        link = Link("/nonexistent/tty")
        with pytest.raises(Exception, match="nonexistent"):
            await link.open()

    run(body())


def test_emulate_command_on_a_pty(tmp_path) -> None:
    script = tmp_path / "script.json"
    cards = full_deck()[:10]
    script.write_text(json.dumps([{"at": 0.02 * i, "lay": str(c)} for i, c in enumerate(cards)]))
    proc = subprocess.Popen(
        [sys.executable, "-m", "firmware_bridge.cli", "emulate", "--script", str(script),
         "--drift-ppm", "100", "--corrupt", "0.5%", "--drop", "0.5%", "--seed", "1",
         "--exit-after-script"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        path = proc.stdout.readline().strip()
        assert path.startswith("/dev/")

        async def body() -> list[BoardEvent]:
            async with Link(path, deck=synthetic_deck()) as link:
                await link.wait_online(10)
                return await _events(link, len(cards))

        events = run(body())
        assert [e.card for e in sorted(events, key=lambda e: e.t)] == cards
        assert proc.wait(timeout=20) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()


def test_link_opens_a_pyserial_socket_url() -> None:
    """socket://host:port (e.g. a board behind ser2net): the same link over TCP."""
    from firmware_bridge.emulator import BoardClock, BoardCore

    async def body() -> None:
        core = BoardCore(BoardClock(50.0, 123, time.monotonic_ns()), time.monotonic_ns,
                         boot_id=99)

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            core.boot()

            async def timers() -> None:
                while True:
                    core.poll()
                    writer.write(core.take_output())
                    await asyncio.sleep(0.002)

            task = asyncio.ensure_future(timers())
            try:
                while data := await reader.read(4096):
                    core.receive(data)
                    core.poll()
                    writer.write(core.take_output())
            finally:
                task.cancel()

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port = server.sockets[0].getsockname()[1]
        try:
            async with Link(f"socket://127.0.0.1:{port}", deck=synthetic_deck()) as link:
                await link.wait_online(10)
                core.card_read(synthetic_deck().tag_for(Card.parse("7D")), 0)
                (ev,) = await _events(link, 1)
                assert ev.card == Card.parse("7D") and link.board.boot_id == 99
        finally:
            server.close()

    run(body())


def test_board_event_to_input() -> None:
    qh = Card.parse("QH")
    card = BoardEvent("card", 5_000, 77, reader=0, tag=b"\x04\x01", card=qh)
    assert card.to_input(2).to_json() == {"t": 5_000, "seat": 2, "act": "lay", "card": "QH"}
    assert card.to_input(2, "play").to_json()["cards"] == ["QH"]
    unknown = BoardEvent("card", 5_000, 77, reader=0, tag=b"\x04\x01")
    assert unknown.to_input(1).card is None and "unknown tag (0401)" in unknown.describe()
    with pytest.raises(ValueError, match="0401"):
        unknown.to_input(1, "play")
    press = BoardEvent("button", 6_000, 78, button=3, pressed=True)
    assert press.to_input(0).to_json() == {"t": 6_000, "seat": 0, "act": "slap"}
    assert press.to_input(0, "call").act == "call"


def test_board_progress_never_passes_an_event_still_to_come() -> None:
    """The board as an arbiter source: with 1 % corrupted and 1 % dropped bytes (so events are
    resent and come late), every event the link delivers is stamped after the progress the link
    reported before it; and the progress keeps up with the heartbeats (200 ms apart)."""
    sim = SimulatedLink(faults=Faults(corrupt=0.01, drop=0.01), drift_ppm=50, seed=11)
    assert sim.run_for(3, lambda: sim.link.online)
    t0 = sim.t
    for i in range(1500):
        sim.at(t0 + i * 7 * MS, lambda i=i: sim.board.button(i % 4, bool(i % 2)))
    seen = 0
    before: list[int | None] = [sim.link.progress_ns]
    violations = []
    lags = []

    def check() -> bool:
        nonlocal seen
        new = [e for e in sim.events[seen:] if isinstance(e, BoardEvent)]
        seen = len(sim.events)
        p = before[-1]
        violations.extend(e for e in new if p is not None and e.t <= p)
        if sim.link.progress_ns is not None:
            lags.append(sim.t - sim.link.progress_ns)
        before.append(sim.link.progress_ns)
        return False

    sim.run_until(t0 + 12 * 1_000 * MS, check)
    delivered = [e for e in sim.events if isinstance(e, BoardEvent)]
    assert len(delivered) == 1500 and not violations
    assert sim.link.progress_ns is not None and sim.link.progress_ns > t0 + 10_000 * MS
    lags.sort()
    assert lags[len(lags) // 2] < 400 * MS  # typically within two heartbeats of now
