"""The browser display for every eye and in either language (issue 35), in headless Chromium
under Playwright, on a table run by ``referee run``'s own service (``referee simulate
--full-stack --operator -o language=sv``, virtual players playing Banka bäver):

- the display in the table's language (Swedish) and switched with ``?lang=en``, screenshots at
  a phone's and a screen's size (``REFEREE_SCREENSHOTS=docs/i18n`` keeps them for the docs);
- spoken verdicts: the switch calls ``speechSynthesis.speak`` with the scene's words and a
  voice of its language (a stub speech engine in the page), and says so when the browser has
  no voice of that language;
- the four-colour suits, the suits' shapes, the light theme, text sized for 3 m, the verdict
  line announced to a screen reader, the settings reached by keyboard;
- axe-core (npm, ``bash .ci/provision``) run in the page: no serious or critical violation in
  either theme, with four colours, in both languages, and on the operator page.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.operator_pages import LAPTOP, PHONE, browser, operator_table, screenshot, wait_js

pytestmark = pytest.mark.slow

AXE = Path(__file__).resolve().parents[2] / ".cache" / "axe" / "node_modules" / "axe-core" / \
    "axe.min.js"

#: A stub of the Web Speech API, put in the page before its scripts: it writes down what it
#: was asked to say (``window.__spoken``). ``window.__voices`` are its voices.
SPEECH_STUB = """
window.__spoken = [];
window.__voices = window.__voices || [{ name: "Stub svenska", lang: "sv-SE" },
                                      { name: "Stub English", lang: "en-GB" }];
class StubUtterance {
  constructor(text) { this.text = text; this.lang = ""; this.voice = null; }
}
Object.defineProperty(window, "SpeechSynthesisUtterance",
  { value: StubUtterance, configurable: true, writable: true });
