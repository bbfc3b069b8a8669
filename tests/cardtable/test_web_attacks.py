"""The web pages attacked (issue 36, attack 2), beyond what the operator site's own tests try:
slowloris and a thousand half-open connections, five hundred streams, odd Host headers, and a
table id, a seat name or an option value that is markup, script or a stream's own framing."""

from __future__ import annotations

import asyncio
import json
import socket
import time
import urllib.request
from typing import Any

import pytest

import cardtable.webserver as webserver
from cardtable.display.view import TableView
from cardtable.display.web import WebDisplay
from referee.errors import visible

HOSTILE = ['<img src=x onerror="document.title=1">', "</script><script>alert(2)</script>",
           'x"}\n\ndata: {"table":"forged"}\n\n', "\u2028\u2029", "../../etc/passwd"]


def banka(**extra: Any) -> dict[str, Any]:
    state = {"game": "banka-bever", "seats": ["Anna", "Bo"], "counts": [20, 30], "pile": [],
             "turn": 0, "cards_played": 2, "tricks": 0, "out": [], "over": False,
             "winners": None, "session": "s", "seq": 3, "table": "t1"}
    state.update(extra)
    return state


def get(url: str, timeout: float = 5) -> tuple[int, bytes]:
    with urllib.request.urlopen(url, timeout=timeout) as answer:
        return answer.status, answer.read()


def connect(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port))
    sock.settimeout(5)
    return sock


def closed_by_server(sock: socket.socket, within: float) -> bool:
    """Whether the server closes ``sock`` within ``within`` seconds (it sends nothing)."""
    sock.settimeout(within)
    try:
        return sock.recv(1) == b""
    except (ConnectionResetError, BrokenPipeError):
        return True
    except TimeoutError:
        return False


@pytest.mark.slow
def test_slow_and_half_open_connections_hold_nothing_for_long() -> None:
    """Slowloris (headers sent a byte at a time) and connections that send nothing are closed
    once their first request is overdue; the page is served meanwhile, to others and after."""
    view = TableView("t1")

    async def go() -> dict[str, Any]:
        display = WebDisplay(view)
        display.server.first_request_s = 1.0
        async with display:
            port = display.server.port

            def attack() -> dict[str, Any]:
                slow = [connect(port) for _ in range(50)]
                idle = [connect(port) for _ in range(200)]
                for sock in slow:
                    sock.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # and never the end
                status, _ = get(f"http://127.0.0.1:{port}/")  # others are served meanwhile
                for _ in range(3):  # the slow ones go on, a header line now and then
                    time.sleep(0.2)
                    for sock in slow:
                        try:
                            sock.sendall(b"X-a: b\r\n")
                        except OSError:
                            pass
                result: dict[str, Any] = {"served": status}
                result["slow_closed"] = sum(closed_by_server(s, 3) for s in slow)
                result["idle_closed"] = sum(closed_by_server(s, 3) for s in idle)
                for sock in slow + idle:
                    sock.close()
                result["after"] = get(f"http://127.0.0.1:{port}/")[0]
                return result

            out = await asyncio.to_thread(attack)
            assert display.server.guard is not None
            out["timed_out"] = display.server.guard.timed_out
            return out

    got = asyncio.run(go())
    assert got["served"] == 200 and got["after"] == 200
    assert got["slow_closed"] == 50 and got["idle_closed"] == 200
    assert got["timed_out"] >= 250


@pytest.mark.slow
def test_a_flood_of_connections_stops_at_the_limit_and_the_page_comes_back() -> None:
    """A thousand connections that send nothing: never more than the limit open at once, the
    others closed as they come, and the page is served again once the flood is over."""
    view = TableView("t1")

    async def go() -> dict[str, Any]:
        display = WebDisplay(view)
        display.server.max_connections = 100
        display.server.first_request_s = 1.0
        async with display:
            port = display.server.port

            def flood() -> int:
                crowd = []
                for _ in range(1000):
                    try:
                        crowd.append(connect(port))
                    except OSError:
                        pass  # the backlog is full: the kernel refuses as well
                time.sleep(1.5)
                for sock in crowd:
                    sock.close()
                return get(f"http://127.0.0.1:{port}/")[0]

            after = await asyncio.to_thread(flood)
            guard = display.server.guard
            assert guard is not None
            return {"after": after, "peak": guard.peak, "limit": guard.limit,
                    "refused": guard.refused}

    got = asyncio.run(go())
    assert got["limit"] == 100 and got["peak"] == 100
    assert got["refused"] > 0 and got["after"] == 200


