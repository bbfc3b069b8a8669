"""``bench/camera_photos.py``: the real photographs' manifest holds what its README says, the
photos are copied out of a clone of the source at the pinned commit, and without them the bench
says how to get them (exit 2)."""

from __future__ import annotations

import collections
import importlib.util
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "bench" / "camera_photos.py"

pytest.importorskip("cv2")


def _bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("camera_photos", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


bench = _bench()


def test_the_manifest_holds_three_copies_of_377_photos_of_the_52_cards() -> None:
    photos = bench.photos()
    assert len(photos) == 1131
    by_photo = collections.defaultdict(list)
    for p in photos:
        by_photo[p.stem].append(p)
    assert len(by_photo) == 377
    assert all(len(copies) == 3 and len({c.card for c in copies}) == 1
               for copies in by_photo.values())
    per_card = collections.Counter(copies[0].card for copies in by_photo.values())
    assert len(per_card) == 52 and min(per_card.values()) >= 4  # one to enrol, others to read
    assert len({p.source for p in photos}) == 1131
    assert all(p.source.startswith("datasets/train/images/IMG_20220921_") for p in photos)


def test_a_grey_copy_is_told_from_a_colour_one() -> None:
    rng = np.random.default_rng(1)
    grey = np.repeat(rng.integers(0, 255, (40, 30, 1), dtype=np.uint8), 3, axis=2)
    assert bench.grey(grey)
    tinted = grey.copy()
    tinted[..., 2] = np.clip(tinted[..., 2].astype(int) + 8, 0, 255).astype(np.uint8)
    assert not bench.grey(tinted)


def test_each_card_is_enrolled_from_its_first_colour_copy_in_which_a_card_is_found() -> None:
    """A copy in grey, or one in which the locator finds no card, is passed over for the
    card's next copy (by name); the copies passed over for finding none are listed."""
    photo = bench.Photo
    ah, two = bench.Card.parse("AH"), bench.Card.parse("2C")
    every = [photo("a-1.jpg", ah, "s"), photo("a-2.jpg", ah, "s"), photo("b-1.jpg", ah, "s"),
             photo("c-1.jpg", two, "s"), photo("c-2.jpg", two, "s")]
    colourless = {"a-1.jpg": True, "a-2.jpg": False, "b-1.jpg": False, "c-1.jpg": False,
                  "c-2.jpg": False}
    images = {p.file: np.full((8, 8, 3), k, np.uint8) for k, p in enumerate(every)}

    class Finder:
        def quad(self, image: np.ndarray) -> np.ndarray | None:
            return None if int(image[0, 0, 0]) == 1 else np.zeros((4, 2), np.float32)

    first, passed = bench.enrolment_photos(every, colourless, None,
                                           lambda p: images[p.file], Finder())
    assert {str(c): p.file for c, p in first.items()} == {"AH": "b-1.jpg", "2C": "c-1.jpg"}
    assert passed == ["a-2.jpg"]


def _git(*args: str, cwd: Path) -> str:
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_the_photos_are_copied_out_of_a_clone_at_the_pinned_commit(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clone = tmp_path / "clone"
    (clone / "datasets").mkdir(parents=True)
    (clone / "datasets" / "a.jpg").write_bytes(b"first")
    _git("init", "-q", cwd=clone)
    _git("add", ".", cwd=clone)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one", cwd=clone)
    pinned = _git("rev-parse", "HEAD", cwd=clone)
    (clone / "datasets" / "a.jpg").write_bytes(b"changed later")
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qam", "two", cwd=clone)
    manifest = tmp_path / "m.csv"
    manifest.write_text("file,card,source_path\nIMG_1-1.jpg,QH,datasets/a.jpg\n")
    monkeypatch.setattr(bench, "MANIFEST", manifest)
    monkeypatch.setattr(bench, "COMMIT", pinned)
    monkeypatch.setenv("REFEREE_CAMERA_CACHE", str(tmp_path / "cache"))
    assert bench.get(clone) == 0
    assert (tmp_path / "cache" / "photos" / "IMG_1-1.jpg").read_bytes() == b"first"
    manifest.write_text("file,card,source_path\nIMG_1-1.jpg,QH,datasets/gone.jpg\n")
    assert bench.get(clone) == 2


def test_without_the_photos_the_bench_says_how_to_get_them(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "REFEREE_CAMERA_CACHE": str(tmp_path), "HOME": str(tmp_path),
           "PYTHONPATH": str(ROOT)}
    proc = subprocess.run([sys.executable, str(SCRIPT)], capture_output=True, text=True,
                          timeout=120, cwd=ROOT, env=env)
    assert proc.returncode == 2 and proc.stdout == ""
    assert "git clone https://github.com/Ammememe/CardCounterML" in proc.stderr
    assert "Traceback" not in proc.stderr
