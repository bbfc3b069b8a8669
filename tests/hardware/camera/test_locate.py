"""Finding the top card (hardware/camera/reader/locate.py): the locator network's outline of the
top card over issue 33's range, the small card looked at again closer, the frame looked at
drawn out, and the sides laid on the card's edges."""

from __future__ import annotations

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera.reader.locate import (  # noqa: E402
    DRAWN_OUT,
    IN_W,
    ZOOM_BELOW,
    Locator,
    _line_through,
    _median,
    fit_sides,
    input_size,
    refine,
    step,
    whole,
)
from hardware.camera.reader.warp import order_corners  # noqa: E402
from hardware.camera.synthetic.scene import corners_in_frame, random_scene, render  # noqa: E402
from tests.hardware.camera.conftest import need_artwork  # noqa: E402


def corner_error(quad: np.ndarray, true: np.ndarray) -> float:
    """The largest corner distance between two outlines, either way round."""
    return min(float(np.linalg.norm(quad - np.roll(t, k, axis=0), axis=1).max())
               for t in (true, true[::-1]) for k in range(4))


@pytest.fixture(scope="module")
def locator() -> Locator:
    return Locator()


def test_the_input_keeps_the_frame_s_shape() -> None:
    assert input_size(640, 480) == input_size(1280, 960) == (IN_W, 128)
    assert input_size(1280, 720) == (IN_W, 96)
    assert input_size(100, 1000)[1] % 16 == 0


def test_a_frame_is_cut_to_a_whole_number_of_shrinking_steps() -> None:
    """The locator's first shrink is by a whole step k (OpenCV's quick path): a frame, a part
    round a small card or a frame drawn out loses fewer than k rows and columns at its right
    and bottom edges, and keeps its pixels where it is."""
    for w, h in ((1280, 960), (640, 480), (1760, 1440), (880, 661), (479, 300), (319, 250)):
        image = np.arange(h * w * 3, dtype=np.uint32).reshape(h, w, 3)
        cut = whole(image)
        k = step(w)
        ch, cw = cut.shape[:2]
        assert ch % k == 0 and cw % k == 0 and cw // IN_W == k, (w, h)
        assert 0 <= h - ch < k and 0 <= w - cw < k, (w, h)
        assert np.array_equal(cut, image[:ch, :cw])


def test_a_side_goes_onto_the_card_s_edge() -> None:
    """A light card on a dark table, an outline 5 pixels off on each side: each side moves onto
    the edge, either way the light runs (a dark card on a light table too)."""
    for paper, table in ((230, 40), (40, 230)):
        img = np.full((400, 400, 3), table, np.uint8)
        true = np.array([[120, 80], [280, 80], [280, 320], [120, 320]], np.float32)
        cv2.fillConvexPoly(img, true.astype(np.int32), (paper, paper, paper))
        img = cv2.GaussianBlur(img, (0, 0), 1.2)
        off = true + np.array([[-5, 4], [4, -5], [5, 5], [-4, 4]], np.float32)
        got = refine(img, off, 10.0)
        assert corner_error(got, true) < 1.5, (paper, got)


def test_a_side_with_no_edge_stays() -> None:
    img = np.full((300, 300, 3), 128, np.uint8)
    quad = np.array([[50, 50], [250, 50], [250, 250], [50, 250]], np.float32)
    assert np.allclose(refine(img, quad, 10.0), quad)


def test_the_quick_median_and_line_are_numpy_s() -> None:
    """``refine``'s median and least-squares line, written out for speed, give numpy's."""
    rng = np.random.default_rng(7)
    for n in (1, 2, 5, 6, 24):
        d = rng.normal(0, 3, n).round(1)
        assert _median(d) == float(np.median(d))
        if n >= 5:
            t = np.sort(rng.uniform(0.1, 0.9, n))
            want = np.linalg.lstsq(np.stack([np.ones(n), t], axis=1), d, rcond=None)[0]
            assert np.allclose(_line_through(t, d), want, rtol=0, atol=1e-9)


def test_a_side_is_fitted_again_only_where_its_points_changed(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A side whose points are those of the round before keeps its line (the same points give
    the same line; fitting costs most of ``fit_sides``): a card's blob at 20 degrees takes 6
    fits instead of 12, and the same quad as with every side fitted each round; so does a blob
    running on onto a card beneath, whose sides keep only their agreeing run of points."""
    mask = np.zeros((240, 240), np.uint8)
    cv2.fillConvexPoly(mask, cv2.boxPoints(((120, 120), (80, 120), 20)).astype(np.int32), 1)
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    outline = contours[0].reshape(-1, 2).astype(np.float32)
    start = cv2.boxPoints(cv2.minAreaRect(outline))
    calls: list[int] = []
    fit_line = cv2.fitLine

    def counted(*args: object) -> object:
        calls.append(1)
        return fit_line(*args)

    monkeypatch.setattr(cv2, "fitLine", counted)
    quad = fit_sides(outline, start)
    reusing = len(calls)
    # a blob running on onto a card beneath: the points a side keeps are those of its
    # agreeing run, and the reuse must be keyed on them
    strip = np.zeros((240, 240), np.uint8)
    cv2.fillConvexPoly(strip, cv2.boxPoints(((120, 120), (80, 120), 10)).astype(np.int32), 1)
    cv2.fillConvexPoly(strip, cv2.boxPoints(((160, 150), (30, 100), 20)).astype(np.int32), 1)
    contours, _ = cv2.findContours(strip, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    run_on = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float32)
    run_on_start = cv2.boxPoints(cv2.minAreaRect(run_on))
    run_on_quad = fit_sides(run_on, run_on_start)
    monkeypatch.setattr(np, "array_equal", lambda a, b: False)  # every side fitted each round
    before = len(calls)
    every = fit_sides(outline, start)
    assert (reusing, len(calls) - before) == (6, 12)
    assert (quad == every).all()
    assert (run_on_quad == fit_sides(run_on, run_on_start)).all()


def test_a_blob_running_onto_a_card_beneath_keeps_its_side() -> None:
    """The outline of a blob: a rectangle with a strip running on along one side (a card
    beneath, taken in): the fitted side is the rectangle's, where most of its points agree."""
    mask = np.zeros((200, 200), np.uint8)
    cv2.rectangle(mask, (50, 40), (130, 160), 1, -1)
    cv2.rectangle(mask, (130, 60), (150, 90), 1, -1)  # the run-on
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_NONE)
    outline = contours[0].reshape(-1, 2).astype(np.float32)
    quad = fit_sides(outline, cv2.boxPoints(cv2.minAreaRect(outline)))
    true = np.array([[50, 40], [130, 40], [130, 160], [50, 160]], np.float32)
    assert corner_error(order_corners(quad), true) < 2.5


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="the shipped locator (fold 1's) outlines 44 of these 60 "
                   "within 4 % (training's own check: 300 of 490 within 3 %): the locator is "
                   "what most stands between the reader and the issue's goal (docs/camera.md)")