Object.defineProperty(window, "speechSynthesis", { configurable: true, value: {
  getVoices: () => window.__voices,
  speak(u) {
    window.__spoken.push({ text: u.text, lang: u.lang, voice: u.voice ? u.voice.name : null });
    setTimeout(() => u.onend && u.onend(), 20);
  },
  cancel() {},
  addEventListener() {},
} });
"""


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    with operator_table(tmp_path_factory.mktemp("a11y") / "journals", "--game", "banka-bever",
                        "--players", "4", "--seed", "7", "-o", "language=sv") as t:
        yield t


@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    with browser() as b:
        yield b


def _page(chromium: Any, table: Any, path: str, *, size: dict[str, Any] = LAPTOP,
          stub: str | None = None, **context: Any) -> Any:
    ctx = chromium.new_context(**size, **context)
    if stub:
        ctx.add_init_script(stub)
    page = ctx.new_page()
    page.goto(table.base + path)
    wait_js(page, "document.body.dataset.seq !== '0' && !!document.getElementById('last')"
            ".textContent")
    return page


def test_the_display_speaks_the_tables_language_and_switches_with_lang(chromium, table,
                                                                       tmp_path) -> None:
    for lang, size, label in (("sv", PHONE, "phone"), ("sv", LAPTOP, "screen"),
                              ("en", PHONE, "phone"), ("en", LAPTOP, "screen")):
        page = _page(chromium, table, "" if lang == "sv" else "?lang=en", size=size)
        wait_js(page, f"document.documentElement.lang === '{lang}'")
        text = page.inner_text("body")
        if lang == "sv":
            assert "Högen" in text and "Läs upp besluten" in text, text
            assert "Pile" not in text and "Speak verdicts" not in text
            assert any(w in text for w in ("på tur", "Spelet är slut")), text
        else:
            assert "Pile" in text and "Speak verdicts" in text and "Högen" not in text, text
        screenshot(page, tmp_path / f"display-{lang}-{label}.png")
        page.context.close()


def test_the_speech_switch_speaks_each_new_verdict_in_its_languages_voice(chromium,
                                                                          table) -> None:
    for lang, locale, voice in (("sv", "sv-SE", "Stub svenska"), ("en", "en-GB", "Stub English")):
        page = _page(chromium, table, f"?lang={lang}", stub=SPEECH_STUB)
        assert page.get_attribute("#speech", "aria-pressed") == "false"
        page.click("#speech")  # on
        assert page.get_attribute("#speech", "aria-pressed") == "true"
        spoken = wait_js(page, "window.__spoken.length && window.__spoken", timeout=40)
        assert spoken[0]["lang"] == locale and spoken[0]["voice"] == voice, spoken
        said = spoken[0]["text"]
        assert said
        if lang == "sv":
            assert any(w in said for w in ("kort", "bank", "högen", "utmanar", "Spelet")), said
        assert page.is_hidden("#speech-note")  # a voice of the language: no note
        page.click("#speech")  # off: nothing more is said
        before = page.evaluate("window.__spoken.length")
        page.wait_for_timeout(1500)
        assert page.evaluate("window.__spoken.length") == before
        page.context.close()


def test_without_a_voice_of_its_language_the_page_says_so_and_speaks_anyway(chromium,
                                                                            table) -> None:
    english_only = "window.__voices = [{ name: 'Stub English', lang: 'en-GB' }];" + SPEECH_STUB
    page = _page(chromium, table, "?speech=1", stub=english_only)  # the table's Swedish
    note = wait_js(page, "!document.getElementById('speech-note').hidden && "
                   "document.getElementById('speech-note').textContent")
    assert "ingen röst på det här språket" in note, note
    spoken = wait_js(page, "window.__spoken.length && window.__spoken", timeout=40)
    assert spoken[0]["lang"] == "sv-SE" and spoken[0]["voice"] is None
    page.context.close()
    silent = "delete window.speechSynthesis; delete window.SpeechSynthesisUtterance;"
    page = _page(chromium, table, "?speech=1&lang=en", stub=silent)
    note = wait_js(page, "document.getElementById('speech-note').textContent")
    assert "cannot speak" in note
    page.context.close()


def _colour(page: Any, selector: str) -> str:
    return page.evaluate(f"getComputedStyle(document.querySelector({json.dumps(selector)}))"
                         ".color")


def test_four_colours_shapes_and_the_light_theme(chromium, table, tmp_path) -> None:
    probe = """(() => {
      const box = document.createElement('div'); box.id = 'probe';
      for (const code of ['2C', '2D', '2H', '2S']) box.append(cardEl(code, false), cardText(code));
      document.body.append(box);
      return [...box.children].map((e) => [e.className, getComputedStyle(e).color]);
    })()"""
    two = _page(chromium, table, "?lang=en").evaluate(probe)
    colours = {cls: col for cls, col in two}
    assert colours["card suit-C"] == colours["card suit-S"]  # two colours: clubs as spades
    assert colours["card suit-D red"] == colours["card suit-H red"]
    page = _page(chromium, table, "?lang=en&suits=4")
    screenshot(page, tmp_path / "display-four-colours.png")
    four = dict(page.evaluate(probe))
    assert len({four["card suit-C"], four["card suit-D red"], four["card suit-H red"],
                four["card suit-S"]}) == 4, four
    assert four["card suit-C"] == "rgb(27, 94, 32)" and four["card suit-D red"] == \
        "rgb(13, 71, 161)"  # green clubs and blue diamonds on the card's face
    # The shapes tell the suits apart without colour, and are never small.
    # (the table plays on: wait for a moment with cards on the pile, which a won pile empties)
    sizes = wait_js(page, "[...document.querySelectorAll('#pile .card .suit')].map((e) => "
                    "parseFloat(getComputedStyle(e).fontSize)).filter((x) => x > 0)", timeout=40)
    assert sizes and min(sizes) >= 40, sizes
    symbols = page.evaluate("[...document.querySelectorAll('#probe .suit')].map((e) => "
                            "e.textContent)")
    assert symbols == ["♣", "♦", "♥", "♠"]
    page.context.close()
    light = _page(chromium, table, "?lang=en&theme=light")
    bg = light.evaluate("getComputedStyle(document.body).backgroundColor")
    assert bg == "rgb(244, 241, 232)", bg
    screenshot(light, tmp_path / "display-light.png")
    light.context.close()


def test_text_is_sized_for_three_metres_and_the_verdict_line_is_announced(chromium,
                                                                          table) -> None:
    """At 1920 × 1080 (a TV three metres away): the verdict line and whose turn it is in
    letters of 48 px and more, and no text under 20 px."""
    page = _page(chromium, table, "?lang=en", size={"viewport": {"width": 1920,
                                                                 "height": 1080}})
    big = page.evaluate("['#last', '#turn'].map((s) => "
                        "parseFloat(getComputedStyle(document.querySelector(s)).fontSize))")
    assert min(big) >= 48, big
    smallest = page.evaluate("""(() => {
      let least = 1e9, where = null;
      const walk = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
      while (walk.nextNode()) {
        const e = walk.currentNode.parentElement;
        if (!walk.currentNode.textContent.trim() || !e.offsetParent || e.closest('svg')) continue;
        const size = parseFloat(getComputedStyle(e).fontSize);
        if (size < least) { least = size; where = e.className || e.tagName; }
      }
      return [least, where];
    })()""")
    assert smallest[0] >= 20, smallest
    last = page.locator("#last")
    assert last.get_attribute("aria-live") == "polite" and last.get_attribute("role") == "status"
    page.context.close()


def test_the_settings_are_reached_and_pressed_by_keyboard(chromium, table) -> None:
    page = _page(chromium, table, "?lang=en")
    reached = []
    for _ in range(8):
        page.keyboard.press("Tab")
        reached.append(page.evaluate("document.activeElement.id || "
                                     "document.activeElement.textContent"))
        if reached[-1] == "suits4":
            break
    assert reached[:3] == ["speech", "sounds", "suits4"], reached
    page.keyboard.press("Enter")
    assert page.evaluate("document.body.classList.contains('suits4')")
    page.keyboard.press("Space")
    assert not page.evaluate("document.body.classList.contains('suits4')")
    page.context.close()


def _axe(page: Any) -> list[dict[str, Any]]:
    if not AXE.exists():
        reason = "axe-core is not installed (bash .ci/provision)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    page.evaluate(AXE.read_text(encoding="utf-8"))
    result = page.evaluate("axe.run(document, { resultTypes: ['violations'] })")
    return [{"id": v["id"], "impact": v["impact"], "help": v["help"],
             "nodes": [n["target"] for n in v["nodes"]][:5]}
            for v in result["violations"]]


@pytest.mark.parametrize("path", ["?lang=sv", "?lang=en", "?lang=en&theme=light",
                                  "?lang=sv&theme=light&suits=4", "?lang=en&suits=4"])
def test_axe_finds_no_serious_violation_on_the_display(chromium, table, path) -> None:
    page = _page(chromium, table, path, bypass_csp=True)
    found = _axe(page)
    assert found == [], json.dumps(found, indent=1)  # not even a minor one
    page.context.close()


def test_axe_finds_no_serious_violation_on_the_operator_page(chromium, table) -> None:
    ctx = chromium.new_context(**PHONE, bypass_csp=True)
    page = ctx.new_page()
    page.goto(table.base + "operator/")
    page.fill("#pair-code", table.code)
    page.click("#pair-form button[type=submit]")
    wait_js(page, "document.body.dataset.paired === 'true' && "
            "document.documentElement.lang === 'sv'")
    wait_js(page, "document.getElementById('headline').textContent")
    for view in ("table", "new", "evening", "phones", "check"):
        page.click(f"#tabs button[data-view={view}]")
        page.wait_for_timeout(500)
        found = _axe(page)
        serious = [v for v in found if v["impact"] in ("serious", "critical")]
        assert serious == [], (view, json.dumps(found, indent=1))
    page.goto(table.base + "setup/")
    wait_js(page, "!document.getElementById('wizard').hidden && "
            "document.documentElement.lang === 'sv'")
    found = _axe(page)
    assert [v for v in found if v["impact"] in ("serious", "critical")] == [], found
    ctx.close()
