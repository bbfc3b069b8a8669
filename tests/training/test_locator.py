"""The locator's training data (training/locator.py): scenes of the training decks
only, each target the top card's outline; training itself needs PyTorch (the train extra)."""

from __future__ import annotations

import importlib.util

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera.reader.locate import IN_H, IN_W, MAP_H, MAP_W  # noqa: E402
from hardware.camera.synthetic.scene import PLAIN, corners_in_frame  # noqa: E402
from training.locator import TRAIN_DECKS, main, sample, target, train_scene  # noqa: E402


@pytest.mark.slow
def test_training_scenes_never_show_the_held_out_deck() -> None:
    decks = {train_scene(seed).deck.removesuffix(PLAIN) for seed in range(400)}
    assert "touati" not in TRAIN_DECKS
    assert decks <= set(TRAIN_DECKS) and len(decks) > 20


def test_the_target_is_the_top_card_s_outline_filled() -> None:
    checked = 0
    for seed in range(30):
        scene = train_scene(seed)
        if len(scene.cards) < 2:
            continue
        got = target(scene).astype(np.float32) / 255
        top = np.zeros_like(got, np.uint8)
        quad = corners_in_frame(scene, scene.cards[-1]) / 8  # the map is an eighth
        cv2.fillConvexPoly(top, np.round(quad * 16).astype(np.int32), 1, cv2.LINE_8, 4)
        inner = cv2.erode(top, np.ones((3, 3), np.uint8), borderType=cv2.BORDER_CONSTANT,
                          borderValue=0) > 0
        outer = cv2.dilate(top, np.ones((3, 3), np.uint8)) == 0
        assert got[inner].min() > 0.5 and got[outer].max() < 0.5, seed  # not a card beneath
        both = ((got > 0.5) & (top > 0)).sum() / ((got > 0.5) | (top > 0)).sum()
        assert both > 0.85, seed  # cells the outline cuts through count either way
        checked += 1
    assert checked >= 10


@pytest.mark.skipif(importlib.util.find_spec("torch") is not None,
                    reason="PyTorch is installed here")
def test_without_pytorch_the_script_says_what_to_install(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main([])
    assert done.value.code == 2
    assert "pip install -e '.[train]'" in capsys.readouterr().err


def test_too_few_scenes_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--scenes", "800"])
    assert done.value.code == 2
    assert "--scenes must be more than 1000" in capsys.readouterr().err


@pytest.mark.parametrize("share", ["-0.1", "1.5"])
def test_a_full_share_outside_0_to_1_is_a_clear_error(
        share: str, capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--full-share", share])
    assert done.value.code == 2
    assert "--full-share must be between 0 and 1" in capsys.readouterr().err


def test_a_training_pair_is_the_network_s_input_and_map(decks: None) -> None:
    """Filmed at half size or whole, and shrunk: the same shapes, and the top card where the
    target has it (brighter than the table around it)."""
    for full in (False, True):
        frame, want = sample(100_003, full=full)
        assert frame.shape == (IN_H, IN_W, 3) and want.shape == (MAP_H, MAP_W)
        inside = cv2.resize(want, (IN_W, IN_H)) > 200
        gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
        assert inside.any() and gray[inside].mean() > gray[~inside].mean() + 30
