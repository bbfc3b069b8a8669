"""The operator site's guards without a browser (issue 34, and the groundwork of issue 36):
pairing codes and their limits, sessions, CSRF and origin, the Host, request sizes, the
security headers on every answer, no file outside the pages' own, and the code on the table's
own screen only."""

from __future__ import annotations

import asyncio
import ipaddress
import json
import os
import stat
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from cardtable.errors import PairingRefused
from cardtable.operator.pairing import (
    CODE_MAX_WRONG,
    SESSION_TTL_S,
    WRONG_PER_CLIENT,
    WRONG_WINDOW_S,
    Pairing,
)
from cardtable.operator.site import OperatorSite
from cardtable.webserver import SECURITY_HEADERS
from tests.cardtable.test_service import FakeTime, config, service

# --------------------------------------------------------------------------- pairing


def test_a_code_pairs_one_phone_and_is_then_replaced(tmp_path: Path) -> None:
    pairing = Pairing(tmp_path, now=1000.0)
    code, before = pairing.current(1000.0).code, pairing.current(1000.0).token
    phone = pairing.pair(code=code, name="Anna's phone", client="10.0.0.2", now=1001.0)
    assert phone.name == "Anna's phone" and pairing.current(1001.0).token != before
    with pytest.raises(PairingRefused, match="wrong code"):
        pairing.pair(code=code, client="10.0.0.3", now=1002.0)  # used: a new one is in force
    assert pairing.device(pairing.cookie(phone), 1003.0) is phone
    # The token of the QR code's address pairs once too.
    token = pairing.current(1004.0).token
    other = pairing.pair(token=token, client="10.0.0.3", now=1004.0)
    assert other.name == "phone 2"
    with pytest.raises(PairingRefused, match="has been used or has expired"):
        pairing.pair(token=token, client="10.0.0.4", now=1005.0)


def test_wrong_codes_are_limited_per_device_and_in_all(tmp_path: Path) -> None:
    pairing = Pairing(None, now=0.0)
    right = pairing.current(0.0).code
    wrong = "000000" if right != "000000" else "111111"
    for k in range(WRONG_PER_CLIENT):
        with pytest.raises(PairingRefused, match="wrong code"):
            pairing.pair(code=wrong, client="10.0.0.9", now=1.0 + k)
    with pytest.raises(PairingRefused, match="too many wrong codes .* try again in"):
        pairing.pair(code=right, client="10.0.0.9", now=10.0)  # even the right code
    # Another device may, and the first one again once the window has passed.
    assert pairing.pair(code=right, client="10.0.0.8", now=11.0)
    right = pairing.current(12.0).code
    assert pairing.pair(code=right, client="10.0.0.9", now=1.0 + WRONG_WINDOW_S + 1)
    # Guessing from many addresses: after CODE_MAX_WRONG wrong codes the code is replaced.
    right, before = pairing.current(100.0).code, pairing.current(100.0).token
    wrong = "000000" if right != "000000" else "111111"
    for k in range(CODE_MAX_WRONG - 1):
        with pytest.raises(PairingRefused):
            pairing.pair(code=wrong, client=f"10.1.0.{k}", now=100.0)
    assert pairing.current(100.0).token == before  # not yet
    with pytest.raises(PairingRefused):
        pairing.pair(code=wrong, client="10.2.0.1", now=100.0)
    assert pairing.current(100.0).token != before and pairing.current(100.0).wrong == 0


def test_sessions_expire_are_unforgeable_and_end_when_unpaired(tmp_path: Path) -> None:
    pairing = Pairing(tmp_path, now=0.0)
    phone = pairing.pair(code=pairing.current(0.0).code, client="a", now=0.0)
    cookie = pairing.cookie(phone)
    assert pairing.device(cookie, 5.0) is phone
    assert pairing.device(cookie[:-3] + "abc", 5.0) is None
    assert pairing.device("", 5.0) is None and pairing.device(None, 5.0) is None
    assert not pairing.csrf_ok(phone, "forged") and pairing.csrf_ok(phone, phone.csrf)
    # Kept across a restart (the secret key too: the cookie still holds), key file 0600.
    again = Pairing(tmp_path, now=10.0)
    assert again.device(cookie, 10.0) is not None
    assert stat.S_IMODE(os.stat(tmp_path / "operator-secret").st_mode) == 0o600
    again.unpair(phone.id)
    assert again.device(cookie, 11.0) is None
    with pytest.raises(PairingRefused, match="no such phone"):
        again.unpair(phone.id)
    assert Pairing(tmp_path, now=12.0).devices == {}


