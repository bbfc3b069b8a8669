"""The catalogs of the referee's words (issue 35): every message of the sources translated in
every language, the compiled catalogs fresh, placeholders kept, plurals right, every verdict
and notice said in both languages, the languages chosen as docs/i18n.md says.

CI fails here when a message has no translation (``make messages`` and a translator's work are
due) or a ``.mo`` is older than its ``.po`` (``make catalogs``)."""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

pytest.importorskip("babel", reason="Babel (the dev extra) extracts and compiles the catalogs")

from babel.messages.frontend import CommandLineInterface  # noqa: E402
from babel.messages.mofile import write_mo  # noqa: E402
from babel.messages.pofile import read_po  # noqa: E402

from cardtable import i18n  # noqa: E402
from cardtable.i18n import (  # noqa: E402
    check_language,
    language,
    normalize,
    page_catalog,
    system_language,
    table_language,
)
from referee.describe import (  # noqa: E402
    COUNTED,
    PILE_WON,
    REFUSALS,
    describe,
    refusal_words,
    tally_words,
)
from referee.errors import OptionError  # noqa: E402
from referee.model import NOTICE_KINDS, VERDICT_KINDS  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
LOCALE = ROOT / "cardtable" / "locale"
#: The extraction of each domain, as the Makefile's ``messages`` runs it.
EXTRACT = {
    "referee": ["-F", "cardtable/locale/python.cfg", "-k", "N_", "-k", "Nn_:1,2",
                "-k", "_option:2"],
    "pages": ["-F", "cardtable/locale/pages.cfg", "-k", "t", "-k", "tn:1,2"],
}
LANGUAGES = [p.name for p in sorted(LOCALE.iterdir()) if (p / "LC_MESSAGES").is_dir()]
NAMES = ["Anna", "Bo", "Cia", "Dan"]


def extract(domain: str, out: Path) -> dict[str, object]:
    """The messages of a domain's sources (msgid → the message), extracted by Babel from this
    checkout exactly as ``make messages`` does."""
    argv = ["pybabel", "-q", "extract", "--sort-output", "--add-location=file",
            "-c", "Translators:", *EXTRACT[domain], "-o", str(out), str(ROOT)]
    with contextlib.chdir(ROOT):
        CommandLineInterface().run(argv)
    with open(out, "rb") as fh:
        return {m.id if isinstance(m.id, str) else m.id[0]: m for m in read_po(fh) if m.id}


@pytest.fixture(scope="module")
def sources(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, object]]:
    tmp = tmp_path_factory.mktemp("pot")
    return {d: extract(d, tmp / f"{d}.pot") for d in EXTRACT}


def catalog(lang: str, domain: str):  # type: ignore[no-untyped-def]
    with open(LOCALE / lang / "LC_MESSAGES" / f"{domain}.po", "rb") as fh:
        return read_po(fh)


def placeholders(text: str) -> set[str]:
    return {m.split(":")[0].split("!")[0] for m in re.findall(r"(?<!\{)\{([^{}]*)\}", text)}


def test_the_makefile_extracts_as_the_test_does() -> None:
    makefile = (ROOT / "Makefile").read_text()
    for flags in EXTRACT.values():
        assert " ".join(flags) in makefile.replace("$(LOCALE)", "cardtable/locale")


def test_there_is_a_language_besides_english() -> None:
    assert "sv" in LANGUAGES
    assert i18n.languages() == ("en", *LANGUAGES)


@pytest.mark.parametrize("domain", sorted(EXTRACT))
def test_the_templates_hold_every_message_of_the_sources(domain: str, sources) -> None:
    with open(LOCALE / f"{domain}.pot", "rb") as fh:
        pot = {m.id if isinstance(m.id, str) else m.id[0] for m in read_po(fh) if m.id}
    assert set(sources[domain]) == pot, "run make messages"
    assert len(pot) > (300 if domain == "referee" else 100)


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("domain", sorted(EXTRACT))
def test_every_message_of_the_sources_is_translated(lang: str, domain: str, sources) -> None:
    po = {m.id if isinstance(m.id, str) else m.id[0]: m for m in catalog(lang, domain) if m.id}
    untranslated = []
    for msgid, source in sources[domain].items():
        got = po.get(msgid)
        plural = isinstance(source.id, tuple)  # type: ignore[attr-defined]
        if (got is None or got.fuzzy or isinstance(got.id, tuple) != plural
                or not (all(got.string) if plural else got.string)):
            untranslated.append(msgid)
    assert untranslated == [], f"{lang} {domain}: no translation (make messages, translate)"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("domain", sorted(EXTRACT))
