"""The findings of the audit of the running program (issue 36), each tried as the audit tried
it: a reverse proxy in front of the pages, the pairing code asked for by another site, the
pairing routes under another Host, a flood of event streams from one client, a handler that
fails, the wizard's camera, pads, folder and broker, and guessing from many addresses."""

from __future__ import annotations

import asyncio
import json
import logging
from pathlib import Path

import pytest
from aiohttp import web

import cardtable.webserver as webserver
from cardtable.display.view import TableView
from cardtable.display.web import WebDisplay
from cardtable.operator.pairing import WRONG_PER_CLIENT
from cardtable.operator.site import OperatorSite
from cardtable.webserver import SECURITY_HEADERS
from tests.cardtable.test_operator_site import client, fetch, with_site
from tests.cardtable.test_service import FakeTime, config, service

#: What a reverse proxy adds (one of them is enough to say "not the table's own screen").
PROXY_HEADERS = ({"X-Forwarded-For": "203.0.113.5"}, {"Forwarded": "for=203.0.113.5"},
                 {"X-Real-IP": "203.0.113.5"}, {"X-Forwarded-Host": "table.example"})


def wrong_code(site: OperatorSite) -> str:
    right = site.pairing.current(site.clock()).code
    return "000000" if right != "000000" else "111111"


# --------------------------------------------------------------- 2: behind a reverse proxy


def test_a_request_through_a_proxy_is_never_the_tables_own_screen(tmp_path: Path) -> None:
    """Behind a proxy on the same machine every request comes from 127.0.0.1: one that
    carries a proxy's header gets no code, and its wrong codes lock out neither the table's
    own screen nor the other phones behind the proxy."""

    async def check(site: OperatorSite, base: str) -> None:
        origin = {"Origin": base.rstrip("/")}
        async with client() as s:
            assert (await fetch(s, "GET", base + "pairing.json"))[0] == 200  # the screen
            for headers in PROXY_HEADERS:
                for route in ("pairing.json", "pairing.svg"):
                    status, body, _ = await fetch(s, "GET", base + route, headers=headers)
                    assert status == 404, (headers, route)
                    assert site.pairing.current(site.clock()).code.encode() not in (
                        body if isinstance(body, bytes) else b"")
            # Five wrong codes through the proxy (a forged first hop does not change whose
            # they are: the proxy's own, last, one counts).
            for k in range(WRONG_PER_CLIENT):
                forged = f"10.9.9.{k}, 203.0.113.5"
                status, answer, _ = await fetch(
                    s, "POST", base + "operator/api/pair", json={"code": wrong_code(site)},
                    headers={**origin, "X-Forwarded-For": forged})
                assert status == 403 and "wrong code" in answer["text"], answer
            status, answer, _ = await fetch(
                s, "POST", base + "operator/api/pair", json={"code": wrong_code(site)},
                headers={**origin, "X-Forwarded-For": "203.0.113.5"})
            assert status == 403 and "too many wrong codes" in answer["text"], answer
            # Another phone behind the proxy, and the table's own screen, still pair.
            status, answer, _ = await fetch(
                s, "POST", base + "operator/api/pair",
                json={"code": site.pairing.current(site.clock()).code},
                headers={**origin, "X-Forwarded-For": "203.0.113.6"})
            assert status == 200, answer
            status, answer, _ = await fetch(
                s, "POST", base + "operator/api/pair",
                json={"code": site.pairing.current(site.clock()).code}, headers=origin)
            assert status == 200, answer

    with_site(tmp_path, check)


# --------------------------------------------------------------- 12: show-code


def test_show_code_needs_the_pages_origin_is_limited_and_logs_a_code_once(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    async def check(site: OperatorSite, base: str) -> None:
        site.show_code(0)
        url = base + "operator/api/show-code"
        async with client() as s:
            for headers in ({}, {"Origin": "http://evil.example"}):
                status, answer, _ = await fetch(s, "POST", url, json={}, headers=headers)
                assert status == 403 and not answer["ok"], headers
            assert (await fetch(s, "GET", base + "pairing.json"))[0] == 404  # not shown
            origin = {"Origin": base.rstrip("/")}
            site.pairing.renew(site.clock())  # a code not logged yet (the first one was, at start)
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="cardtable.operator"):
                statuses = [(await fetch(s, "POST", url, json={}, headers=origin))[0]
                            for _ in range(12)]
            assert statuses[0] == 200 and (await fetch(s, "GET", base + "pairing.json"))[0] == 200
            assert 429 in statuses, statuses
            status, answer, headers = await fetch(s, "POST", url, json={}, headers=origin)
            assert status == 429 and answer["text"].startswith("asked too often")
            assert headers["X-Frame-Options"] == "DENY"
            code = site.pairing.current(site.clock()).code
            assert sum(code in r.getMessage() for r in caplog.records) == 1, caplog.text
            # The next code is logged once too.
            site.pairing.renew(site.clock())
            site._asked.clear()
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="cardtable.operator"):
                for _ in range(3):
                    await fetch(s, "POST", url, json={}, headers=origin)
            new = site.pairing.current(site.clock()).code
            assert sum(new in r.getMessage() for r in caplog.records) == 1

    with_site(tmp_path, check)


# --------------------------------------------------------------- 13: pairing routes' Host


def test_the_pairing_routes_answer_the_tables_own_names_only(tmp_path: Path) -> None:
    async def check(site: OperatorSite, base: str) -> None:
        async with client() as s:
            for route in ("pairing.json", "pairing.svg"):
                status, body, _ = await fetch(s, "GET", base + route,
                                              headers={"Host": "evil.example"})
                assert status == 421, route
                assert b"<svg" not in (body if isinstance(body, bytes) else b"")
                assert (await fetch(s, "GET", base + route))[0] == 200
            # The open display still answers any name (it shows nothing secret).
            assert (await fetch(s, "GET", base + "scene.json",
                                headers={"Host": "evil.example"}))[0] == 200

    with_site(tmp_path, check)



