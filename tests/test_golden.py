"""Every journal under tests/data (scenarios, simulations, full-stack games) replays to the
verdicts recorded in tests/data/golden/verdicts.json by the code before the re-layout."""

from __future__ import annotations

from tests import golden


def test_every_journal_replays_to_its_golden_verdicts() -> None:
    assert golden.journals(), "no journals found under tests/data"
    assert golden.check() == []


def test_the_check_sees_a_changed_verdict(tmp_path, monkeypatch) -> None:
    path = golden.journals()[0]
    changed = tmp_path / path.name
    lines = path.read_text().splitlines()
    changed.write_text("\n".join(lines[:-1]) + "\n")  # one input fewer
    assert golden.fingerprint(changed) != golden.fingerprint(path)
