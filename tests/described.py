"""The golden journals' verdicts in Swedish, for a person to read: every journal under
``tests/data`` replayed, each verdict described in English and in Swedish
(``referee.describe.describe`` with the shipped catalog), every distinct Swedish sentence once
beside its English, grouped by the verdict's kind (and a refusal's sentence, ``why``).

``python3 -m tests.described --write`` writes ``tests/data/golden/described-sv.md``;
``tests/cardtable/test_described.py`` checks that the words are still the ones written (a
reviewer reads the diff of a change of words)."""

from __future__ import annotations

import sys
from collections import defaultdict
from pathlib import Path

import referee
from cardtable.i18n import language
from tests.golden import DATA, journals

GOLDEN = DATA / "golden" / "described-sv.md"


def described() -> tuple[int, dict[str, dict[str, tuple[str, int]]]]:
    """How many verdicts, and per group (kind, refusal sentence) each Swedish sentence with
    its English and how many verdicts say it."""
    sv = language("sv")
    groups: dict[str, dict[str, tuple[str, int]]] = defaultdict(dict)
    total = 0
    for path in journals():
        try:
            journal = referee.read_journal(path)
        except referee.JournalError:  # a journal cut on purpose: its verdicts up to the cut
            continue
        seats = journal.header.seats
        for v in referee.replay(journal).verdicts:
            obj = v.to_json()
            group = v.verdict + (f" · {obj['why']}" if v.verdict == "illegal" else "")
            english = referee.describe(obj, seats)
            swedish = referee.describe(obj, seats, sv)
            _, seen = groups[group].get(swedish, (english, 0))
            groups[group][swedish] = (english, seen + 1)
            total += 1
    return total, groups


def text() -> str:
    """The golden file's text."""
    total, groups = described()
    sentences = sum(len(g) for g in groups.values())
    out = ["# The golden journals' verdicts in Swedish", "",
           f"Every journal under `tests/data` replayed: {total} verdicts, {sentences} distinct "
           "Swedish sentences, each once beside its English, grouped by the verdict's kind "
           "(a refusal by its sentence, `why`). Written by `python3 -m tests.described "
           "--write`; `tests/cardtable/test_described.py` checks it. Names as the journals "
           "give them.", ""]
    for group in sorted(groups):
        out += [f"## {group}", "", "| English | Svenska | × |", "|---|---|---|"]
        for swedish, (english, n) in sorted(groups[group].items(), key=lambda kv: kv[1][0]):
            out.append(f"| {english} | {swedish} | {n} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        GOLDEN.write_text(text(), encoding="utf-8")
        print(f"wrote {Path(GOLDEN).relative_to(DATA.parent.parent)}")
    else:
        same = GOLDEN.read_text(encoding="utf-8") == text()
        print("the same" if same else "differs: python3 -m tests.described --write")
        sys.exit(0 if same else 1)
