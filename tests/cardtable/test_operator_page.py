"""The operator page in a phone's browser (issue 34): pair with the code, start a Banka bäver
game of four named seats with two options off their defaults, let it be played on the mock
table (virtual players press the mock GPIO pads and lay cards on the emulated board), pause,
correct a card, end, and see the game in the evening's list; then every way in without a
paired phone's own page is refused, and nothing changes in the journal.

Playwright drives headless Chromium (``tests/operator_pages.py``); the table is ``referee
simulate --full-stack --operator``, the service of ``referee run`` with its web pages.
"""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.operator_pages import LAPTOP, PHONE, browser, operator_table, screenshot, wait_js
from tests.web_pages import png_size

NAMES = ["Astrid", "Björn", "Cilla", "Dagny"]


def journal_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def call(url: str, *, body: dict[str, Any] | None = None,
         headers: dict[str, str] | None = None) -> tuple[int, dict[str, Any]]:
    """An HTTP request as a program (not the page) makes it: status and JSON answer."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(url, data=data, headers={
        "Content-Type": "application/json", **(headers or {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as r:
            return r.status, json.loads(r.read() or b"{}")
    except urllib.error.HTTPError as exc:
        raw = exc.read()
        try:
            return exc.code, json.loads(raw)
        except ValueError:
            return exc.code, {"raw": raw.decode(errors="replace")}


def wait_for(check: Any, timeout: float = 20.0, what: str = "") -> Any:
    deadline = time.monotonic() + timeout
    while True:
        got = check()
        if got:
            return got
        assert time.monotonic() < deadline, f"timed out waiting for {what or check}"
        time.sleep(0.1)


@pytest.mark.slow
def test_a_phone_runs_a_game_from_pairing_to_the_evenings_list(tmp_path: Path) -> None:
    shots = tmp_path / "shots"
    shots.mkdir()
    with operator_table(tmp_path / "journals", "--game", "beggar-my-neighbour",
                        "--players", "2", "--seed", "3", "--speed", "4") as table, \
            browser() as chromium:
        phone = chromium.new_context(**PHONE)
        page = phone.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        # and no line in the console: a /pairing.json answered 404 each time the pairing view
        # showed had been one
        page.on("console", lambda m: m.type == "error" and errors.append(
            f"{m.text} ({m.location.get('url')})"))
        t0 = time.monotonic()
        page.goto(table.base + "operator/")
        page.wait_for_selector("#pair:not([hidden])")
        print(f"the pairing page showed {1000 * (time.monotonic() - t0):.0f} ms after opening")
        screenshot(page, shots / "operator-pair.png")

        # Pair with the code the table's display shows (and the log printed).
        page.fill("#pair-code", table.code)
        page.fill("#pair-name", "Astrid's phone")
        page.tap("#pair-form button[type=submit]")
        page.wait_for_selector("#table:not([hidden])")
        assert page.inner_text("#who") == "Astrid's phone"
        assert page.inner_text("#message") == "paired as Astrid's phone"
        # Another browser of the table's machine, once a phone is paired: the pairing view,
        # no code to show (it is not asked for now), and no 404 in its console for it.
        other = chromium.new_context(**PHONE).new_page()
        other.on("console", lambda m: m.type == "error" and errors.append(
            f"{m.text} ({m.location.get('url')})"))
        other.goto(table.base + "operator/")
        other.wait_for_selector("#pair:not([hidden])")
        wait_js(other, "document.body.dataset.paired === 'false'")
        assert other.locator("#pair-local").is_hidden()
        other.context.close()
        assert errors == []
        # The first game (Beggar My Neighbour) has begun; paused, so that it is still being
        # played when the new game is asked for, however fast its cards go.
        wait_for(lambda: len(journal_lines(table.current)) > 2, what="the first game's cards")
        page.tap("#pause")
        wait_js(page, "document.body.dataset.paused === 'true'")

        # A new game: Banka bäver, four named seats, Cilla deals, two options off default.
        page.tap("#tabs button[data-view=new]")
        page.wait_for_selector("#new:not([hidden])")
        page.tap("#game-choices input[value=banka-bever]")
        page.wait_for_selector(".option[data-option=false_slap_penalty]")
        helps = page.locator(".option .option-help").all_inner_texts()
        assert "a false slapper puts its top card face up under the pile" in helps[0]
        assert page.locator(".option").count() == 5  # every option of the registry
        while page.locator("#seat-names input").count() < 4:
            page.tap("#more")
        for k, name in enumerate(NAMES):
            page.fill(f"#seat-names input[data-seat='{k}']", name)
        page.select_option("#dealer", "2")
        page.select_option("#opt-false_slap_penalty", "burn")
        page.tap("#opt-bottom_match")  # on by default: off
        screenshot(page, shots / "operator-new-game.png", full_page=True)
        page.tap("#new-form button[type=submit]")
        # A two-seat Beggar My Neighbour game is running: ending it is confirmed first.
        page.wait_for_selector("#confirm[open]")
        assert "End it and deal the new one?" in page.inner_text("#confirm-text")
        page.tap("#confirm-yes")
        page.wait_for_selector("#table:not([hidden])")
        header = journal_lines(table.current)[0]
        assert header["game"] == "banka-bever" and header["seats"] == NAMES
        assert header["dealer"] == 2
        assert header["options"]["false_slap_penalty"] == "burn"
        assert header["options"]["bottom_match"] is False
        assert header["options"]["collect_grace_ms"] == 1500  # left at its default
        page.tap("#pause")  # Resume: the new game is played
        wait_js(page, "document.body.dataset.paused === 'false'")

        # The virtual players play it on the mock table: pads pressed, cards laid on the
        # emulated board; the page follows.
        wait_for(lambda: len(journal_lines(table.current)) > 12, what="cards laid")
        wait_js(page, "document.querySelectorAll('#seats .seat').length === 4")
        assert page.locator("#seats .seat .name").all_inner_texts() == NAMES
        wait_for(lambda: any(x["act"] == "slap" for x in journal_lines(table.current)[1:]),
                 timeout=60, what="a slap")
        page.wait_for_selector("#race:not([hidden])", timeout=15_000)
        page.evaluate("scrollTo(0, 0)")
        screenshot(page, shots / "operator-table.png")

        # Pause: the page says so, and the table takes no input.
        page.tap("#pause")
        wait_js(page, "document.body.dataset.paused === 'true'")
        assert page.inner_text("#pause") == "Resume"
        time.sleep(0.3)
        paused_at = table.current.read_text()

        # Correct the last card read: rank and suit pickers, showing what was read.
        page.tap("#open-correct")
        what = page.inner_text("#correct-what")
        assert "read as" in what and "by the card reader" in what
        line = json.loads(page.evaluate("JSON.stringify(page.table.last_card)"))
        old = journal_lines(table.current)[line["line"] - 1]
        assert old["act"] == "lay" and old["card"] == line["card"]
        new_card = "QH" if old["card"] != "QH" else "KS"
        page.tap(f"#ranks button[data-value='{new_card[:-1]}']")
        page.tap(f"#suits button[data-value='{new_card[-1]}']")
        screenshot(page, shots / "operator-correct.png", full_page=True)
        page.tap("#correct-send")
        said = wait_js(page, "(t => t.startsWith('line ') && t)"
                       "(document.getElementById('message').textContent)")
        assert said.startswith(f"line {line['line']} ({line['name']}'s lay): {old['card']}")
        assert said.endswith(f"→ {new_card}")
        assert journal_lines(table.current)[line["line"] - 1]["card"] == new_card
        [kept] = list(table.journal_dir.glob("before-correction-*.jsonl"))
        assert kept.read_text() == paused_at

        # End the game (confirmed): archived as it stands; a new one is dealt.
        page.tap("#end")
        page.wait_for_selector("#confirm[open]")
        page.tap("#confirm-yes")
        wait_js(page, "document.getElementById('message').textContent === 'a new game is dealt'")
        [ended] = list(table.journal_dir.glob("2*-banka-bever.jsonl"))
        assert journal_lines(ended)[0]["seats"] == NAMES

        # The evening: the ended game is in the list, and who did what.
        page.tap("#tabs button[data-view=evening]")
        row = page.locator("#games li",
                           has_text="Banka bäver · Astrid, Björn, Cilla, Dagny · ended")
        row.wait_for(timeout=15_000)
        oplog = page.inner_text("#oplog")
        for done in ("Astrid's phone: new", "Astrid's phone: pause",
                     "Astrid's phone: correct", "Astrid's phone: end"):
            assert done in oplog
        screenshot(page, shots / "operator-evening.png", full_page=True)
        log = [json.loads(x) for x in
               (table.journal_dir / "operator-log.jsonl").read_text().splitlines()]
        assert {x["by"] for x in log} == {"Astrid's phone"}

        # The table check: the emulated board online, its clock synced; the display followed.
        page.tap("#tabs button[data-view=check]")
        page.wait_for_selector("#check-parts li")
        report = page.evaluate("fetch('api/check').then(r => r.json())")
        assert report["board"]["online"] and report["board"]["name"] == "virtual board"
        assert report["board"]["synced"] and report["displays"] >= 1
        assert [row["name"] for row in report["seats"][:4]] == NAMES
        assert "Table board on" in page.inner_text("#check-parts")
        page.tap("#tabs button[data-view=phones]")
        page.wait_for_selector("#devices li")
        page.tap("#pair-another")
        page.wait_for_selector("#another:not([hidden])")
        wait_js(page, "document.getElementById('another-qr').naturalWidth > 100")
        screenshot(page, shots / "operator-phones.png", full_page=True)

        # The same page on a laptop.
        laptop = chromium.new_context(**LAPTOP)
        wide = laptop.new_page()
        wide.goto(table.base + "operator/")
        wide.wait_for_selector("#pair:not([hidden])")  # another browser: not paired
        wide.fill("#pair-code", page.inner_text("#another-code"))
        wide.click("#pair-form button[type=submit]")
        wide.wait_for_selector("#table:not([hidden])")
        data = screenshot(wide, shots / "operator-laptop.png")
        assert png_size(data) == (1280, 800)

        assert errors == []
        for name in ("operator-pair", "operator-table", "operator-correct"):
            assert png_size((shots / f"{name}.png").read_bytes())[0] == 390


@pytest.mark.slow
def test_without_a_paired_phones_own_page_nothing_changes(tmp_path: Path) -> None:
    with operator_table(tmp_path / "journals", "--game", "banka-bever", "--players", "4",
                        "--seed", "5", "--speed", "4") as table, browser() as chromium:
        api = table.base + "operator/api/"
        origin = {"Origin": table.base.rstrip("/")}
        # Pair a phone of our own (to hold a real cookie and token), and pause the table so
        # that its journal stands still.
        phone = chromium.new_context(**PHONE)
        page = phone.new_page()
        page.goto(table.base + "operator/")
        page.fill("#pair-code", table.code)
        page.tap("#pair-form button[type=submit]")
        page.wait_for_selector("#table:not([hidden])")
        page.tap("#pause")
        wait_js(page, "document.body.dataset.paused === 'true'")
        cookie = {c["name"]: c["value"] for c in phone.cookies()}["referee_session"]
        csrf = page.evaluate("page.csrf")
        time.sleep(0.3)
        journal = table.current.read_bytes()
        log = (table.journal_dir / "operator-log.jsonl").read_bytes()
        end = {"command": "end", "confirmed": True}

        # 1. No pairing at all: every reading and every change is refused.
        assert call(api + "table")[0] == 401
        status, answer = call(api + "command", body=end, headers=origin)
        assert status == 401 and answer["text"] == "this phone is not paired with the table"
        # A forged cookie is no cookie.
        forged = {"Cookie": "referee_session=" + cookie[:-4] + "AAAA", **origin,
                  "X-CSRF-Token": csrf}
        assert call(api + "command", body=end, headers=forged)[0] == 401

        # 2. A wrong code six times: five wrong, then even the right one is refused.
        for k in range(5):
            status, answer = call(api + "pair", body={"code": f"00000{k}"}, headers=origin)
            assert status == 403 and answer["text"].startswith("wrong code"), answer
        right = page.evaluate("fetch('api/pairing').then(r => r.json())")["code"]
        status, answer = call(api + "pair", body={"code": right}, headers=origin)
        assert status == 403 and "too many wrong codes" in answer["text"], answer

        # 3. A forged CSRF token, with the paired phone's real cookie.
        mine = {"Cookie": f"referee_session={cookie}", **origin}
        status, answer = call(api + "command", body=end,
                              headers={**mine, "X-CSRF-Token": csrf[:-2] + "xx"})
        assert status == 403 and "token" in answer["text"]
        status, answer = call(api + "command", body=end, headers=mine)  # none at all
        assert status == 403

        # 4. From a second origin: another site's page posts with the phone's cookie and
        # token (as if it had stolen the token), or a page of another name for this machine.
        other = {"Cookie": f"referee_session={cookie}", "X-CSRF-Token": csrf,
                 "Origin": "http://evil.example"}
        status, answer = call(api + "command", body=end, headers=other)
        assert status == 403 and "did not come from the operator page" in answer["text"]
        rebound = {**other, "Origin": "http://evil.example:1", "Host": "evil.example:1"}
        assert call(api + "command", body=end, headers=rebound)[0] == 421
        # And in the browser: a page on another origin (localhost, not 127.0.0.1) tries.
        attacker = chromium.new_context(**PHONE)
        evil = attacker.new_page()
        evil.goto(table.base.replace("127.0.0.1", "localhost"))  # the open display
        tried = evil.evaluate("""(api) => fetch(api + 'command', {method: 'POST',
            credentials: 'include', headers: {'Content-Type': 'application/json'},
            body: JSON.stringify({command: 'end', confirmed: true})})
            .then(r => r.status, e => 'blocked')""", api)
        assert tried in (401, 403, "blocked")

        # Nothing changed: the journal, the operator log, the game.
        time.sleep(0.3)
        assert table.current.read_bytes() == journal
        assert (table.journal_dir / "operator-log.jsonl").read_bytes() == log
        assert not list(table.journal_dir.glob("2*.jsonl"))
        # The paired phone itself still may (the same request, from its own page).
        assert page.evaluate("page.table.paused") is True

        # 5. Another site links to the page with words of its own as the table's refusal:
        # not shown (found by a probe of the pages). The table's own refusal of a used
        # pairing link is shown, once.
        stranger = chromium.new_context(**PHONE).new_page()
        stranger.goto(table.base + "operator/?refused=Your%20table%20needs%20evil.example")
        stranger.wait_for_selector("#pair-form")
        time.sleep(0.3)
        assert "evil.example" not in stranger.inner_text("body")
        stranger.goto(table.base + "operator/pair?token=used-or-expired")
        assert stranger.url == table.base + "operator/"
        refusal = ("['has been used or has expired', 'too many wrong codes'].some("
                   "(w) => document.body.innerText.includes(w))")
        wait_js(stranger, refusal)
        stranger.reload()
        stranger.wait_for_selector("#pair-form")
        time.sleep(0.3)
        assert not stranger.evaluate(refusal)


@pytest.mark.slow
def test_a_display_elsewhere_shows_no_code_and_its_console_stays_clean(tmp_path: Path) -> None:
    """While a phone may pair, every display asks for the code; one on another machine (here:
    behind a proxy's header) is told there is none, without a 404 in its console, and shows
    no pairing box; the table's own screen shows the code."""
    with operator_table(tmp_path / "journals", "--game", "banka-bever", "--players", "2",
                        "--seed", "2", "--speed", "4") as table, browser() as chromium:
        elsewhere = chromium.new_context(
            **LAPTOP, extra_http_headers={"X-Forwarded-For": "192.168.1.20"})
        page = elsewhere.new_page()
        errors: list[str] = []
        page.on("pageerror", lambda exc: errors.append(str(exc)))
        page.on("console", lambda m: m.type == "error" and errors.append(
            f"{m.text} ({m.location.get('url')})"))
        asked: list[int] = []
        page.on("response", lambda r: r.url.endswith("/pairing.json")
                and asked.append(r.status))
        page.goto(table.base)
        wait_js(page, "document.querySelectorAll('#seats .seat').length === 2")
        deadline = time.monotonic() + 10
        while not asked and time.monotonic() < deadline:
            page.wait_for_timeout(50)
        assert asked and set(asked) == {200}, asked  # once a pairing window, never a 404
        assert page.evaluate("document.getElementById('pairing').hidden") is True
        assert table.code not in page.inner_text("body")
        screen = chromium.new_context(**LAPTOP).new_page()
        screen.goto(table.base)
        wait_js(screen, "!document.getElementById('pairing').hidden")
        assert screen.inner_text("#pairing-code") == table.code
        assert errors == []


HOSTILE = ['<img src=x onerror="document.title=1">', "</script><script>alert(2)</script>",
           "Bo\" onmouseover=\"alert(3)", "{{7*7}} ${alert(4)}"]


@pytest.mark.slow
def test_names_are_shown_as_typed_never_run(tmp_path: Path) -> None:
    """Seat names that are markup or script reach the operator page and the display as text
    (issue 36's XSS attack, here from the start)."""
    with operator_table(tmp_path / "journals", "--game", "banka-bever", "--players", "2",
                        "--seed", "2", "--speed", "4") as table, browser() as chromium:
        phone = chromium.new_context(**PHONE)
        page = phone.new_page()
        dialogs: list[str] = []
        page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        page.goto(table.base + "operator/")
        page.fill("#pair-code", table.code)
        page.tap("#pair-form button[type=submit]")
        page.wait_for_selector("#table:not([hidden])")
        answer = page.evaluate("""(seats) => fetch('api/command', {method: 'POST',
            headers: {'Content-Type': 'application/json', 'X-CSRF-Token': page.csrf},
            body: JSON.stringify({command: 'new', confirmed: true,
                                  args: {game: 'banka-bever', seats: seats}})})
            .then(r => r.json())""", HOSTILE)
        assert answer["ok"], answer
        wait_js(page, "document.querySelectorAll('#seats .seat').length === 4")
        assert page.locator("#seats .seat .name").all_inner_texts() == HOSTILE
        display = phone.new_page()
        display.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
        display.goto(table.base)
        wait_js(display, "document.querySelectorAll('#seats .seat').length === 4")
        assert display.locator("#seats .seat .name").all_inner_texts() == HOSTILE
        time.sleep(1.0)  # the game goes on: verdicts with the names, the race
        assert dialogs == []
        assert page.title() != "1" and display.title() != "1"
        assert page.locator("#seats img").count() == 0
        assert display.locator("img[src=x]").count() == 0


@pytest.mark.slow
def test_a_phone_sets_up_an_empty_folder_and_runs_the_table(tmp_path: Path) -> None:
    """``referee run`` with no configuration yet, on the mock backend: the phone pairs, names
    the players, learns each pad by pressing it (the mock backend's *Press a mock pad*), saves;
    the table starts with that file and the same phone runs it (docs/operator.md)."""
    import os
    import re
    import subprocess
    import sys

    from tests.web_pages import ROOT

    config = tmp_path / "table.toml"
    proc = subprocess.Popen(
        [sys.executable, "-m", "cardtable.cli", "run", "--config", str(config), "--port", "0",
         "--no-console"], cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        text=True, env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock"})
    assert proc.stdout is not None
    said: list[str] = []
    try:
        base = code = None
        while base is None or code is None:
            line = proc.stdout.readline()
            assert line, "".join(said)
            said.append(line)
            found = re.search(r"set-up wizard: (http://127\.0\.0\.1:\d+/)setup/", line)
            base = found.group(1) if found else base
            found = re.search(r"pairing code (\d{6})", line)
            code = found.group(1) if found else code
        with browser() as chromium:
            phone = chromium.new_context(**PHONE)
            page = phone.new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(base)  # leads to the wizard
            page.wait_for_selector("#pair-form")
            page.fill("#pair-code", code)
            page.fill("#pair-name", "Astrid's phone")
            page.tap("#pair-form button[type=submit]")
            page.wait_for_selector("#wizard:not([hidden])")
            assert "Writing " + str(config) in page.inner_text("#where")
            page.fill("#table-id", "kitchen")
            page.tap("#more")
            for k, name in enumerate(["Astrid", "Björn", "Cilla"]):
                page.fill(f"#seats input[data-seat='{k}']", name)
            for seat in range(3):
                page.tap(f".pad-row[data-seat='{seat}'] button[data-role=slap]")
                page.wait_for_selector("#learning:not([hidden])")
                assert page.inner_text("#learning-text").startswith("Press ")
                if seat == 0:
                    screenshot(page, tmp_path / "setup-learning.png")
                page.tap("#mock-press")
                page.wait_for_selector("#learning", state="hidden")
            lines = page.locator(".pad-line").all_inner_texts()
            assert lines[0::2] == ["slap: GPIO 4", "slap: GPIO 5", "slap: GPIO 6"], lines
            page.tap("#sources input[value=virtual]")
            screenshot(page, tmp_path / "setup.png", full_page=True)
            # Nothing wider than the phone (its browser would zoom out).
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            page.tap("#wizard button[type=submit]")
            # The table starts with the file; the same phone is still paired.
            page.wait_for_url("**/operator/", timeout=20_000)
            page.wait_for_selector("#table:not([hidden])", timeout=20_000)
            assert page.inner_text("#title") == "Banka bäver · table kitchen"
            assert page.locator("#seats .seat .name").all_inner_texts() == [
                "Astrid", "Björn", "Cilla"]
            page.tap("#tabs button[data-view=check]")
            page.wait_for_selector(".check-seat")
            screenshot(page, tmp_path / "operator-check.png", full_page=True)
            assert page.locator(".check-seat").count() == 3
            assert errors == []
        text = config.read_text()
        assert 'id = "kitchen"' in text and "slap = 6" in text and "# the GPIO pads" in text
    finally:
        proc.terminate()
        proc.wait(15)