def test_the_compiled_catalogs_are_fresh(lang: str, domain: str) -> None:
    buf = io.BytesIO()
    write_mo(buf, catalog(lang, domain))
    shipped = (LOCALE / lang / "LC_MESSAGES" / f"{domain}.mo").read_bytes()
    assert shipped == buf.getvalue(), f"{lang}/{domain}.mo is stale: make catalogs"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("domain", sorted(EXTRACT))
def test_translations_keep_the_placeholders(lang: str, domain: str) -> None:
    for m in catalog(lang, domain):
        if not m.id:
            continue
        ids = [m.id] if isinstance(m.id, str) else list(m.id)
        strings = [m.string] if isinstance(m.string, str) else list(m.string)
        wanted = set().union(*(placeholders(i) for i in ids))
        for s in strings:
            assert placeholders(s) <= wanted, (lang, m.id, s)  # a name it cannot fill
            if isinstance(m.id, str):
                assert placeholders(s) == wanted, (lang, m.id, s)  # nothing said is lost


@pytest.mark.parametrize(("lang", "words"), [
    ("en", ["0 piles collected", "1 pile collected", "2 piles collected", "5 piles collected"]),
    ("sv", ["0 högar vunna", "1 hög vunnen", "2 högar vunna", "5 högar vunna"]),
])
def test_plurals_for_0_1_2_and_5(lang: str, words: list[str]) -> None:
    tr = language(lang)
    assert [tally_words("piles collected", n, tr) for n in (0, 1, 2, 5)] == words
    cards = [describe({"verdict": "challenge", "by": 0, "seat": 1, "owes": n}, NAMES, tr)
             for n in (0, 1, 2, 5)]
    if lang == "sv":
        assert cards == [f"Anna utmanar: Bo ska lägga {n} kort" for n in (0, 1, 2, 5)]
        assert [tr.ngettext("Tonight ({n} game): ", "Tonight ({n} games): ", n).format(n=n)
                for n in (0, 1, 2, 5)] == ["I kväll (0 partier): ", "I kväll (1 parti): ",
                                           "I kväll (2 partier): ", "I kväll (5 partier): "]
    else:
        assert cards[1] == "Anna challenges: Bo owes 1 card"
        assert cards[3] == "Anna challenges: Bo owes 5 cards"
    page = page_catalog(lang)
    assert [page["plural"][n] for n in (0, 1, 2, 5)] == [1, 0, 1, 1]


def _verdicts() -> list[dict[str, object]]:
    """One verdict of every kind, every refusal sentence and every way a pile is won."""
    out: list[dict[str, object]] = [
        {"verdict": "challenge", "by": 0, "seat": 1, "owes": 3},
        {"verdict": "false_slap", "seat": 2}, {"verdict": "false_slap", "seat": 2, "card": "QH"},
        {"verdict": "slap_lost", "seat": 1, "to": 0},
        {"verdict": "desync", "seat": 0, "expected": "5S", "got": "6S"},
        {"verdict": "desync", "seat": 0, "expected": None, "got": "6S"},
        {"verdict": "out", "seat": 3},
        {"verdict": "round_over", "winner": 1, "scores": [10, 0, None], "totals": [40, 5, 104]},
        {"verdict": "round_over", "winner": None, "scores": [10, 5], "totals": None},
        {"verdict": "game_over", "winners": [1]}, {"verdict": "game_over", "winners": [0, 2]},
        {"verdict": "game_over", "winners": []},
    ]
    out += [{"verdict": "pile_won", "seat": 2, "reason": r, "cards": 4} for r in PILE_WON]
    args = {"last": 3, "act": "draw", "turn": 1, "drawer": 2, "other": 3, "card": "8S",
            "top": "AH", "cards": ["QH", "2C"], "suit": "H", "rank": 12, "left": 2, "draws": 3,
            "max": 3, "drawn": 1, "call": "hey", "n": 5, "below": 7, "given": 6, "got": 3}
    for why in REFUSALS:
        out.append({"verdict": "illegal", "seat": 0, "code": "not_your_turn", "why": why,
                    "args": args})
    out += [{"verdict": kind, "seat": 1, "button": "slap", "reason": "why", "line": 3,
             "tag": "04AA", "act": "lay", "card": "QH", "why": "paused"}
            for kind in NOTICE_KINDS]
    return out


