"""The findings of the audit of the running program (issue 36), each tried as the audit tried
it: a reverse proxy in front of the pages, the pairing code asked for by another site, the
pairing routes under another Host, a flood of event streams from one client, a handler that
fails, the wizard's camera, pads, folder and broker, and guessing from many addresses."""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import quote

import pytest
from aiohttp import web

import cardtable.operator.setup as setup
import cardtable.operator.wizard as wizard
import cardtable.webserver as webserver
from cardtable.config import load_config
from cardtable.display.view import TableView
from cardtable.display.web import WebDisplay
from cardtable.errors import ConfigError, PairingRefused
from cardtable.operator.pairing import TABLE_WRONG_PER_WINDOW, WRONG_PER_CLIENT, Pairing
from cardtable.operator.setup import Answers, answers_of, write_table
from cardtable.operator.site import OperatorSite
from cardtable.webserver import SECURITY_HEADERS
from tests.cardtable.test_operator_site import client, fetch, paired, with_site
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
                status, body, _ = await fetch(s, "GET", base + "pairing.json", headers=headers)
                assert (status, body) == (200, {"code": None}), headers  # as to any display
                status, body, _ = await fetch(s, "GET", base + "pairing.svg", headers=headers)
                assert status == 404, headers
                assert site.pairing.current(site.clock()).code.encode() not in body
                # and the page is not told it is the table's screen (it would not ask)
                answer = (await fetch(s, "GET", base + "operator/api/session",
                                      headers=headers))[1]
                assert answer["table_screen"] is False, headers
            assert (await fetch(s, "GET", base + "operator/api/session"))[1]["table_screen"]
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
            assert (await fetch(s, "GET", base + "pairing.json"))[1] == {"code": None}  # not shown
            origin = {"Origin": base.rstrip("/")}
            site.pairing.renew(site.clock())  # a code not logged yet (the first one was, at start)
            caplog.clear()
            with caplog.at_level(logging.INFO, logger="cardtable.operator"):
                statuses = [(await fetch(s, "POST", url, json={}, headers=origin))[0]
                            for _ in range(12)]
            assert statuses[0] == 200 and (await fetch(s, "GET", base + "pairing.json"))[1]["code"]
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


@pytest.mark.parametrize(("body", "headers"), [
    (b"[" * 20_000 + b"]" * 20_000, {}),  # RecursionError in json
    (b'{"code": "1"}', {"Content-Encoding": "gzip"}),  # not gzip: zlib.error
    (b"\xff\xfe{}", {}),
], ids=["nested-20000-deep", "not-gzip", "not-utf-8"])
def test_a_body_no_json_reader_takes_is_refused_in_words_unpaired(
        tmp_path: Path, body: bytes, headers: dict[str, str],
        caplog: pytest.LogCaptureFixture) -> None:
    # found by probing the pages: both had answered 500 and logged a traceback
    async def check(site: OperatorSite, base: str) -> None:
        async with client() as s:
            # (a body that is not gzip, on a route that refuses before reading it: aiohttp
            # closes the connection when it drains the body; logged as below)
            routes = ["operator/api/pair"] + (
                [] if headers else ["operator/api/command", "setup/api/save"])
            for route in routes:
                status, answer, _ = await fetch(
                    s, "POST", base + route, data=body,
                    headers={"Origin": base.rstrip("/"), "Content-Type": "application/json",
                             **headers})
                assert status in (400, 401, 403), (route, status, answer)
                assert isinstance(answer, dict) and answer["ok"] is False, answer
        # the pairing's body is read before any session is asked for
        async with client() as s:
            status, answer, _ = await fetch(
                s, "POST", base + "operator/api/pair", data=body,
                headers={"Origin": base.rstrip("/"), **headers})
            assert (status, answer["text"]) == (400, "not JSON")

    with caplog.at_level(logging.DEBUG):
        with_site(tmp_path, check)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]


