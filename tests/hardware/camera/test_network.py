"""The reader's networks give the same outputs whichever runtime runs them (onnxruntime, which
the camera extra installs, or OpenCV's dnn module), so the figures of docs/camera.md hold for
an install with either."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("cv2")

from hardware.camera.reader import network  # noqa: E402
from hardware.camera.reader.classify import CLASSIFIER_PATH, Classifier  # noqa: E402
from hardware.camera.reader.locate import LOCATOR_PATH  # noqa: E402

needs_ort = pytest.mark.skipif("onnxruntime" not in network.runtimes(),
                               reason="onnxruntime is not installed (the camera extra has it)")


@needs_ort
@pytest.mark.parametrize(("path", "shape"), [(LOCATOR_PATH, (1, 3, 128, 160)),
                                             (CLASSIFIER_PATH, (4, 3, 52, 44))])
def test_both_runtimes_give_the_same_outputs(path: Path, shape: tuple[int, ...]) -> None:
    blob = np.random.default_rng(7).random(shape).astype(np.float32) - 0.5
    ort = network.Network(path, "onnxruntime")
    cv = network.Network(path, "opencv")
    assert ort.runtime == "onnxruntime" and cv.runtime == "opencv"
    assert ort.outputs == cv.outputs
    for a, b in zip(ort.run(blob), cv.run(blob), strict=True):
        assert a.shape == b.shape
        assert float(np.abs(a - b).max()) < 1e-4


@needs_ort
def test_auto_picks_onnxruntime_and_the_reader_uses_it() -> None:
    assert network.runtimes() == ["onnxruntime", "opencv"]
    assert Classifier(CLASSIFIER_PATH).net.runtime == "onnxruntime"


def test_without_onnxruntime_opencv_runs_the_networks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(network, "_onnxruntime", lambda: None)
    assert network.runtimes() == ["opencv"]
    net = network.Network(CLASSIFIER_PATH)
    assert net.runtime == "opencv"
    glyphs, suits = net.run(np.zeros((4, 3, 52, 44), np.float32), ["glyph", "suit"])
    assert glyphs.shape[0] == 4 and suits.shape == (4, 4)


def test_asking_for_onnxruntime_without_it_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(network, "_onnxruntime", lambda: None)
    with pytest.raises(ImportError, match=r"pip install '\.\[camera\]'"):
        network.Network(CLASSIFIER_PATH, "onnxruntime")


def test_the_network_is_loaded_once_per_file() -> None:
    first: Any = network.load(LOCATOR_PATH)
    assert network.load(LOCATOR_PATH) is first
    assert network.load(LOCATOR_PATH, 1) is not first  # a file rewritten in place: read again