def test_the_paired_phones_are_synced_to_disk_and_stay_private(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A power cut just after pairing must not leave an empty file (every phone to pair
    again): the secret and the phones are written whole and synced, and stay 0600 even where
    a person made them readable."""
    synced: list[str] = []
    real_fsync = os.fsync

    def fsync(fd: int) -> None:
        synced.append(os.readlink(f"/proc/self/fd/{fd}"))
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    pairing = Pairing(tmp_path, now=0.0)
    pairing.pair(code=pairing.current(0.0).code, client="a", now=0.0)
    assert any(".operator-secret." in p for p in synced), synced
    assert any(".operator-devices.json." in p for p in synced), synced
    os.chmod(tmp_path / "operator-devices.json", 0o644)
    pairing.pair(code=pairing.current(1.0).code, client="b", now=1.0)
    for name in ("operator-secret", "operator-devices.json"):
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == 0o600, name
    assert len(Pairing(tmp_path, now=2.0).devices) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["operator-devices.json",
                                                          "operator-secret"]


def test_an_old_cookie_is_refused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pairing = Pairing(None, now=0.0)
    phone = pairing.pair(code=pairing.current(0.0).code, client="a", now=0.0)
    cookie = pairing.cookie(phone)
    import itsdangerous.timed

    real = itsdangerous.timed.TimestampSigner.get_timestamp
    monkeypatch.setattr(itsdangerous.timed.TimestampSigner, "get_timestamp",
                        lambda self: real(self) + SESSION_TTL_S + 10)
    assert pairing.device(cookie, 1.0) is None


# --------------------------------------------------------------------------- the site


def with_site(tmp_path: Path, check: Callable[[OperatorSite, str], Awaitable[None]],
              extra: str = "", config_path: Path | None = None) -> None:
    """Serve a table's site on a free port and run ``check(site, base)`` against it (with
    ``config_path``, the file its wizard rewrites; ``extra``, lines of its table.toml)."""
    svc = service(config(tmp_path, game="banka-bever", extra=extra), FakeTime())
    site = OperatorSite(svc, port=0, pairing_folder=svc.journal_dir, config_path=config_path)
    svc.outputs.append(site)

    async def go() -> None:
        await site.start(svc)
        try:
            await check(site, site.url)
        finally:
            await site.stop()
            svc.close()

    asyncio.run(go())


def client() -> aiohttp.ClientSession:
    """A client that keeps cookies of an IP address (as a browser does)."""
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def fetch(session: aiohttp.ClientSession, method: str, url: str, **kw: Any
                ) -> tuple[int, Any, Any]:
    async with session.request(method, url, **kw) as r:
        body = await r.read()
        try:
            data = json.loads(body)
        except ValueError:
            data = body
        return r.status, data, r.headers


async def paired(session: aiohttp.ClientSession, site: OperatorSite, base: str) -> str:
    code = site.pairing.current(site.clock()).code
    status, answer, _ = await fetch(session, "POST", base + "operator/api/pair",
                                    json={"code": code, "name": "test"},
                                    headers={"Origin": base.rstrip("/")})
    assert status == 200, answer
    return str(answer["csrf"])


def test_every_change_needs_a_session_its_token_and_its_origin(tmp_path: Path) -> None:
    async def check(site: OperatorSite, base: str) -> None:
        api = base + "operator/api/"
        origin = {"Origin": base.rstrip("/")}
        async with client() as s:
            status, answer, _ = await fetch(s, "GET", api + "table")
            assert status == 401 and answer == {"ok": False,
                                                "text": "this phone is not paired with the table"}
            status, answer, _ = await fetch(s, "POST", api + "pair", json={"code": "1"})
            assert status == 403 and "did not come from the operator page" in answer["text"]
            csrf = await paired(s, site, base)
            pause = {"command": "pause"}
            status, answer, _ = await fetch(s, "POST", api + "command", json=pause,
                                            headers=origin)
            assert status == 403 and "token" in answer["text"]
            status, answer, _ = await fetch(s, "POST", api + "command", json=pause,
                                            headers={"X-CSRF-Token": csrf})
            assert status == 403  # no Origin: not the page
            assert not site.service.paused
            status, answer, _ = await fetch(s, "POST", api + "command", json=pause,
                                            headers={**origin, "X-CSRF-Token": csrf})
            assert status == 200 and answer == {
                "ok": True, "text": "paused: inputs are ignored until 'resume'",
                "confirm": False}
            assert site.service.paused
            # The refusals of the command path, in words.
            status, answer, _ = await fetch(s, "POST", api + "command",
                                            json={"command": "correct", "args": {"card": "X"}},
                                            headers={**origin, "X-CSRF-Token": csrf})
            assert status == 200 and not answer["ok"] and "X" in answer["text"]
            status, answer, _ = await fetch(s, "POST", api + "command", data=b"{not json",
                                            headers={**origin, "X-CSRF-Token": csrf,
                                                     "Content-Type": "application/json"})
            assert status == 400 and answer["text"] == "not JSON"
            status, _, _ = await fetch(s, "POST", api + "command", data=b"x" * 70_000,
                                       headers={**origin, "X-CSRF-Token": csrf})
            assert status == 413
            # Another name for this machine (DNS rebinding) is not the page.
            status, answer, _ = await fetch(s, "GET", api + "table",
                                            headers={"Host": "evil.example"})
            assert status == 421
            status, table, _ = await fetch(s, "GET", api + "table")
            assert status == 200 and table["paused"] and table["seats"] == ["Anna", "Bo"]
            # Unpair this phone: its session ends at once.
            status, devices, _ = await fetch(s, "GET", api + "devices")
            me = devices["you"]
            status, answer, _ = await fetch(s, "POST", api + "unpair", json={"id": me},
                                            headers={**origin, "X-CSRF-Token": csrf})
            assert status == 200 and answer["text"] == "test is no longer paired"
            assert (await fetch(s, "GET", api + "table"))[0] == 401

    with_site(tmp_path, check)


def test_every_answer_carries_the_security_headers_and_no_other_file(tmp_path: Path) -> None:
    async def check(site: OperatorSite, base: str) -> None:
        async with client() as s:
            for path in ("", "operator/", "operator/operator.js", "scene.json", "nope",
                         "operator/api/table"):
                status, _, headers = await fetch(s, "GET", base + path)
                for name, value in SECURITY_HEADERS.items():
                    assert headers.get(name) == value, (path, name)
                assert "frame-ancestors 'none'" in headers["Content-Security-Policy"]
            for path in ("../pyproject.toml", "%2e%2e/pyproject.toml", "operator/..%2fsite.py",
                         "operator/%2e%2e/%2e%2e/config.py", "operator/site.py",
                         "operator/operator.js%00.css", "..\\..\\pyproject.toml",
                         "/etc/passwd", "operator//etc/passwd", "web/display.js"):
                status, body, _ = await fetch(s, "GET", base + path)
                assert status in (400, 404), path
                assert b"[project]" not in (body if isinstance(body, bytes) else b"")
            # As sent, not as a client library would tidy the path first.
            port = site.server.port
            for raw in ("/../pyproject.toml", "/operator/../../pyproject.toml",
                        "/operator/%2e%2e/%2e%2e/pyproject.toml", "/%2e%2e%2fpyproject.toml",
                        "/operator/..\\..\\pyproject.toml", "/operator/operator.js%00",
                        "//etc/passwd"):
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                writer.write(f"GET {raw} HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                             "Connection: close\r\n\r\n".encode())
                answer = await reader.read()
                writer.close()
                head = answer.split(b"\r\n", 1)[0]
                assert head.split()[1] in (b"400", b"404"), (raw, head)
                assert b"[project]" not in answer and b"root:" not in answer
            big = {"X-Big": "x" * 65_536}
            status, _, _ = await fetch(s, "GET", base, headers=big)
            assert status == 400
            # The display's stream sends the scene at once, with the headers.
            async with s.get(base + "events") as r:
                assert r.headers["Content-Type"].startswith("text/event-stream")
                assert r.headers["X-Content-Type-Options"] == "nosniff"
                line = await r.content.readline()
                assert line.startswith(b"retry:")

    with_site(tmp_path, check)


def test_the_code_is_shown_on_the_tables_own_screen_only_while_asked_for(
        tmp_path: Path) -> None:
    async def check(site: OperatorSite, base: str) -> None:
        async with client() as s:
            # No phone paired yet: the table's screen (this machine) shows the code.
            status, answer, _ = await fetch(s, "GET", base + "pairing.json")
            assert status == 200 and answer["code"] == site.pairing.current(site.clock()).code
            status, svg, headers = await fetch(s, "GET", base + "pairing.svg")
            assert status == 200 and headers["Content-Type"] == "image/svg+xml"
            assert svg.startswith(b"<svg") and b"xmlns" in svg
            scene = (await fetch(s, "GET", base + "scene.json"))[1]
            assert scene["pairing"] > site.clock() and answer["code"] not in json.dumps(scene)
            await paired(s, site, base)
            # not asked for now: no code, and no 404 for the screen's console
            assert (await fetch(s, "GET", base + "pairing.json"))[:2] == (200, {"code": None})
            assert (await fetch(s, "GET", base + "pairing.svg"))[0] == 404
            assert (await fetch(s, "GET", base + "scene.json"))[1]["pairing"] is None
            # An unpaired phone asks for it again.
            async with client() as other:
                status, _, _ = await fetch(other, "POST", base + "operator/api/show-code",
                                           json={}, headers={"Origin": base.rstrip("/")})
                assert status == 200
            assert (await fetch(s, "GET", base + "pairing.json"))[0] == 200
        # A display elsewhere on the network never gets it.
        from cardtable.operator.guard import is_loopback

        assert is_loopback("127.0.0.1") and is_loopback("::1")
        assert not is_loopback("192.168.1.20") and not is_loopback(None)

    with_site(tmp_path, check)


def test_the_table_check_sees_each_pad_with_its_edge_time(tmp_path: Path) -> None:
    from cardtable.wiring import build_service
    from hardware.mock import MonotonicClock, VirtualMockFactory

    pins = '[hardware]\npin_factory = "mock"\n' + "".join(
        f'[[seats]]\nslap = {p}\nled = {p + 1}\n' for p in (17, 22))
    cfg = config(tmp_path, game="banka-bever", extra=pins)
    factory = VirtualMockFactory(MonotonicClock())
    svc = build_service(cfg, console=False, pin_factory=factory)
    svc.fsync = False
    site = OperatorSite(svc, port=0, pairing_folder=svc.journal_dir)
    svc.edges.append(site)
    svc.outputs.append(site)

    async def go() -> None:
        task = asyncio.create_task(svc.run())
        while site.server.port == 0 or site.server._runner is None:
            await asyncio.sleep(0.01)
        base = site.url
        api = base + "operator/api/"
        try:
            async with client() as s:
                csrf = await paired(s, site, base)
                change = {"Origin": base.rstrip("/"), "X-CSRF-Token": csrf}
                status, report, _ = await fetch(s, "GET", api + "check")
                assert status == 200 and report["seats"][1]["slap"] is None
                assert report["leds"] == {"gpio": True, "board": False}
                assert report["broker"] is None and report["board"] is None
                await fetch(s, "POST", api + "command", json={"command": "pause"},
                            headers=change)
                factory.pin(22).drive_low()
                await asyncio.sleep(0.1)
                factory.pin(22).drive_high()
                await asyncio.sleep(0.1)
                status, report, _ = await fetch(s, "GET", api + "check")
                press = report["seats"][1]["slap"]
                assert press is not None and 0 <= press["delay_ms"] < 1000, report
                assert report["seats"][0]["slap"] is None and report["paused"]
                status, answer, _ = await fetch(s, "POST", api + "check/led",
                                                json={"seat": 1}, headers=change)
                assert answer == {"ok": True, "text": "Bo's LED is lit (GPIO)"}
                assert factory.pin(23).state  # seat 1's LED line
                status, answer, _ = await fetch(s, "POST", api + "check/led",
                                                json={"seat": 9}, headers=change)
                assert status == 400
                # A paused game took the press as no slap: nothing was journaled.
                assert len(svc.current_path.read_text().splitlines()) == 1
        finally:
            svc.stop()
            await task

    asyncio.run(go())


@pytest.mark.parametrize(("routed", "named", "shown"), [
    ("192.168.1.20", ["127.0.1.1"], "192.168.1.20"),  # Raspberry Pi OS: the name is 127.0.1.1
    (None, ["127.0.1.1", "10.0.0.5"], "10.0.0.5"),  # no default route: the name's address
    (None, ["127.0.1.1"], "127.0.0.1"),
    ("127.0.0.1", [], "127.0.0.1"),
])
def test_the_address_for_phones_is_the_one_the_network_reaches(
        routed: str | None, named: list[str], shown: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # found by probing the pages: the name alone put 127.x in the QR code on a Pi
    import cardtable.operator.guard as guard

    monkeypatch.setattr(guard, "routed_address", lambda: routed)
    monkeypatch.setattr(guard, "named_addresses", lambda: named)
    assert guard.lan_address() == shown


def test_the_routed_address_is_asked_without_raising() -> None:
    import cardtable.operator.guard as guard

    address = guard.routed_address()  # None on a machine with no route out
    assert address is None or ipaddress.ip_address(address).version == 4


def test_every_option_of_the_new_game_form_has_words_in_every_language(tmp_path: Path) -> None:
    # the form had shown the file's keys ("false slap penalty") and values ("none", "burn")
    # in English on a Swedish page
    from cardtable.i18n import languages
    from cardtable.operator.site import CHOICES, LABELS

    async def check(site: OperatorSite, base: str) -> None:
        async with client() as s:
            await paired(s, site, base)
            for code in languages():
                status, answer, _ = await fetch(s, "GET", base + f"operator/api/games?lang={code}")
                assert status == 200
                for game in answer["games"]:
                    for o in game["options"]:
                        assert o["label"], (code, o["name"])
                        assert set(o["choice_labels"]) == set(o["choices"]), o
                if code == "sv":
                    banka = next(g for g in answer["games"] if g["name"] == "banka-bever")
                    penalty = next(o for o in banka["options"]
                                   if o["name"] == "false_slap_penalty")
                    assert penalty["label"] == "straff för felaktig bankning"
                    assert penalty["choice_labels"] == {"none": "inget",
                                                        "burn": "bränn ett kort"}

    with_site(tmp_path, check)
    from referee.games import games
    from referee.options import option_specs

    specs = [s for g in games.values() for s in option_specs(g.options)]
    assert set(LABELS) == {s.name for s in specs}  # a new option gets its words here
    assert set(CHOICES) == {c for s in specs for c in s.to_json().get("choices") or ()}


def test_a_phone_that_gives_no_name_is_named_in_the_page_s_language(tmp_path: Path) -> None:
    # a Swedish page said "parkopplad som phone 1"
    async def check(site: OperatorSite, base: str) -> None:
        async with client() as s:
            code = site.pairing.current(site.clock()).code
            status, answer, _ = await fetch(s, "POST", base + "operator/api/pair?lang=sv",
                                            json={"code": code},
                                            headers={"Origin": base.rstrip("/")})
            assert status == 200, answer
            assert [d.name for d in site.pairing.devices.values()] == ["telefon 1"]
            assert answer["text"] == "parkopplad som telefon 1"

    with_site(tmp_path, check)
