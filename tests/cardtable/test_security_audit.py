"""The findings of the audit of the running program (issue 36), each tried as the audit tried
it: a reverse proxy in front of the pages, the pairing code asked for by another site, the
pairing routes under another Host, a flood of event streams from one client, a handler that
fails, the wizard's camera, pads, folder and broker, and guessing from many addresses."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from cardtable.operator.pairing import WRONG_PER_CLIENT
from cardtable.operator.site import OperatorSite
from tests.cardtable.test_operator_site import client, fetch, with_site

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