def test_every_verdict_and_notice_kind_is_said_in_both_languages() -> None:
    kinds = {str(v["verdict"]) for v in _verdicts()}
    assert kinds == set(VERDICT_KINDS) | set(NOTICE_KINDS)
    sv, en = language("sv"), language("en")
    for v in _verdicts():
        english, swedish = describe(v, NAMES, en), describe(v, NAMES, sv)
        for text in (english, swedish):
            assert "{" not in text and "None" not in text, (v, text)
            assert not text.startswith(f"{v['verdict']}: {{"), (v, text)  # not the fallback
        assert english != swedish, v
        assert "seat " not in swedish and " the " not in swedish, (v, swedish)


def test_every_refusal_sentence_and_its_count() -> None:
    for why, sentence in REFUSALS.items():
        args = {"last": 1, "act": "x", "turn": 0, "drawer": 0, "other": 0, "card": "2C",
                "top": "2C", "cards": ["2C"], "suit": "C", "rank": 2, "left": 1, "draws": 1,
                "max": 3, "drawn": 0, "call": "x", "n": 1, "below": 1, "given": 1, "got": 1}
        for lang in ("en", "sv"):
            assert refusal_words(why, args, 0, NAMES, language(lang))
        assert isinstance(sentence, tuple) == (why in COUNTED)
    one = {"n": 1}
    assert refusal_words("stock_not_empty", one, 0) == "the stock still holds 1 card"
    assert refusal_words("stock_not_empty", {"n": 4}, 0, (), language("sv")) == \
        "talongen har fortfarande 4 kort"


def test_cards_seats_and_suits_in_swedish() -> None:
    sv = language("sv")
    v = {"verdict": "illegal", "seat": 0, "code": "no_match", "why": "no_match",
         "args": {"card": "KD", "suit": "H", "rank": 7}}
    assert describe(v, NAMES, sv) == ("Anna: inte tillåtet — ruter kung passar varken i färg "
                                      "eller valör (hjärter eller 7)")
    assert describe({"verdict": "out", "seat": 5}, [], sv) == "plats 5 är ute ur spelet"


def test_the_systems_refusals_in_the_tables_words() -> None:
    """The system says why a file could not be written in English whatever the table's
    language: the errors people meet are said in words the catalogs translate, inside the
    sentence that names the file; any other keeps the system's words."""
    import errno

    from cardtable.i18n import Words, os_words

    full = OSError(errno.ENOSPC, "No space left on device")
    said_ = Words("cannot write {path}: {why}", {"path": "table.toml", "why": os_words(full)})
    assert said_.say() == "cannot write table.toml: the disk is full"
    assert said_.say(language("sv")) == "kan inte skriva table.toml: disken är full"
    for number in i18n.OS_WORDS:
        assert isinstance(os_words(OSError(number, "x")), Words)
    assert os_words(OSError(errno.ELOOP, "Too many levels of symbolic links")) == (
        "Too many levels of symbolic links")
    assert os_words(OSError("no errno")) == "no errno"


def test_an_older_referees_refusal_is_still_said() -> None:
    """A verdict without ``why`` (a referee from before issue 35): English takes its reason,
    another language words its code."""
    old = {"verdict": "illegal", "seat": 1, "code": "not_your_turn",
           "reason": "it is seat 0's turn"}
    assert describe(old, NAMES) == "Bo: not allowed — it is Anna's turn"
    assert describe(old, NAMES, language("sv")) == "Bo: inte tillåtet — inte den här platsens tur"


def test_the_language_of_the_system_locale() -> None:
    assert system_language({"LANG": "sv_SE.UTF-8"}) == "sv"
    assert system_language({"LANG": "C.UTF-8"}) == "en"
    assert system_language({"LANGUAGE": "de:sv", "LANG": "de_DE.UTF-8"}) == "sv"
    assert system_language({"LC_ALL": "fr_FR.UTF-8", "LANG": "sv_SE.UTF-8"}) == "en"
    assert system_language({}) == "en"
    assert normalize("sv-SE") == normalize("SV") == "sv"


def test_a_language_is_an_option_of_the_table_never_of_the_game() -> None:
    rest, lang = table_language(["false_slap_penalty=burn", "language=sv"])
    assert rest == ["false_slap_penalty=burn"] and lang.code == "sv"
    assert table_language([], "sv")[1].code == "sv"
    with pytest.raises(OptionError, match="language"):
        table_language(["language=xx"])
    with pytest.raises(OptionError, match="differ"):
        table_language(["language=sv"], "en")
    assert check_language("sv_SE") == "sv"