def test_the_connections_leave_the_journal_its_files(monkeypatch) -> None:
    """On a Pi a service may open 1 024 files: the pages take at most that less 256."""
    import resource

    monkeypatch.setattr(resource, "getrlimit", lambda _what: (1024, 4096))
    assert webserver.max_connections() == 1024 - webserver.RESERVED_FDS
    monkeypatch.setattr(resource, "getrlimit", lambda _what: (65536, 65536))
    assert webserver.max_connections() == webserver.MAX_STREAMS + 100


@pytest.mark.slow
def test_five_hundred_pages_follow_one_display() -> None:
    """500 streams at once: each gets the newest scene; memory stays bounded by the cut-off of
    a page that stops reading (MAX_BEHIND)."""
    view = TableView("t1")

    async def go() -> tuple[int, int]:
        async with WebDisplay(view) as display:
            port = display.server.port
            readers = []
            for _ in range(500):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(b"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
                readers.append((reader, writer))
            await asyncio.sleep(0.5)
            assert display.stream.streams == 500
            view.connected, view.status = True, "online"
            view.on_state(banka(seq=4))
            display.changed()
            got = 0
            for reader, _writer in readers:
                data = b""
                while b'"seq":4' not in data:
                    data += await asyncio.wait_for(reader.read(65536), 10)
                got += 1
            streams = display.stream.streams
            for _reader, writer in readers:
                writer.close()
            return got, streams

    got, streams = asyncio.run(go())
    assert got == 500 and streams == 500


def test_odd_host_headers_on_the_open_display() -> None:
    view = TableView("t1")

    async def go() -> list[bytes]:
        async with WebDisplay(view) as display:
            port = display.server.port

            def ask(host: bytes) -> bytes:
                with connect(port) as sock:
                    sock.sendall(b"GET / HTTP/1.1\r\nHost: " + host + b"\r\nConnection: close"
                                 b"\r\n\r\n")
                    data = b""
                    while chunk := sock.recv(65536):
                        data += chunk
                    return data

            hosts = [b"evil.example", b"", b"x" * 4000, b"127.0.0.1:1\r\nX-Injected: 1",
                     b"[::1]:80", "ünïcode.example".encode()]
            return [await asyncio.to_thread(ask, h) for h in hosts]

    for answer in asyncio.run(go()):
        head = answer.split(b"\r\n\r\n", 1)[0]
        status = int(head.split()[1])
        assert status in (200, 400), head[:200]
        assert b"X-Injected" not in head
        if status == 200:
            assert b"frame-ancestors 'none'" in head and b"nosniff" in head


def test_hostile_names_ids_and_values_stay_text_in_the_stream() -> None:
    """A table id, seat names and a verdict's reason that are markup, script or the stream's
    own framing come out of the scene stream as one JSON event with the very text in it."""
    for hostile in HOSTILE:
        view = TableView(hostile)
        view.connected, view.status = True, "online"
        view.on_state(banka(table=hostile, seats=[hostile, "Bo"]))
        view.on_event({"session": "s", "seq": 4, "t": 1, "verdict": "illegal", "seat": 0,
                       "code": "not_your_turn", "reason": hostile})

        async def go(view: TableView = view) -> list[dict[str, Any]]:
            async with WebDisplay(view) as display:
                def read() -> list[dict[str, Any]]:
                    with urllib.request.urlopen(display.url + "events", timeout=5) as stream:
                        events: list[dict[str, Any]] = []
                        while not events:
                            line = stream.readline()
                            if line.startswith(b"data: "):
                                events.append(json.loads(line[6:]))
                            else:
                                assert line in (b"\n", b"retry: 500\n"), line
                        return events

                return await asyncio.to_thread(read)

        [scene] = asyncio.run(go())
        assert scene["table"] == hostile
        # drawn as text, its control characters as U+FFFD (test_terminal_injection.py)
        assert scene["seats"][0]["name"] == visible(hostile)
        assert any(visible(hostile) in v for v in scene["verdicts"]) or any(
            visible(hostile) in str(v) for v in scene["verdicts"])