@pytest.mark.parametrize("request_text", [
    "GET / HTTP/1.1\r\n\r\n",  # no Host
    "GET / HTTP/1.1\r\nHost: h\r\nX-Big: " + "a" * 9000 + "\r\n\r\n",
    "GET / HTTP/1.1\r\nHost: h\r\n" + "".join(f"X-{i}: 1\r\n" for i in range(70)) + "\r\n",
], ids=["no-host", "a-9-KiB-header", "70-headers"])
def test_a_request_the_server_cannot_read_is_one_line_of_log_not_a_traceback(
        tmp_path: Path, request_text: str, caplog: pytest.LogCaptureFixture) -> None:
    # aiohttp logged each as an ERROR with ten lines of traceback: anyone could fill the log
    async def check(site: OperatorSite, base: str) -> None:
        port = int(base.rstrip("/").rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(request_text.encode())
        head = await asyncio.wait_for(reader.readuntil(b"\r\n"), 5)
        assert head.split()[1] == b"400", head
        writer.close()

    with caplog.at_level(logging.DEBUG):
        with_site(tmp_path, check)
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert any("could not read" in r.getMessage() for r in caplog.records)


def test_a_body_that_trickles_in_is_answered_408_and_its_connection_closed(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # the server's guard times the headers only: a body sent a byte at a time held its
    # connection for ever, without pairing (enough of them shut the wizard out)
    import cardtable.operator.guard as guard

    monkeypatch.setattr(guard, "BODY_S", 0.5)

    async def check(site: OperatorSite, base: str) -> None:
        port = int(base.rstrip("/").rsplit(":", 1)[1])
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"POST /operator/api/pair HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
                     f"Origin: {base.rstrip('/')}\r\nContent-Type: application/json\r\n"
                     "Content-Length: 1000\r\n\r\n{".encode())
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 5)
        assert head.split()[1] == b"408" and b"Connection: close" in head, head
        assert b"came too slowly" in await asyncio.wait_for(reader.read(200), 5)
        writer.close()

    with_site(tmp_path, check)


# --------------------------------------------------------------- the wizard: 4, 6, 7, 14


def with_table_site(tmp_path: Path, check: Callable[[OperatorSite, str], Awaitable[None]],
                    extra: str = "") -> None:
    """A table's site whose wizard rewrites the table's own ``table.toml``."""
    with_site(tmp_path, check, extra=extra, config_path=tmp_path / "table.toml")


