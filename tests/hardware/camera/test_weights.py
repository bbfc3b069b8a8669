"""The camera's shipped weights are the files their manifest lists
(hardware/camera/reader/weights.json: checksum, size, the command that wrote each), and the
wheel ships them, and the web display's files, but none of the training code."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from hardware.camera.reader import weights

ROOT = Path(__file__).resolve().parents[3]


def test_every_weights_file_is_listed_and_every_listed_file_is_there() -> None:
    on_disk = {p.name for p in weights.FOLDER.iterdir() if p.suffix in weights.SUFFIXES}
    listed = set(weights.manifest())
    assert on_disk == listed == {"locator.onnx", "classifier.onnx"}


def test_each_file_has_the_size_and_checksum_the_manifest_gives() -> None:
    for name, entry in weights.manifest().items():
        path = weights.FOLDER / name
        assert path.stat().st_size == entry["bytes"], name
        assert weights.sha256(path) == entry["sha256"], name
    assert weights.problems() == []


def test_each_entry_says_how_it_was_made() -> None:
    for name, entry in weights.manifest().items():
        assert entry["command"].startswith("python3 -m training."), name
        assert entry["versions"] and all(entry["versions"].values()), name


def test_a_file_with_one_byte_flipped_fails_the_check(tmp_path: Path) -> None:
    for name in weights.manifest():
        shutil.copy(weights.FOLDER / name, tmp_path / name)
    shutil.copy(weights.MANIFEST, tmp_path / "weights.json")
    assert weights.problems(tmp_path, tmp_path / "weights.json") == []
    copy = tmp_path / "classifier.onnx"
    data = bytearray(copy.read_bytes())
    data[len(data) // 2] ^= 0x01
    copy.write_bytes(bytes(data))
    entry = weights.manifest()["classifier.onnx"]
    got = weights.file_problems(copy, entry)
    assert len(got) == 1 and "sha256" in got[0]  # the same size, another checksum
    assert weights.problems(tmp_path, tmp_path / "weights.json") == got
    (tmp_path / "locator.onnx").unlink()
    (tmp_path / "spare.onnx").write_bytes(b"\0")
    found = weights.problems(tmp_path, tmp_path / "weights.json")
    assert "spare.onnx: not in the manifest" in found
    assert "locator.onnx: listed but missing" in found


@pytest.mark.slow
def test_the_wheel_ships_the_weights_and_no_training_code(tmp_path: Path) -> None:
    """Built from a copy of the tree (the build's own folders stay out of the checkout)."""
    src = tmp_path / "src"
    src.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        if (ROOT / name).exists():
            shutil.copy(ROOT / name, src / name)
    for package in sorted(p.parent.name for p in ROOT.glob("*/__init__.py")):
        shutil.copytree(ROOT / package, src / package,
                        ignore=shutil.ignore_patterns("__pycache__"))
    assert (src / "training" / "locator.py").exists()  # it is in the tree the wheel is built from
    dist = tmp_path / "dist"
    done = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps",
                           "--no-build-isolation", "-w", str(dist), "."],
                          cwd=src, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    (wheel,) = dist.glob("*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    assert not [n for n in names if n.startswith("training/")]
    assert not [n for n in names if re.search(r"(^|/)train[^/]*\.py$", n)]
    assert not [n for n in names if n.startswith("tests/")]
    for name in ("locator.onnx", "classifier.onnx", "weights.json", "recognise.py"):
        assert f"hardware/camera/reader/{name}" in names, name
    web = sorted(p.name for p in (ROOT / "cardtable" / "display" / "web").iterdir()
                 if p.is_file())
    assert web
    for name in web:
        assert f"cardtable/display/web/{name}" in names, name
    # The compiled catalogs of every language (issue 35); the sources (.po, .pot) need not ship.
    catalogs = sorted(str(p.relative_to(ROOT)) for p in (ROOT / "cardtable" / "locale").glob(
        "*/LC_MESSAGES/*.mo"))
    assert "cardtable/locale/sv/LC_MESSAGES/referee.mo" in catalogs
    assert "cardtable/locale/sv/LC_MESSAGES/pages.mo" in catalogs
    for name in catalogs:
        assert name in names, name


def test_a_new_classifier_makes_earlier_deck_files_another_kind() -> None:
    """An enrolled deck file holds the shipped classifier's features: one written with another
    classifier must be refused ("enroll the deck again"), not matched as nonsense."""
    from hardware.camera.reader.templates import FEATURES_OF, TEMPLATE_KIND

    assert weights.manifest()["classifier.onnx"]["sha256"] == FEATURES_OF, (
        f"the classifier changed: give templates.TEMPLATE_KIND ({TEMPLATE_KIND}) a new name "
        "and FEATURES_OF the new classifier's SHA-256")


def test_the_shipped_classifier_gives_the_features_a_deck_file_holds() -> None:
    pytest.importorskip("cv2")
    import numpy as np

    from hardware.camera.reader.classify import FEATURES, Classifier
    from hardware.camera.reader.warp import VIEW_H, VIEW_W

    look = Classifier().look(np.zeros((4, VIEW_H, VIEW_W, 3), np.uint8))
    assert look.features.shape == (4, FEATURES)