# --------------------------------------------------------------- 3: streams per client


async def _open_stream(port: int, headers: str = "") -> tuple[int, asyncio.StreamWriter]:
    """Ask for the display's stream on a connection of its own: the answer's status and the
    connection (kept open, as a page keeps it)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /events HTTP/1.1\r\nHost: 127.0.0.1\r\n{headers}\r\n".encode())
    head = await asyncio.wait_for(reader.readuntil(b"\r\n"), 5)
    return int(head.split()[1]), writer


def test_one_client_cannot_take_every_stream_or_the_operator_page(tmp_path: Path) -> None:
    """The audit's flood (a thousand streams and keep-alive connections from one client) made
    small: one client gets MAX_STREAMS_PER_CLIENT streams, the streams of all clients leave
    STREAM_RESERVE connections free, and the operator page and the wizard are served. (This
    machine's own browsers, the table's screen and the benchmarks, are not capped per client.)"""
    svc = service(config(tmp_path, game="banka-bever"), FakeTime())
    site = OperatorSite(svc, port=0, pairing_folder=svc.journal_dir,
                        config_path=tmp_path / "table.toml")
    site.server.max_connections = webserver.STREAM_RESERVE + 2 * webserver.MAX_STREAMS_PER_CLIENT
    svc.outputs.append(site)

    async def go() -> None:
        await site.start(svc)
        port = site.server.port
        kept: list[asyncio.StreamWriter] = []
        try:
            one = []  # one client behind a proxy on this machine (its address in the header)
            for _ in range(webserver.MAX_STREAMS_PER_CLIENT + 8):
                status, writer = await _open_stream(port, "X-Forwarded-For: 203.0.113.5\r\n")
                one.append(status)
                (kept.append(writer) if status == 200 else writer.close())
            assert one.count(200) == webserver.MAX_STREAMS_PER_CLIENT
            assert set(one[webserver.MAX_STREAMS_PER_CLIENT:]) == {503}
            # Others (each its own client) take the rest, up to the reserve.
            others = []
            for k in range(webserver.MAX_STREAMS_PER_CLIENT + 8):
                status, writer = await _open_stream(port, f"X-Forwarded-For: 10.0.{k}.1\r\n")
                others.append(status)
                (kept.append(writer) if status == 200 else writer.close())
            assert others.count(200) == webserver.MAX_STREAMS_PER_CLIENT, others
            assert site.budget.open == 2 * webserver.MAX_STREAMS_PER_CLIENT
            # The pages that change the table are served: the reserve is theirs.
            async with client() as s:
                for path in ("operator/", "setup/", "operator/api/session"):
                    assert (await fetch(s, "GET", site.url + path))[0] == 200, path
            for writer in kept:
                writer.close()
            kept.clear()
            await asyncio.sleep(0.3)
            assert site.budget.open == 0 and not site.budget.clients
        finally:
            for writer in kept:
                writer.close()
            await site.stop()
            svc.close()

    asyncio.run(go())


def test_a_client_holds_at_most_its_share_of_the_connections() -> None:
    """Idle keep-alive connections from one address stop at MAX_CONNECTIONS_PER_CLIENT (a
    reverse proxy on this machine is exempt: its clients are told apart per request)."""
    view = TableView("t1")

    async def go() -> tuple[int, int, int]:
        display = WebDisplay(view)
        display.server.exempt = lambda _address: False  # the test's client is 127.0.0.1
        async with display:
            port = display.server.port
            socks = []
            for _ in range(webserver.MAX_CONNECTIONS_PER_CLIENT + 10):
                _reader, writer = await asyncio.open_connection("127.0.0.1", port)
                socks.append(writer)
            await asyncio.sleep(0.3)
            guard = display.server.guard
            assert guard is not None
            held, refused = guard.open, guard.refused
            for writer in socks:
                writer.close()
            await asyncio.sleep(0.3)
            return held, refused, guard.open

    held, refused, after = asyncio.run(go())
    assert held == webserver.MAX_CONNECTIONS_PER_CLIENT and refused == 10 and after == 0
    from cardtable.webserver import is_loopback

    assert is_loopback("127.0.0.1") and not is_loopback("192.168.1.9")


# --------------------------------------------------------------- 11: a handler that fails


def test_a_handler_that_fails_answers_a_json_refusal_with_the_headers(
        caplog: pytest.LogCaptureFixture) -> None:
    async def broken(request: web.Request) -> web.StreamResponse:
        raise RuntimeError("a bug in a handler")

    async def go() -> tuple[int, bytes, dict[str, str]]:
        app = webserver.new_app()
        app.router.add_get("/broken", broken)
        server = await webserver.WebServer(app).start()
        try:
            async with client() as s, s.get(server.url + "broken") as r:
                return r.status, await r.read(), dict(r.headers)
        finally:
            await server.stop()

    with caplog.at_level(logging.ERROR, logger="cardtable.web"):
        status, body, headers = asyncio.run(go())
    assert status == 500
    answer = json.loads(body)
    assert answer["ok"] is False and "log" in answer["text"]
    assert "a bug in a handler" not in answer["text"]  # the why goes to the log only
    for name, value in SECURITY_HEADERS.items():
        assert headers.get(name) == value, name
    assert headers["Cache-Control"] == "no-store"
    assert any("a bug in a handler" in r.getMessage() or (
        r.exc_info and "a bug in a handler" in str(r.exc_info[1])) for r in caplog.records)