def test_the_camera_preview_opens_this_machines_cameras_only(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The audit saved an http:// URL and a private PNG as the camera and had the preview
    open them (ffmpeg fetched the URL; the PNG came back; a file's existence could be told).
    Now the preview opens a camera of this machine's list, the Pi camera or a device number,
    never what the file names, and the wizard saves nothing else from the web."""
    secret = tmp_path / "private.png"
    secret.write_bytes(b"\x89PNG\r\n\x1a\n private")
    opened: list[str] = []
    monkeypatch.setattr(setup, "cameras", lambda: ["/dev/video3"])
    monkeypatch.setattr(wizard, "camera_frame", lambda source: opened.append(source) or b"JPG")

    async def check(site: OperatorSite, base: str) -> None:
        async with client() as s:
            csrf = await paired(s, site, base)
            url = base + "setup/api/camera.jpg?source="
            for source in (str(secret), "http://127.0.0.1:9/x", "/dev/video9", "/etc/passwd",
                           "/dev/video3/../../etc/passwd", "rtsp://10.0.0.1/x", "007", ""):
                status, _, _ = await fetch(s, "GET", url + quote(source))
                assert status == 400, source
            assert opened == []
            for source in ("/dev/video3", "picamera", "0"):
                status, body, _ = await fetch(s, "GET", url + quote(source))
                assert status == 200 and body == b"JPG", source
            assert opened == ["/dev/video3", "picamera", "0"]
            # Saving a source that is not one of those is refused, and nothing is written.
            text = (tmp_path / "table.toml").read_text()
            for source in (str(tmp_path / "other.png"), "http://127.0.0.1:9/x", "/dev/video9"):
                status, answer, _ = await fetch(
                    s, "POST", base + "setup/api/save",
                    json={"answers": {"card_source": "camera", "camera_source": source}},
                    headers={"Origin": base.rstrip("/"), "X-CSRF-Token": csrf})
                assert status == 400 and "camera_source" in answer["text"], answer
                assert (tmp_path / "table.toml").read_text() == text

    extra = f'[camera]\nsource = "{secret}"\n'
    with_table_site(tmp_path, check, extra)
    # A source a person wrote in the file is kept when the page sends it back unchanged.
    saved = answers_of(tmp_path / "table.toml")
    assert saved.camera_source == str(secret)
    assert Answers.from_json({"camera_source": str(secret)}, saved=saved).camera_source == str(
        secret)
    with pytest.raises(ValueError, match="camera_source"):
        Answers.from_json({"camera_source": str(secret)})


@pytest.mark.parametrize("pads", [[{"slap": {"x": [1]}}], [{"slap": 1e400}], [{"slap": True}],
                                  [{"slap": "17"}], [{"slap": 17, "led": [4]}], ["17"],
                                  [{"slap": 17, "extra": 4}]])
def test_pads_from_the_web_are_whole_numbers(pads: list[object]) -> None:
    with pytest.raises(ValueError, match="pads"):
        Answers.from_json({"seats": ["Anna"], "pads": pads})


@pytest.mark.parametrize("answers", [{"table_id": 1e400}, {"game": ["x"]}, {"seats": "Anna"},
                                     {"language": 7}, {"broker_url": {"a": 1}},
                                     {"board_port": 3}, {"pin_factory": None}])
def test_every_answer_from_the_web_has_its_kind(answers: dict[str, object]) -> None:
    with pytest.raises(ValueError, match=next(iter(answers))):
        Answers.from_json(answers)


def test_the_wizard_writes_nothing_referee_run_refuses(tmp_path: Path) -> None:
    """The file is checked as `referee run` checks it, the pads as the GPIO edge reads them,
    before anything is written (the audit's saved pads made `referee run` refuse to start)."""
    path = tmp_path / "table.toml"
    for pads in ([{"slap": 99}, {"slap": 5}], [{"slap": 17}, {"slap": 17}], [{"slap": 17}]):
        answers = Answers.from_json({"seats": ["Anna", "Bo"], "pads": pads,
                                     "pin_factory": "mock"})
        with pytest.raises(ConfigError) as refused:
            write_table(path, answers)
        assert "seats" in str(refused.value), pads
        assert not path.exists()
    write_table(path, Answers.from_json({"seats": ["Anna", "Bo"], "pin_factory": "mock",
                                         "pads": [{"slap": 17}, {"slap": 5, "led": 6}]}))
    cfg = load_config(path)
    assert cfg.seats == ("Anna", "Bo")
    from cardtable.wiring import pad_config

    hw = pad_config(cfg)
    assert hw is not None and [s.slap for s in hw.seats] == [17, 5]
    # The table board chosen with no board found: refused, where the file had been written
    # and the table then looked for a port named '' for ever.
    before = path.read_text()
    with pytest.raises(ConfigError, match="board.port: is empty"):
        write_table(path, Answers.from_json({"seats": ["Anna", "Bo"], "card_source": "board",
                                             "board_port": ""}))
    assert path.read_text() == before


@pytest.mark.parametrize("folder", ["../../../tmp/x", "/tmp/x", "a/b", "..", ".", "", ".hidden",
                                    "a\\b", "x\x00y", 7])
def test_the_journal_folder_from_the_web_is_a_plain_name(folder: object) -> None:
    with pytest.raises(ValueError, match="journal_dir"):
        Answers.from_json({"journal_dir": folder})


def test_the_journal_folder_stays_in_the_configurations_folder(tmp_path: Path) -> None:
    assert Answers.from_json({"journal_dir": "games-2026"}).journal_dir == "games-2026"
    saved = Answers(journal_dir="/var/lib/referee/journals")  # a person wrote it: kept
    assert Answers.from_json({"journal_dir": "/var/lib/referee/journals"},
                             saved=saved).journal_dir == "/var/lib/referee/journals"
    path = tmp_path / "table.toml"
    write_table(path, Answers.from_json({"journal_dir": "games"}))
    assert load_config(path).journal_dir == tmp_path / "games"


def test_the_brokers_password_never_leaves_and_is_kept(tmp_path: Path) -> None:
    url = "mqtts://referee:s3cret%21@broker.local:8883?cafile=/etc/cardtable/ca.crt"

    async def check(site: OperatorSite, base: str) -> None:
        origin = {"Origin": base.rstrip("/")}
        async with client() as s:
            csrf = await paired(s, site, base)
            status, state, _ = await fetch(s, "GET", base + "setup/api/state")
            shown = state["answers"]["broker_url"]
            assert status == 200 and "s3cret" not in json.dumps(state)
            assert shown == "mqtts://referee@broker.local:8883?cafile=/etc/cardtable/ca.crt"
            # Sent back as shown: the saved password stays.
            answers = {**state["answers"], "pads": []}
            status, answer, _ = await fetch(s, "POST", base + "setup/api/save",
                                            json={"answers": answers},
                                            headers={**origin, "X-CSRF-Token": csrf})
            assert status == 200, answer
            assert load_config(tmp_path / "table.toml").raw["broker"]["url"] == url
            # Another broker: the password is not carried to it.
            answers["broker_url"] = "mqtt://referee@other.example:1883"
            status, answer, _ = await fetch(s, "POST", base + "setup/api/save",
                                            json={"answers": answers},
                                            headers={**origin, "X-CSRF-Token": csrf})
            assert status == 200, answer
            assert load_config(tmp_path / "table.toml").raw["broker"]["url"] == (
                "mqtt://referee@other.example:1883")

    with_table_site(tmp_path, check, f'[broker]\nurl = "{url}"\n')


def test_the_phone_that_set_the_table_up_stays_paired_in_its_journal_folder(
        tmp_path: Path) -> None:
    """The wizard keeps the phones it paired where the table's journals will be: the folder
    the saved file names (the audit's phone was unpaired once the table ran elsewhere)."""
    path = tmp_path / "table.toml"
    site = wizard.SetupSite(path, port=0)
    phone = site.pairing.pair(code=site.pairing.current(site.clock()).code, client="a",
                              now=site.clock())
    cookie = site.pairing.cookie(phone)
    write_table(path, Answers.from_json({"journal_dir": "games"}))
    site._saved(path)
    kept = Pairing(tmp_path / "games", site.clock())
    assert kept.device(cookie, site.clock()) is not None


# --------------------------------------------------------------- 8: guessing from many addresses


def test_wrong_codes_from_many_addresses_meet_a_table_wide_budget_with_back_off() -> None:
    """Many addresses, each under its own limit, kept replacing the code and guessing on: the
    table now takes TABLE_WRONG_PER_WINDOW wrong codes a window, then refuses every typed code
    (the right one too) for a while that doubles each time the budget is spent again. The QR
    code's token (unguessable) and the table's own screen still pair."""
    pairing = Pairing(None, now=0.0)

    def guess_from_many(now: float, start: int) -> int:
        """Wrong codes from new addresses until the table refuses: how many were taken."""
        for k in range(10 * TABLE_WRONG_PER_WINDOW):
            right = pairing.current(now).code
            try:
                pairing.pair(code="000000" if right != "000000" else "111111",
                             client=f"10.{start}.{k // 250}.{k % 250}", now=now)
            except PairingRefused as exc:
                if "at this table" in str(exc):
                    return k
        raise AssertionError("never refused")

    assert guess_from_many(0.0, 1) == TABLE_WRONG_PER_WINDOW
    right = pairing.current(0.0).code
    with pytest.raises(PairingRefused, match="at this table: try again in 60 s"):
        pairing.pair(code=right, client="10.200.0.1", now=0.0)  # the right code too
    # The QR code's token and the table's own screen are not held up.
    assert pairing.pair(token=pairing.current(2.0).token, client="10.200.0.2", now=2.0)
    assert pairing.pair(code=pairing.current(3.0).code, client="127.0.0.1", now=3.0)
    # Once the wait is over, the next spent budget waits twice as long.
    assert guess_from_many(61.0, 2) == TABLE_WRONG_PER_WINDOW
    with pytest.raises(PairingRefused, match="try again in 120 s"):
        pairing.pair(code=pairing.current(61.0).code, client="10.201.0.1", now=61.0)
    assert guess_from_many(182.0, 3) == TABLE_WRONG_PER_WINDOW
    with pytest.raises(PairingRefused, match="try again in 240 s"):
        pairing.pair(code=pairing.current(182.0).code, client="10.202.0.1", now=182.0)
    # A quiet table forgets: a right code after the wait pairs, and the back-off starts again.
    assert pairing.pair(code=pairing.current(423.0).code, client="10.203.0.1", now=423.0)
    assert guess_from_many(2000.0, 4) == TABLE_WRONG_PER_WINDOW
    with pytest.raises(PairingRefused, match="try again in 60 s"):
        pairing.pair(code=pairing.current(2000.0).code, client="10.204.0.1", now=2000.0)


def test_an_api_address_that_is_none_or_a_method_it_takes_not_answers_json(
        tmp_path: Path) -> None:
    # they were aiohttp's line of text, where every other API answer is a JSON refusal
    async def check(site: OperatorSite, base: str) -> None:
        async with client() as s:
            status, answer, headers = await fetch(s, "GET", base + "operator/api/nothing")
            assert (status, answer) == (404, {"ok": False, "text": "not found"})
            assert headers["X-Content-Type-Options"] == "nosniff"
            status, answer, headers = await fetch(s, "DELETE", base + "operator/api/pair")
            assert (status, answer) == (405, {"ok": False, "text": "method not allowed"})
            assert "POST" in headers["Allow"]
            status, answer, _ = await fetch(s, "GET", base + "nothing.html")  # not an API
            assert status == 404 and not isinstance(answer, dict)

    with_site(tmp_path, check)
