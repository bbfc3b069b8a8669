"""docs/i18n.md's steps to add a language work (issue 35): its commands, read from that page,
run on a copy of the catalogs for Polish (three plural forms), every message pseudo-translated
(``⟦…⟧``, its placeholders kept); then the referee knows the language with no code changed: a
game is told in it, the pages get its words and its plural forms."""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

pytest.importorskip("babel", reason="Babel (the dev extra) makes the catalogs")

from babel.messages.pofile import read_po, write_po  # noqa: E402

from cardtable import i18n  # noqa: E402
from cardtable.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "i18n.md"
NEW = "pl"


def steps() -> list[str]:
    """The commands of the page's "Adding a language" block (for German there)."""
    text = DOC.read_text(encoding="utf-8").split("## Adding a language", 1)[1]
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block, "docs/i18n.md: the commands of Adding a language"
    return [line for line in block.group(1).splitlines() if line and not line.startswith("#")]


def pseudo(message: str) -> str:
    """A translation that shows it is one and keeps every placeholder."""
    return "⟦" + message + "⟧"


def translate(po: Path) -> int:
    with open(po, "rb") as fh:
        catalog = read_po(fh)
    n = 0
    for m in catalog:
        if not m.id:
            continue
        if isinstance(m.id, tuple):
            m.string = tuple(pseudo(m.id[min(i, 1)]) for i in range(catalog.num_plurals))
        else:
            m.string = "Pseudopolski" if m.id == "English" else pseudo(m.id)
        n += 1
    with open(po, "wb") as fh:
        write_po(fh, catalog)
    return n


def test_the_documented_steps_add_a_language(tmp_path: Path, monkeypatch) -> None:
    if shutil.which("make") is None:  # a fresh machine with only python3 may lack it
        if os.environ.get("CI") == "true":
            pytest.fail("make is not installed (the page's last step runs it)")
        pytest.skip("make is not installed (the page's last step runs it)")
    commands = steps()
    assert [c.split()[:2] for c in commands] == [["pybabel", "init"], ["pybabel", "init"],
                                                ["make", "catalogs"]]
    locale = tmp_path / "locale"
    shutil.copytree(ROOT / "cardtable" / "locale", locale,
                    ignore=shutil.ignore_patterns("*.cfg"))
    for command in commands:
        argv = command.replace("cardtable/locale", str(locale)).replace(" -l de", f" -l {NEW}")
        if argv.startswith("make catalogs"):
            argv += f" LOCALE={locale}"
        done = subprocess.run(argv.split(), cwd=ROOT, capture_output=True, text=True,
                              timeout=120, check=False)
        assert done.returncode == 0, (argv, done.stdout, done.stderr)
        if argv.startswith("pybabel init -D pages"):
            folder = locale / NEW / "LC_MESSAGES"
            assert translate(folder / "referee.po") > 300
            assert translate(folder / "pages.po") > 100

    monkeypatch.setattr(i18n, "LOCALE_DIR", locale)
    i18n.forget()
    try:
        assert NEW in i18n.languages()
        assert [NEW, "Pseudopolski"] in i18n.language_names()
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            assert main(["simulate", "--game", "banka-bever", "--players", "3", "--seed", "3",
                         "--fast", "-o", f"language={NEW}"]) == 0
        lines = out.getvalue().splitlines()
        assert lines and all("⟦" in line for line in lines), lines[:5]
        assert "⟦{game}: {n} cards played" not in out.getvalue()  # placeholders were filled
        tr = i18n.language(NEW)
        assert tr.ngettext("{n} card", "{n} cards", 1).startswith("⟦{n} card⟧")
        page = i18n.page_catalog(NEW)
        assert page["lang"] == NEW and page["messages"]["Pile"] == "⟦Pile⟧"
        rule = i18n._plural_rule("Plural-Forms: nplurals=3; plural=n == 1 ? 0 : "
                                 "n % 10 >= 2 && n % 10 <= 4 && (n % 100 < 12 || "
                                 "n % 100 > 14) ? 1 : 2;")
        table = page["plural"]
        assert sorted(set(table)) == [0, 1, 2]
        for n in range(0, 5000):  # the page's lookup: n < 200 itself, else 100 + n % 100
            assert (table[n] if n < 200 else table[100 + n % 100]) == rule(n), n
    finally:
        i18n.forget()