STATE = {"game": "banka-bever", "seats": ["Anna", "Bo", "Cia"], "counts": [10, 7, 9],
         "pile": ["2C", "5S"], "bottom": "2C", "turn": 1, "out": [], "over": False,
         "winners": None, "cards_played": 12, "tricks": 1, "session": "s1", "seq": 4,
         "recent": [{"t": 5, "verdict": "challenge", "by": 0, "seat": 1, "owes": 2,
                     "session": "s1", "seq": 4, "text": "Anna challenges: Bo owes 2 cards"}]}


def test_a_display_follows_the_tables_language_unless_told() -> None:
    """The feed says the table's language as a code; a display words everything itself in it
    (the English ``text`` of the feed is not shown), or in its own ``--lang``, or a page's."""
    from rich.console import Console

    from cardtable.display.view import TableView

    view = TableView("kitchen", connected=True, status="online")
    view.on_state({**STATE, "language": "sv"})
    sc = view.scene()
    assert sc["lang"] == "sv" and sc["words"]["turn"] == "Bo på tur"
    assert sc["verdicts"] == ["Anna utmanar: Bo ska lägga 2 kort"]
    console = Console(width=100, record=True)
    console.print(view.render())
    text = console.export_text()
    assert "Högen:" in text and "Senaste besluten:" in text and "Pile" not in text
    assert view.scene(language("en"))["verdicts"] == ["Anna challenges: Bo owes 2 cards"]
    assert TableView("kitchen", lang="en", state={**STATE, "language": "sv"}).scene()[
        "lang"] == "en"
    assert view.language("en").code == "en" and view.language("xx").code == "sv"


def test_the_hall_in_swedish() -> None:
    from cardtable.display.hall import HallView, draw_hall

    hall = HallView("sv")
    hall.set_connection(True, None)
    hall.on_message("cardtable/kitchen/status", b"online")
    hall.on_message("cardtable/kitchen/state", json.dumps(STATE).encode())
    sc = hall.scene()
    assert sc["lang"] == "sv" and sc["words"]["summary"] == "1 bord, 1 ansluten"
    tile = sc["tables"][0]
    assert tile["headline"] == "Bo på tur" and tile["last"] == "Anna utmanar: Bo ska lägga 2 kort"
    assert hall.scene(language("en"))["tables"][0]["headline"] == "Bo to play"
    from rich.console import Console

    console = Console(width=120, record=True)
    console.print(draw_hall(sc, lang=language("sv")))
    assert "Senaste beslut" in console.export_text()


def test_simulate_tells_the_game_in_swedish_and_journals_nothing_of_it(tmp_path: Path) -> None:
    from cardtable.cli import main

    said = {}
    for lang in ("sv", "en"):
        out = io.StringIO()
        journal = tmp_path / f"{lang}.jsonl"
        with contextlib.redirect_stdout(out):
            assert main(["simulate", "--game", "banka-bever", "--players", "4", "--seed", "7",
                         "--fast", "--journal", str(journal), "-o", f"language={lang}"]) == 0
        said[lang] = out.getvalue().splitlines()
    assert said["sv"][0].endswith("Cia utmanar: Dan ska lägga 4 kort")
    assert said["sv"][-1] == "Banka bäver: 116 kort spelade, 24 högar vunna; vinnare: Cia"
    assert said["en"][-1] == "Banka bäver: 116 cards played, 24 piles collected; winner: Cia"
    assert len(said["sv"]) == len(said["en"])
    assert (tmp_path / "sv.jsonl").read_bytes() == (tmp_path / "en.jsonl").read_bytes()
    assert "language" not in (tmp_path / "sv.jsonl").read_text().splitlines()[0]


def test_every_options_allowed_values_have_words_in_each_language() -> None:
    """The operator page words an option's allowed values from ``ALLOWED`` by the registry's
    English text: a registry that words them otherwise (its maximum added) would fall back to
    English silently."""
    from cardtable.operator.site import ALLOWED
    from referee.games import games
    from referee.options import option_specs

    said = {s.allowed for spec in games.values() for s in option_specs(spec.options)
            if not s.choices}
    assert said <= set(ALLOWED), said - set(ALLOWED)
