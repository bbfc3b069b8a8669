"""Issue 37: the first example of docs/camera.md runs from a clone as written: the sample
photos it names are in docs/camera/ and are read as docs/camera/SAMPLES.md says."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest

pytest.importorskip("cv2")

from cardtable.cli import main  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs" / "camera.md"


def test_the_docs_examples_of_camera_read_name_files_of_the_clone() -> None:
    examples = [line.split("#")[0] for line in DOCS.read_text(encoding="utf-8").splitlines()
                if line.startswith("referee camera read ")]
    assert examples
    for line in examples:
        images = [w for w in shlex.split(line)[3:] if not w.startswith("-")
                  and re.search(r"\.(jpe?g|png)$", w) and w != "seen.png"]
        assert images and all((ROOT / w).is_file() for w in images), line


def test_the_samples_read_as_their_manifest_says(monkeypatch: pytest.MonkeyPatch,
                                                 capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(ROOT)
    listed = dict(re.findall(r"^\| `(\w+\.jpg)` \| (\w\w?)\b",
                             (ROOT / "docs" / "camera" / "SAMPLES.md").read_text(), re.M))
    assert listed == {"queen.jpg": "QH", "pile.jpg": "7S"}
    assert main(["camera", "read", "--json", *(f"docs/camera/{f}" for f in listed)]) == 0
    reads = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert {Path(r["image"]).name: r["card"] for r in reads} == listed
    assert all(r["confidence"] >= 0.95 for r in reads)
