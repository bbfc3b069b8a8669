"""The golden journals' verdicts said in Swedish are the ones a person read and approved
(``tests/data/golden/described-sv.md``, written by ``python3 -m tests.described --write``):
a change of the Swedish words shows in the diff of that file."""

from __future__ import annotations

from tests import described


def test_the_golden_journals_verdicts_in_swedish_are_the_approved_words() -> None:
    written = described.GOLDEN.read_text(encoding="utf-8")
    now = described.text()
    assert "5760 verdicts" in now  # every journal was replayed
    assert written == now, "the Swedish words changed: python3 -m tests.described --write"


def test_every_golden_verdict_is_said_in_swedish_not_in_english() -> None:
    total, groups = described.described()
    assert total > 5000 and len(groups) > 40
    for group, sentences in groups.items():
        for swedish, (english, _) in sentences.items():
            assert swedish != english, (group, english)
            assert "{" not in swedish and " the " not in swedish, (group, swedish)
