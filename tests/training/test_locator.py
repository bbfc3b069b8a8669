"""The locator's training data (training/locator.py): scenes of the allowed decks only, each
target the top card's outline; a fold's decks left out. Training itself needs PyTorch (the
train extra)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera.reader.locate import IN_H, IN_W  # noqa: E402
from hardware.camera.synthetic.artwork import DECKS, FOLDS  # noqa: E402
from hardware.camera.synthetic.scene import PLAIN, corners_in_frame  # noqa: E402
from tests.hardware.camera.conftest import need_artwork  # noqa: E402
from training.locator import ALL_DECKS, main, target, train_scene, zoom_sample  # noqa: E402


def test_training_scenes_are_of_the_decks_given_and_a_fold_leaves_its_own_out() -> None:
    few = ("anglo", "berlin", "touati", "drawn-1", "drawn-2")
    need_artwork(*few[:3])
    drawn = {train_scene(seed, few).deck.removesuffix(PLAIN) for seed in range(60)}
    assert drawn == set(few)
    assert set(ALL_DECKS) <= set(DECKS)
    for fold in FOLDS:
        kept = [d for d in ALL_DECKS if d not in fold]
        assert not set(kept) & set(fold) and len(kept) == len(ALL_DECKS) - len(fold)


def test_the_target_is_the_top_card_s_outline_filled() -> None:
    need_artwork("anglo", "touati")
    checked = 0
    for seed in range(30):
        scene = train_scene(seed, ("anglo", "touati", "drawn-1"))
        if len(scene.cards) < 2:
            continue
        got = target(scene).astype(np.float32) / 255
        assert got.shape == (IN_H // 2, IN_W // 2)
        w, h = scene.size
        top = np.zeros_like(got, np.uint8)
        quad = corners_in_frame(scene, scene.cards[-1]) * np.array([IN_W / w / 2, IN_H / h / 2])
        cv2.fillConvexPoly(top, np.round((quad + 0.25) * 16 - 8).astype(np.int32), 1,
                           cv2.LINE_8, 4)
        inner = cv2.erode(top, np.ones((3, 3), np.uint8), borderType=cv2.BORDER_CONSTANT,
                          borderValue=0) > 0
        outer = cv2.dilate(top, np.ones((3, 3), np.uint8)) == 0
        assert got[inner].min() > 0.5 and got[outer].max() < 0.5, seed  # not a card beneath
        checked += 1
    assert checked >= 10


@pytest.mark.slow
def test_a_second_look_sample_is_the_small_top_card_in_the_part_cut_round_it() -> None:
    """``--zooms``: a large frame's part round a small card, shrunk to the input, its target
    the card's outline there: a tenth to two fifths of the part (the part is 2.2 times an
    outline's side, grown up to half again, the long side or the short), whole inside it."""
    need_artwork("anglo", "touati")
    decks = ("anglo", "touati")
    for seed in range(8):
        x, y, deck = zoom_sample(seed, decks)
        assert x.shape == (IN_H, IN_W, 3) and x.dtype == np.uint8 and deck in decks
        assert y.shape == (IN_H // 2, IN_W // 2)
        mask = y > 127
        share = mask.mean()
        assert 0.05 < share < 0.4, (seed, share)
        rows, cols = np.nonzero(mask)
        assert rows.min() > 0 and cols.min() > 0, seed  # whole inside the part
        assert rows.max() < y.shape[0] - 1 and cols.max() < y.shape[1] - 1, seed
    again = zoom_sample(3, decks)
    assert np.array_equal(again[0], zoom_sample(3, decks)[0])  # the same seed, the same view


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None,
                    reason="PyTorch is installed here")
def test_without_pytorch_the_script_says_what_to_install(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([])
    assert done.value.code == 2
    assert "pip install -e '.[train]'" in capsys.readouterr().err


def test_an_unknown_fold_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--fold", "9"])
    assert done.value.code == 2
    assert "--fold" in capsys.readouterr().err
