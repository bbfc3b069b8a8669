"""A deck enrolled from a phone (the wizard's *Enrol a deck*, issue 33): the camera asks for
each of the 52 cards in turn, the page follows, the deck file is written beside the
configuration and the next save names it as ``[camera] deck``; what a page may not ask is
refused in words, and stopping writes nothing.

The camera is a fake one that films whichever card the enrolment asks for (a rendered photo of
the allowed deck ``anglo``), so the whole enrolment runs here in a few seconds."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest

cv2 = pytest.importorskip("cv2")

import cardtable.operator.setup as setup  # noqa: E402
from cardtable.config import load_config  # noqa: E402
from cardtable.i18n import ENGLISH_LANGUAGE, language  # noqa: E402
from cardtable.operator.enrolment import Enrolment  # noqa: E402
from cardtable.operator.guard import GuardedSite  # noqa: E402
from cardtable.operator.setup import Answers  # noqa: E402
from cardtable.operator.wizard import SetupSite, Wizard  # noqa: E402
from cardtable.wiring import camera_edge  # noqa: E402
from hardware.camera.reader.sources import Frame  # noqa: E402
from hardware.camera.reader.templates import EnrolledDeck  # noqa: E402
from referee.cards import Card  # noqa: E402
from tests.hardware.camera.conftest import need_artwork  # noqa: E402

DECK = "anglo"
CAMERA = "/dev/video3"


class FakeCamera:
    """A camera over the table that films the card the enrolment asks for (a blank table
    before the first); ``fail_after``: frames before it fails as an unplugged camera does."""

    def __init__(self, asked: Any, fail_after: int | None = None,
                 pause: Any = lambda: 0.002, kind: str = "bgr",
                 silent_after: int | None = None) -> None:
        self.asked = asked  # () -> the card asked for now
        self.fail_after = fail_after
        self.pause = pause  # () -> seconds between frames
        self.kind = kind  # "bgr", "grey" (a black-and-white camera), "bgra" or "float"
        self.silent_after = silent_after  # frames before it sends no more, and hangs
        self.closed = threading.Event()
        self._pictures: dict[str | None, Any] = {}

    def frames(self) -> Iterator[Frame]:
        from hardware.camera.synthetic.evaluate import photo
        from hardware.camera.synthetic.scene import render

        t = 0
        while not self.closed.is_set():
            if self.fail_after is not None and t >= self.fail_after:
                raise OSError(5, "Input/output error", CAMERA)
            card = self.asked()
            if card not in self._pictures:
                self._pictures[card] = (render(photo(DECK, Card.parse(card), 7)) if card
                                        else cv2.imread("docs/camera/queen.jpg") * 0 + 90)
            if self.silent_after is not None and t >= self.silent_after:
                self.closed.wait()  # a camera that sends nothing until it is closed
                return
            t += 1
            image = self._pictures[card]
            if self.kind == "grey":
                image = cv2.cvtColor(image, cv2.COLOR_BGR2GRAY)
            elif self.kind == "bgra":
                image = cv2.cvtColor(image, cv2.COLOR_BGR2BGRA)
            elif self.kind == "float":  # a program's frames, not a camera's
                image = image.astype("float32")
            yield Frame(t * 33_000_000, image)
            time.sleep(self.pause())

    def close(self) -> None:
        self.closed.set()


def wait(check: Any, timeout: float = 120.0) -> Any:
    deadline = time.monotonic() + timeout
    while not (got := check()):
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)
    return got


@pytest.mark.slow
def test_an_enrolment_asks_for_each_card_and_writes_the_deck(tmp_path: Path) -> None:
    need_artwork(DECK)
    cameras: list[FakeCamera] = []

    def opener(source: str) -> FakeCamera:
        assert source == CAMERA
        cameras.append(FakeCamera(lambda: enrolment.status()["card"]))
        return cameras[-1]

    enrolment = Enrolment(tmp_path, opener=opener, clock=lambda: 1_790_000_000.0)
    asked: list[str] = []

    def follow() -> bool:
        card = enrolment.status()["card"]
        if card and (not asked or asked[-1] != card):
            asked.append(card)
        return not enrolment.running()

    enrolment.start(CAMERA)
    with pytest.raises(RuntimeError, match="being enrolled"):
        enrolment.start(CAMERA)
    wait(follow)
    status = enrolment.status()
    assert status["state"] == "done", status
    assert status["done"] == status["total"] == 52
    assert asked[:3] == ["2C", "3C", "4C"] and len(asked) >= 40  # polled: some pass unseen
    assert status["deck"] == time.strftime("decks/deck-%Y%m%d-%H%M%S.npz",
                                           time.localtime(1_790_000_000.0))
    deck = EnrolledDeck.load(tmp_path / status["deck"])
    assert len(set(deck.cards)) == 52
    assert status["letters"] == {"J": ["J"], "Q": ["Q"], "K": ["K"], "A": ["A"]}
    assert status["unread"] == [] and status["checking"] is False  # measured on this deck
    assert cameras[0].closed.is_set()
    assert enrolment.picture() is not None and enrolment.picture()[:2] == b"\xff\xd8"
    assert status["seeing"] == "still"  # the last card, as it was taken


def test_a_stopped_enrolment_writes_nothing_and_a_failing_camera_says_why(
        tmp_path: Path) -> None:
    need_artwork(DECK)
    enrolment = Enrolment(tmp_path, opener=lambda s: FakeCamera(
        lambda: enrolment.status()["card"]))
    assert enrolment.status()["state"] == "idle" and enrolment.picture() is None
    enrolment.start(CAMERA)
    wait(lambda: enrolment.status()["done"] >= 2)
    enrolment.stop()
    status = enrolment.status()  # over at once for the page
    assert status["state"] == "stopped" and status["deck"] is None, status
    assert status["why"] == "stopped from the page"
    assert enrolment.status(language("sv"))["why"] == "stoppad från sidan"  # the page's words
    enrolment.join(10)
    assert enrolment.status() == status  # the thread's last words are not heard
    assert not (tmp_path / "decks").exists()

    failing = Enrolment(tmp_path, opener=lambda s: FakeCamera(
        lambda: failing.status()["card"], fail_after=20))
    failing.start(CAMERA)
    failing.join(60)
    status = failing.status()
    assert status == {**status, "state": "failed", "why": f"the camera {CAMERA} failed: "
                      "input/output error: the disk or the device failed"}, status
    assert failing.status(language("sv"))["why"] == (
        f"kameran {CAMERA} slutade fungera: in/ut-fel: disken eller enheten fungerar inte")
    assert not (tmp_path / "decks").exists()
    # a camera that cannot be opened is said at once, to the page's request
    broken = Enrolment(tmp_path, opener=lambda s: (_ for _ in ()).throw(
        OSError(f"{s}: cannot open the camera")))
    with pytest.raises(OSError, match="cannot open"):
        broken.start(CAMERA)
    assert broken.status()["state"] == "idle"


def test_a_camera_slow_to_open_holds_up_nothing_and_is_opened_once(tmp_path: Path) -> None:
    """The page polls the status while a camera takes its time to open: each answer comes at
    once (the status was waited for on the server's loop), and a second start is refused."""
    opening, opened = threading.Event(), []

    def opener(source: str) -> FakeCamera:
        opened.append(source)
        opening.wait(5)
        return FakeCamera(lambda: None, fail_after=0)

    enrolment = Enrolment(tmp_path, opener=opener)
    starter = threading.Thread(target=enrolment.start, args=(CAMERA,))
    starter.start()
    wait(lambda: opened, 5)
    t0 = time.monotonic()
    assert enrolment.status()["state"] == "idle"
    assert time.monotonic() - t0 < 0.5
    with pytest.raises(RuntimeError, match="being enrolled"):
        enrolment.start(CAMERA)
    opening.set()
    starter.join(5)
    enrolment.join(5)
    assert opened == [CAMERA] and enrolment.status()["state"] == "failed"


def test_a_black_and_white_or_four_channel_camera_is_watched_as_the_table_watches(
        tmp_path: Path) -> None:
    """A grey camera (one channel) is told "no colour" and waited on, never a crash; a
    camera of four channels (BGRA) enrols as one of three."""
    need_artwork(DECK)
    for kind in ("grey", "bgra"):
        holder: list[Enrolment] = []
        enrolment = Enrolment(tmp_path, opener=lambda s, kind=kind, holder=holder: FakeCamera(
            lambda: holder[0].status()["card"], kind=kind))
        holder.append(enrolment)
        enrolment.start(CAMERA)
        key, least = ("no_colour", True) if kind == "grey" else ("done", 2)
        wait(lambda holder=holder, key=key, least=least: holder[0].status()[key] >= least, 60)
        assert enrolment.status()["state"] == "running", enrolment.status()
        assert enrolment.picture() is not None
        enrolment.stop()
        enrolment.join(10)


def test_a_camera_that_sends_nothing_is_stopped_at_once_and_started_again(
        tmp_path: Path) -> None:
    need_artwork(DECK)
    cameras: list[FakeCamera] = []

    def opener(source: str) -> FakeCamera:
        cameras.append(FakeCamera(lambda: enrolment.status()["card"],
                                  silent_after=3 if not cameras else None))
        return cameras[-1]

    enrolment = Enrolment(tmp_path, opener=opener)
    enrolment.start(CAMERA)
    wait(lambda: enrolment.status()["seeing"], 30)
    time.sleep(0.2)
    enrolment.stop()
    assert enrolment.status()["state"] == "stopped"
    cameras[0].close()  # as a hung camera lets go at last
    enrolment.start(CAMERA)  # a new enrolment, heard alone
    wait(lambda: enrolment.status()["done"] >= 1, 60)
    assert enrolment.status()["state"] == "running"
    enrolment.stop()
    enrolment.join(10)


def test_frames_no_camera_gives_end_the_enrolment_in_words(tmp_path: Path) -> None:
    need_artwork(DECK)
    enrolment = Enrolment(tmp_path, opener=lambda s: FakeCamera(
        lambda: enrolment.status()["card"], kind="float"))
    enrolment.start(CAMERA)
    enrolment.join(30)
    status = enrolment.status()
    assert status["state"] == "failed", status
    assert status["why"] == ("the camera's frames cannot be read (a frame of float32: the "
                             "camera's frames are 8-bit (uint8))")
    assert enrolment.status(language("sv"))["why"].startswith(
        "kamerans bildrutor kan inte läsas (a frame of float32")
    assert not (tmp_path / "decks").exists()


@pytest.mark.slow
def test_stopped_while_it_checks_nothing_is_written_and_a_write_that_fails_is_kept_to_retry(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import hardware.camera.reader.enroll as enroll

    need_artwork(DECK)
    checking, go_on = threading.Event(), threading.Event()
    real_check = enroll.self_check

    def slow_check(*args: Any, **kw: Any) -> Any:
        checking.set()
        go_on.wait(10)
        return real_check(*args, **kw)

    monkeypatch.setattr(enroll, "self_check", slow_check)
    enrolment = Enrolment(tmp_path, opener=lambda s: FakeCamera(
        lambda: enrolment.status()["card"]))
    enrolment.start(CAMERA)
    wait(lambda: checking.is_set())
    assert enrolment.status()["checking"] is True
    enrolment.stop()
    go_on.set()
    enrolment.join(30)
    assert enrolment.status()["state"] == "stopped" and not (tmp_path / "decks").exists()

    monkeypatch.setattr(enroll, "self_check", real_check)
    (tmp_path / "decks").write_text("a file where the folder goes")
    enrolment.start(CAMERA)
    enrolment.join(120)
    status = enrolment.status()
    assert status["state"] == "failed" and status["why"] == f"{tmp_path / 'decks'} is not a folder"
    # and the page in Swedish says so in Swedish
    assert enrolment.status(language("sv"))["why"] == f"{tmp_path / 'decks'} är inte en mapp"
    # the 52 cards are not asked for again: room made, the deck kept in memory is written
    assert status["can_write_again"] is True
    (tmp_path / "decks").unlink()
    enrolment.write_again()
    status = enrolment.status()
    assert status["state"] == "done" and status["can_write_again"] is False, status
    assert EnrolledDeck.load(tmp_path / status["deck"]).cards
    assert status["letters"] == {"J": ["J"], "Q": ["Q"], "K": ["K"], "A": ["A"]}
    with pytest.raises(RuntimeError, match="no enrolled deck waiting"):
        enrolment.write_again()
    # a folder that cannot be made is named (a read-only /etc under the service had said only
    # "Read-only file system")
    def read_only(self: Path, *a: Any, **kw: Any) -> None:
        raise OSError(30, "Read-only file system", str(self))

    monkeypatch.setattr(Path, "mkdir", read_only)
    with pytest.raises(OSError, match=r"decks cannot be made \(the file system is read-only\)"):
        enrolment._write(b"deck")


def test_a_frame_that_is_no_picture_gives_no_picture_not_an_error(tmp_path: Path) -> None:
    import numpy as np

    enrolment = Enrolment(tmp_path)
    for frame in (np.zeros((0, 0, 3), np.uint8), b"raw bytes", np.zeros((40, 40, 5), np.uint8)):
        enrolment._latest = frame
        assert enrolment.picture() is None


def test_a_running_table_that_watches_the_camera_enrols_nothing(tmp_path: Path) -> None:
    site = GuardedSite()
    running = SimpleNamespace(config=SimpleNamespace(card_source="camera"), edges=[])
    why = Wizard(site, tmp_path / "table.toml", service=running)._why_no_enrolment(
        ENGLISH_LANGUAGE)
    assert why is not None and "the running table watches the camera" in why
    running.config.card_source = "board"
    assert Wizard(GuardedSite(), tmp_path / "table.toml", service=running)._why_no_enrolment(
        ENGLISH_LANGUAGE) is None
    assert "without a configuration file" in str(Wizard(GuardedSite(), None)._why_no_enrolment(
        ENGLISH_LANGUAGE))


def test_a_camera_that_cannot_be_opened_is_said_in_the_pages_words() -> None:
    import errno

    from cardtable.operator.wizard import camera_refused
    from hardware.camera.reader.sources import CannotOpen, NoPicamera, SourceError

    def said(exc: Exception, lang: str = "en") -> tuple[int, str]:
        answer = camera_refused(CAMERA, exc, language(lang))
        return answer.status, json.loads(answer.text or "{}")["text"]

    assert said(CannotOpen(CAMERA)) == (503, f"the camera {CAMERA} cannot be opened: is it "
                                        "plugged in, and not in use by another program?")
    assert said(CannotOpen(CAMERA), "sv")[1] == (
        f"kameran {CAMERA} kan inte öppnas: är den inkopplad, och används den inte av ett "
        "annat program?")
    busy = OSError(errno.EBUSY, "Device or resource busy")
    assert said(busy)[1] == f"the camera {CAMERA} cannot be opened (in use by another program)"
    assert said(busy, "sv")[1] == f"kameran {CAMERA} kan inte öppnas (används av ett annat program)"
    assert said(ImportError("cv2"), "sv")[1].startswith("kameratillägget är inte installerat")
    assert said(NoPicamera()) == (503, str(NoPicamera()))
    assert said(NoPicamera(), "sv")[1].startswith("picamera2 är inte installerat (på Pi:n: apt "
                                                  "install python3-picamera2")
    gone = SourceError("clip.mp4: no such file")
    assert said(gone)[1] == f"{CAMERA}: {gone}"  # the camera layer's own words


def test_a_page_names_only_a_deck_the_wizard_enrolled() -> None:
    assert Answers.from_json({"camera_deck": "decks/deck-20261207-061717.npz"}).camera_deck
    for name in ("../deck.npz", "/etc/passwd", "decks/../table.toml", "decks/.hidden.npz",
                 "decks/x.txt", "deck.npz", 7):
        with pytest.raises(ValueError, match="camera_deck"):
            Answers.from_json({"camera_deck": name})
    # a deck a person wrote in the file is kept when the page sends it back unchanged
    saved = Answers(camera_deck="/home/anna/my-deck.npz")
    assert Answers.from_json({"camera_deck": "/home/anna/my-deck.npz"},
                             saved=saved).camera_deck == "/home/anna/my-deck.npz"


def client() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def call(s: aiohttp.ClientSession, method: str, url: str, body: Any = None,
               csrf: str | None = None) -> tuple[int, Any]:
    origin = url.split("/setup/")[0].split("/operator/")[0]
    headers = {"Origin": origin, **({"X-CSRF-Token": csrf} if csrf else {})}
    async with s.request(method, url, json=body, headers=headers) as r:
        raw = await r.read()
        return r.status, (json.loads(raw) if r.content_type == "application/json" else raw)


@pytest.mark.slow
def test_a_phone_enrols_the_deck_and_the_table_reads_with_it(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Through the wizard's routes, as the page calls them: refusals first, then an enrolment
    followed to its end, its picture, and the save that names the deck in ``table.toml``."""
    need_artwork(DECK)
    monkeypatch.setattr(setup, "cameras", lambda: [CAMERA])
    path = tmp_path / "table.toml"
    holder: dict[str, SetupSite] = {}
    site = SetupSite(path, port=0, camera_opener=lambda s: FakeCamera(
        lambda: holder["site"].wizard.enrolment.status()["card"]))
    holder["site"] = site

    async def go() -> Path | None:
        running = asyncio.create_task(site.run())
        while not site.server.port:
            await asyncio.sleep(0.01)
        base = site.url + "setup/api/"
        async with client() as s:
            status, _ = await call(s, "GET", base + "enrol")
            assert status == 401  # a phone that is not paired sees nothing
            code = site.pairing.current(site.clock()).code
            status, answer = await call(s, "POST", site.url + "operator/api/pair",
                                        {"code": code, "name": "Anna's phone"})
            csrf = answer["csrf"]
            status, answer = await call(s, "POST", base + "enrol", {"source": CAMERA})
            assert status == 403  # a change without the phone's token
            for source in ("/etc/passwd", "http://10.0.0.1/x", "/dev/video9", None, 3):
                status, answer = await call(s, "POST", base + "enrol", {"source": source},
                                            csrf)
                assert status == 400 and answer["text"] == "not a camera of this machine"
            status, answer = await call(s, "GET", base + "enrol.jpg")
            assert status == 404 and answer["text"] == "no picture yet"
            status, answer = await call(s, "POST", base + "enrol/write", {}, csrf)
            assert status == 409 and answer["text"] == (
                "there is no enrolled deck waiting to be written")
            status, answer = await call(s, "POST", base + "enrol", {"source": CAMERA}, csrf)
            assert status == 200 and answer["state"] == "running", answer
            status, again = await call(s, "POST", base + "enrol", {"source": CAMERA}, csrf)
            assert status == 409 and "being enrolled" in again["text"]
            status, state = await call(s, "GET", base + "state")
            status, refused = await call(s, "POST", base + "save",
                                         {"answers": state["answers"]}, csrf)
            assert status == 409 and "being enrolled" in refused["text"]  # its deck not lost
            while True:
                status, answer = await call(s, "GET", base + "enrol")
                if answer["state"] != "running":
                    break
                await asyncio.sleep(0.1)
            assert answer["state"] == "done" and answer["done"] == 52, answer
            status, picture = await call(s, "GET", base + "enrol.jpg")
            assert status == 200 and picture[:2] == b"\xff\xd8"
            status, state = await call(s, "GET", base + "state")
            assert state["enrolment"]["deck"] == answer["deck"] and state["enrol"] is None
            answers = dict(state["answers"], card_source="camera", camera_source=CAMERA,
                           camera_deck="decks/none-such.npz")
            status, refused = await call(s, "POST", base + "save", {"answers": answers}, csrf)
            assert status == 400 and refused["text"] == (
                "camera_deck: decks/none-such.npz cannot be used (no such file or folder): "
                "enrol the deck again"), refused
            status, refused = await call(s, "POST", base + "save?lang=sv", {"answers": answers},
                                         csrf)
            assert status == 400 and refused["text"] == (
                "camera_deck: decks/none-such.npz kan inte användas (filen eller mappen finns "
                "inte): lär in kortleken igen"), refused
            (tmp_path / "decks" / "garbage.npz").write_bytes(b"PK\x03\x04 not a deck")
            status, refused = await call(s, "POST", base + "save", {
                "answers": dict(answers, camera_deck="decks/garbage.npz")}, csrf)
            assert status == 400 and refused["text"].startswith(
                "camera_deck: decks/garbage.npz cannot be used (is not a camera deck file"), refused
            assert not path.exists()
            answers["camera_deck"] = answer["deck"]
            status, saved = await call(s, "POST", base + "save", {"answers": answers}, csrf)
            assert status == 200, saved
        return await asyncio.wait_for(running, 5)

    assert asyncio.run(go()) == path
    config = load_config(path)
    assert config.card_source == "camera"
    deck = config.raw["camera"]["deck"]
    assert deck.startswith("decks/deck-") and f'deck = "{deck}"' in path.read_text()
    # what referee run builds from the file: the camera's recogniser with the enrolled deck
    edge = camera_edge(config, open_source=lambda: None)
    assert edge.recogniser.deck is not None
    assert edge.recogniser.deck.cards == EnrolledDeck.load(tmp_path / deck).cards


@pytest.mark.slow
def test_a_phone_page_walks_through_the_deck_card_by_card(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The wizard's page in a phone's browser: *Enrol a deck* shows the card asked for, the
    count and what the camera sees, and at the end says the deck is enrolled; saving writes
    it. A second enrolment stopped from the page writes nothing."""
    import cardtable.operator.wizard as wizard
    from tests.cardtable.test_display_a11y import _axe
    from tests.operator_pages import PHONE, browser, screenshot, wait_js

    need_artwork(DECK)
    monkeypatch.setattr(setup, "cameras", lambda: [CAMERA])
    monkeypatch.setattr(wizard, "cameras", lambda: [CAMERA])
    path = tmp_path / "table.toml"
    holder: dict[str, Any] = {}
    slow = threading.Event()  # set: a frame a second (the page can be looked at)

    def asked() -> str | None:
        card: str | None = holder["site"].wizard.enrolment.status()["card"]
        return card

    site = SetupSite(path, port=0, camera_opener=lambda s: FakeCamera(
        asked, pause=lambda: 1.0 if slow.is_set() else 0.002))
    holder["site"] = site
    loop = asyncio.new_event_loop()
    done: dict[str, Any] = {}

    def serve() -> None:
        done["path"] = loop.run_until_complete(site.run())

    server = threading.Thread(target=serve, daemon=True)
    server.start()
    wait(lambda: site.server.port, 10)
    time.sleep(0.1)
    shots = tmp_path / "shots"
    shots.mkdir()
    try:
        with browser() as chromium:
            # bypass_csp: axe-core is evaluated in the page (the page's own CSP forbids it)
            page = chromium.new_context(**PHONE, bypass_csp=True).new_page()
            errors: list[str] = []
            page.on("pageerror", lambda exc: errors.append(str(exc)))
            page.goto(site.url + "setup/")
            page.wait_for_selector("#pair-form")
            page.fill("#pair-code", site.pairing.current(site.clock()).code)
            page.fill("#pair-name", "Astrid's phone")
            page.tap("#pair-form button[type=submit]")
            page.wait_for_selector("#wizard:not([hidden])")
            page.tap("#sources input[value=camera]")
            assert page.inner_text("#deck-note") == (
                "No deck enrolled: cards are read out of the box.")
            # The first look, a frame a second: the page asks for the 2 of clubs.
            slow.set()
            page.tap("#enrol")
            page.wait_for_selector("#enrolling:not([hidden])")
            page.wait_for_selector("#enrol-picture:not([hidden])")
            wait_js(page, "document.getElementById('enrol-card').textContent == '2♣'")
            assert page.inner_text("#enrol-count") == "Card 1 of 52"
            wait_js(page, "document.getElementById('enrol-picture').naturalWidth > 0")
            wait_js(page, "document.getElementById('enrol-seeing').textContent != ''")
            assert page.inner_text("#enrol-seeing") in (
                "A card is there: hold still…", "A card is lying still: taking it…")
            page.locator("#enrolling").scroll_into_view_if_needed()
            screenshot(page, shots / "setup-enrol.png")
            assert page.evaluate("document.documentElement.scrollWidth") <= 390
            found = _axe(page)
            assert [v for v in found if v["impact"] in ("serious", "critical")] == [], found
            # Stopped from the page: nothing written.
            page.tap("#enrol-stop")
            page.wait_for_selector("#enrolling", state="hidden")
            assert page.inner_text("#message") == "Enrolling stopped: nothing was written."
            assert not (tmp_path / "decks").exists()
            # Again, and the camera films each card asked for.
            slow.clear()
            page.tap("#enrol")
            page.wait_for_selector("#enrolling:not([hidden])")
            page.wait_for_selector("#enrolling", state="hidden", timeout=120_000)
            said = page.inner_text("#message")
            assert said.startswith("The deck is enrolled as decks/deck-"), said
            assert said.endswith(": save the set-up to use it."), said
            assert page.inner_text("#enrol-result") == (
                "Its index prints J = J, Q = Q, K = K, A = A. Self-check: each card, read again "
                "from its photo turned round and askew, was read right.")
            page.locator("#enrol-result").scroll_into_view_if_needed()
            screenshot(page, shots / "setup-enrolled.png")
            assert page.inner_text("#deck-note").startswith("Deck: decks/deck-")
            # Opened again before it was saved, the page still has the deck.
            page.reload()
            page.wait_for_selector("#wizard:not([hidden])")
            page.tap("#sources input[value=camera]")
            assert page.inner_text("#deck-note").startswith("Deck: decks/deck-")
            page.tap("#wizard button[type=submit]")
            wait(lambda: "path" in done, 20)
            assert errors == []
    finally:
        if "path" not in done:
            loop.call_soon_threadsafe(lambda: site.saved and site.saved.cancel())
        server.join(10)
    assert done["path"] == path
    assert 'deck = "decks/deck-' in path.read_text()


def test_two_decks_of_one_second_are_both_kept(tmp_path: Path) -> None:
    enrolment = Enrolment(tmp_path, clock=lambda: 1_790_000_000.0)
    first, second = enrolment._write(b"one"), enrolment._write(b"two")
    assert second == first.removesuffix(".npz") + "-2.npz"
    assert (tmp_path / first).read_bytes() == b"one" and (tmp_path / second).read_bytes() == b"two"


def test_a_deck_is_checked_only_where_the_camera_is_the_card_source(tmp_path: Path) -> None:
    """A deck a page names but the table would not use (another card source) does not stop
    the save: table.toml writes no [camera] section then."""
    path = tmp_path / "table.toml"
    site = SetupSite(path, port=0)

    async def go() -> Path | None:
        running = asyncio.create_task(site.run())
        while not site.server.port:
            await asyncio.sleep(0.01)
        async with client() as s:
            code = site.pairing.current(site.clock()).code
            _, answer = await call(s, "POST", site.url + "operator/api/pair",
                                   {"code": code, "name": "Anna's phone"})
            _, state = await call(s, "GET", site.url + "setup/api/state")
            status, saved = await call(s, "POST", site.url + "setup/api/save", {"answers": dict(
                state["answers"], card_source="virtual", camera_deck="decks/gone.npz")},
                answer["csrf"])
            assert status == 200, saved
        return await asyncio.wait_for(running, 5)

    assert asyncio.run(go()) == path
    assert "[camera]" not in path.read_text() and "decks/gone.npz" not in path.read_text()