def test_the_top_card_is_outlined_across_the_range(locator: Locator) -> None:
    """Scenes over the whole range (sizes, lengths, tilt, cards beneath, tables): the
    likeliest place is the top card, each corner within 4 % of its length, in 56 of 60."""
    decks = ("anglo", "touati", "berlin", "kde-oxygen")
    need_artwork(*decks)
    found, misses = 0, []
    for seed in range(60):
        s = random_scene(600 + seed, decks[seed % len(decks)], hands=False)
        true = corners_in_frame(s, s.cards[-1])
        spots = locator.look(render(s)).spots
        length = float(np.linalg.norm(true[0] - true[3]))
        if spots and corner_error(spots[0].quad, true) <= 0.04 * length:
            found += 1
        else:
            misses.append(s.seed)
    assert found >= 56, misses


@pytest.mark.slow
@pytest.mark.xfail(strict=True, reason="the shipped locator (fold 1's) outlines 5 of these 10 "
                   "within 3 %: a card this small at 1280x960 is not held yet (docs/camera.md)")
def test_a_small_card_in_a_large_frame_is_outlined_closely(locator: Locator) -> None:
    """A card 120-140 pixels long in a 1280x960 frame (15 pixels in the network's input): looked
    at again in the part of the frame round it, its corners within 3 % of its length."""
    need_artwork("anglo")
    good = 0
    for seed in range(10):
        s = random_scene(700 + seed, "anglo", size=(1280, 960), length=(120.0, 140.0),
                         hands=False, tilt=10.0)
        true = corners_in_frame(s, s.cards[-1])
        assert float(np.linalg.norm(true[0] - true[3])) * IN_W / 1280 < ZOOM_BELOW
        spots = locator.look(render(s)).spots
        good += bool(spots) and corner_error(spots[0].quad, true) <= 0.03 * 130
    assert good >= 9


def test_the_network_sees_frames_and_parts_cut_to_whole_steps(
        locator: Locator, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every picture the locator network is shown (the frame, the part round a small card, the
    frame drawn out) is a whole number of shrinking steps: OpenCV's quick path."""
    need_artwork("anglo")
    shown: list[tuple[int, int]] = []
    chances = locator.chances

    def seen(image: np.ndarray) -> np.ndarray:
        shown.append((image.shape[1], image.shape[0]))
        return chances(image)

    monkeypatch.setattr(locator, "chances", seen)
    s = random_scene(700, "anglo", size=(1280, 960), length=(120.0, 140.0), hands=False)
    frame = render(s)
    locator.look(frame)  # a small card: the part round it too
    locator.look(frame, 2, DRAWN_OUT)  # 1760x1440 drawn out: 11 does not divide 1440
    assert len(shown) >= 3 and (1760, 1430) in shown
    for w, h in shown:
        k = step(w)
        assert w % k == 0 and h % k == 0, (w, h)


def test_a_card_filling_the_frame_is_outlined_in_the_frame_drawn_out(locator: Locator) -> None:
    """The second look (the frame's edges drawn out by DRAWN_OUT of its height each way) gives
    its places in the frame's own pixels: a card 83-90 % of a 640x480 frame's height, its
    corners within 4 % of its length in 9 of 10 scenes (10 here; the frame as it is, too)."""
    need_artwork("anglo")
    good = 0
    for seed in range(10):
        s = random_scene(800 + seed, "anglo", size=(640, 480), length=(400.0, 432.0),
                         hands=False)
        true = corners_in_frame(s, s.cards[-1])
        frame = render(s)
        sight = locator.look(frame, 2, DRAWN_OUT)
        good += bool(sight.spots) and corner_error(sight.spots[0].quad, true) <= 0.04 * 416
        if seed == 0:  # the network looked at the frame drawn out, a quarter of its height
            p = round(DRAWN_OUT * 480)
            drawn = cv2.copyMakeBorder(frame, p, p, p, p, cv2.BORDER_REPLICATE)
            assert np.array_equal(sight.chance, locator.chances(whole(drawn)))
    assert good >= 9
