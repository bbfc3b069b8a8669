"""The outline finder (hardware/camera/reader/: lines.py, edges.py, rectangles.py, find.py):
straight lines from a frame, a card's rough corners moved onto them, and card-shaped rectangles
of lines; on drawn images whose corners are known."""

from __future__ import annotations

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

from hardware.camera.reader.edges import expand, on_top, paper_margin, shrink, spread  # noqa: E402
from hardware.camera.reader.lines import lines, segments  # noqa: E402
from hardware.camera.reader.rectangles import corner_rectangles, rectangles, refine  # noqa: E402
from hardware.camera.reader.warp import grow_quad  # noqa: E402

#: A card 140 x 200 pixels, turned 20 degrees, in a 640x480 frame.
CENTRE, SIZE, TURN = (320.0, 240.0), (140.0, 200.0), 20.0


def card_corners() -> np.ndarray:
    box = ((CENTRE[0], CENTRE[1]), SIZE, TURN)
    return np.asarray(cv2.boxPoints(box), np.float32)


def frame(*, beneath: bool = False, faint_side: bool = False) -> np.ndarray:
    """A white card on green felt (and maybe on a white card beneath, its edge then only a
    thin grey rim)."""
    img = np.full((480, 640), 70, np.uint8)
    if beneath:
        under = cv2.boxPoints(((CENTRE[0] - 60, CENTRE[1] + 10), SIZE, TURN - 25))
        cv2.fillPoly(img, [np.rint(under).astype(np.int32)], 225)
    top = card_corners()
    cv2.fillPoly(img, [np.rint(top).astype(np.int32)], 235)
    if faint_side:
        cv2.polylines(img, [np.rint(top).astype(np.int32)], True, 200, 1)
    return cv2.GaussianBlur(img, (3, 3), 0)


def err(quad: np.ndarray, true: np.ndarray) -> float:
    """The largest corner distance, whichever corner the quad starts at, either way round."""
    return min(float(np.abs(np.roll(q, k, axis=0) - true).max())
               for q in (quad, quad[::-1]) for k in range(4))


def test_rough_corners_move_onto_the_card_s_sides() -> None:
    true = card_corners()
    found = lines(segments(frame()), 12)
    rough = grow_quad(true, -4.0)  # the paper regions stop short of the edge
    rough[0] += (2.0, -1.5)        # and one corner takes in a sliver
    quad = refine(rough, found)
    assert quad is not None
    assert err(quad, true) < 2.0
    assert err(rough, true) > 5.0


def test_a_side_with_no_edge_is_no_card() -> None:
    """A rough quad one of whose sides lies in the middle of the paper: no line to move it to."""
    true = card_corners()
    found = lines(segments(frame()), 12)
    rough = true.copy()
    rough[2] = (true[1] + true[2]) / 2
    rough[3] = (true[0] + true[3]) / 2
    assert refine(rough, found) is None


def test_a_card_on_a_white_card_is_a_rectangle_of_lines() -> None:
    """Where the top card lies on a white card its edge there is only a faint rim; the
    rectangle of lines still finds the top card, its whole outline on edges."""
    true = card_corners()
    rects = rectangles(lines(segments(frame(beneath=True, faint_side=True)), 12), (640, 480))
    assert rects, "no rectangle"
    assert err(rects[0][1], true) < 3.0
    assert rects[0][0] > 0.85


def test_a_card_seen_at_a_slant_is_a_rectangle_of_lines() -> None:
    """A camera tilted over the pile: the card's long sides 9 degrees from parallel."""
    shift = np.array([[1, 0, -CENTRE[0]], [0, 1, -CENTRE[1]], [0, 0, 1.0]])
    tilt = np.linalg.inv(shift) @ np.array([[1, 0, 0], [0, 1, 0], [0, 0.0012, 1]]) @ shift
    true = cv2.perspectiveTransform(card_corners().reshape(-1, 1, 2).astype(np.float64),
                                    tilt).reshape(-1, 2).astype(np.float32)
    d = np.diff(np.vstack([true, true[:1]]), axis=0)
    turn = np.degrees(np.arctan2(d[:, 1], d[:, 0])) % 180
    assert abs(turn[0] - turn[2]) > 8
    img = np.full((480, 640), 70, np.uint8)
    cv2.fillPoly(img, [np.rint(true).astype(np.int32)], 235)
    rects = rectangles(lines(segments(cv2.GaussianBlur(img, (3, 3), 0)), 12), (640, 480))
    assert rects, "no rectangle"
    assert err(rects[0][1], true) < 3.0


#: An upright card 140 x 200 (corners) whose sides lie on a white card beneath in places.
UPRIGHT = np.array([[250, 140], [390, 140], [390, 340], [250, 340]], np.float32)


def found_on_white(beneath: tuple[int, int]) -> bool:
    """Whether a rectangle of lines is :data:`UPRIGHT`, drawn on felt over a white card as
    bright as it (140 x 200, its top-left corner at ``beneath``)."""
    img = np.full((480, 640), 70, np.uint8)
    x, y = beneath
    cv2.rectangle(img, (x, y), (x + 140, y + 200), 235, -1)
    cv2.fillPoly(img, [UPRIGHT.astype(np.int32)], 235)
    rects = rectangles(lines(segments(cv2.GaussianBlur(img, (3, 3), 0)), 12), (640, 480))
    return any(err(q, UPRIGHT) < 3.0 for _, q in rects)


def test_a_card_with_one_side_mostly_on_a_white_card_is_a_rectangle_of_lines() -> None:
    """The white card under 70 % of the top card's right side and 40 % of its bottom: no
    edge there, but the three other sides make the card."""
    assert found_on_white((330, 210))


def test_a_card_with_three_sides_on_the_table_and_one_on_a_white_card() -> None:
    """The white card under all but the top fifth of the top card's right side: that side is
    edge along less than a fifth of it, the three others all along."""
    assert found_on_white((385, 185))


def test_a_frame_s_rectangles_are_the_cards_not_already_found() -> None:
    """Finding.rectangles, tried when no whole card read: the rectangles of lines, none of
    them a quad already found."""
    from dataclasses import replace

    from hardware.camera.reader.find import RECT_TRIES, find

    bgr = cv2.cvtColor(frame(beneath=True, faint_side=True), cv2.COLOR_GRAY2BGR)
    finding = find(bgr)
    true = card_corners()
    none_found = replace(finding, quads=[])
    assert err(none_found.rectangles()[0], true) < 3.0
    found = replace(finding, quads=[none_found.rectangles()[0]])
    assert all(err(q, true) > 10 for q in found.rectangles())
    assert len(found.rectangles()) <= RECT_TRIES


def test_a_frame_far_inside_its_card_is_read_as_the_rectangle_around_it() -> None:
    """A picture frame 35 px inside its card (too far for ``expand``): Finding.enclosing
    gives the card's rectangle of lines around it; a quad on the felt has none."""
    from hardware.camera.reader.find import find

    true = card_corners()
    inner = grow_quad(true, -35.0)
    img = frame(beneath=True, faint_side=True)
    cv2.polylines(img, [np.rint(inner).astype(np.int32)], True, 60, 2)
    finding = find(cv2.cvtColor(img, cv2.COLOR_GRAY2BGR))
    assert finding.around(inner) is None
    got = finding.enclosing(inner)
    assert got and err(got[0], true) < 3.0
    assert finding.enclosing(inner + np.float32(400.0)) == []


@pytest.mark.parametrize("reason", ["no index", "one corner"])
def test_a_quad_without_an_index_is_tried_as_the_frame_of_the_card_around_it(
        monkeypatch: pytest.MonkeyPatch, reason: str) -> None:
    """The same card: the frame is the one whole quad found, and reads no index (or one, a
    piece of the picture); with no card found from a corner either (as where the corners'
    sides run on along cards beneath), the rectangle of lines around the frame is the card
    read."""
    from hardware.camera.reader.find import Finding
    from hardware.camera.reader.recognise import Read, Recogniser
    from referee.cards import Card

    true = card_corners()
    img = frame(beneath=True, faint_side=True)
    cv2.polylines(img, [np.rint(grow_quad(true, -35.0)).astype(np.int32)], True, 60, 2)
    five = Card.parse("5C")

    def read_quad(self: Recogniser, frame: np.ndarray, quad: np.ndarray) -> Read:
        if err(quad, true) < 3.0:
            return Read(five, 0.9, quad)
        return Read(None, 0.0, quad, reason)

    monkeypatch.setattr(Recogniser, "read_quad", read_quad)
    monkeypatch.setattr(Finding, "from_corners", lambda self: [])
    assert Recogniser().read(cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)).card == five


def test_a_card_found_from_a_corner_is_beneath_only_a_quad_nothing_runs_across(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A card found from its corner that another quad lies on is a card beneath, unless a
    straight edge runs across that quad: then it lies beneath a card itself, or spans two."""
    from dataclasses import replace

    import hardware.camera.reader.recognise as recognise
    from hardware.camera.reader.find import Finding
    from hardware.camera.reader.recognise import Read, Recogniser
    from referee.cards import Card

    five = Card.parse("5C")
    mine, other = card_corners(), card_corners() + np.float32(30.0)
    img = cv2.cvtColor(frame(), cv2.COLOR_GRAY2BGR)
    monkeypatch.setattr(Recogniser, "read_quad", lambda self, frame, quad: (
        Read(five, 0.9, quad) if quad is mine else Read(None, 0.0, quad, "no index")))
    monkeypatch.setattr(Finding, "rectangles", lambda self: [])
    monkeypatch.setattr(Finding, "from_corners", lambda self: [mine])
    monkeypatch.setattr(Finding, "on_top", lambda self, a, b: a is other and b is mine)
    real_find = recognise.find
    monkeypatch.setattr(recognise, "find", lambda f: replace(real_find(f), quads=[other]))
    for crossed, card in ((False, None), (True, five)):
        monkeypatch.setattr(Finding, "crossed", lambda self, q, c=crossed: c and q is other)
        got = Recogniser().read(img)
        assert got.card == card, crossed


def test_a_quad_that_ran_on_along_the_card_beneath_is_shrunk_onto_the_card() -> None:
    """The top card's quad taken 40 px too long at one end (on along a card beneath): one side
    moved in onto the card's faint edge gives the card, first; the card's own quad, on plain
    paper, has no edge inside to move onto."""
    img = faint_frame()
    true = card_corners()
    long = true.copy()
    along = (true[3] - true[0]) / np.linalg.norm(true[3] - true[0])
    long[2] += 40 * along
    long[3] += 40 * along
    got = shrink(long, gradient(img))
    assert got and err(got[0], true) < 3.0
    assert shrink(true, gradient(img)) == []


def test_a_whole_quad_read_unclear_is_read_again_shrunk(monkeypatch: pytest.MonkeyPatch
                                                        ) -> None:
    """Recogniser.read: the one quad found, 40 px too long, reads unclear; the card inside it,
    one side moved in, is read."""
    from dataclasses import replace

    import hardware.camera.reader.recognise as recognise
    from hardware.camera.reader.find import Finding
    from hardware.camera.reader.recognise import Read, Recogniser
    from referee.cards import Card

    img = cv2.cvtColor(faint_frame(), cv2.COLOR_GRAY2BGR)
    true = card_corners()
    long = true.copy()
    along = (true[3] - true[0]) / np.linalg.norm(true[3] - true[0])
    long[2:] += 40 * along
    five = Card.parse("5C")
    monkeypatch.setattr(Recogniser, "read_quad", lambda self, frame, quad: (
        Read(five, 0.9, quad) if err(quad, true) < 3.0 else Read(None, 0.5, quad, "unclear")))
    monkeypatch.setattr(Finding, "rectangles", lambda self: [])
    monkeypatch.setattr(Finding, "from_corners", lambda self: [])
    real_find = recognise.find
    monkeypatch.setattr(recognise, "find", lambda f: replace(real_find(f), quads=[long]))
    assert Recogniser().read(img).card == five
    monkeypatch.setattr(recognise, "UNSURE", ())
    assert Recogniser().read(img).card is None


def test_no_lines_no_rectangles() -> None:
    blank = np.full((480, 640), 70, np.uint8)
    assert rectangles(lines(segments(blank), 12), (640, 480)) == []
    assert refine(card_corners(), []) is None


def faint_frame(under: int = 230, top: int = 235) -> np.ndarray:
    """The top card (grey ``top``) on a white card (grey ``under``) offset 30 px left and 25 px
    down in the card's own axes: its left and bottom sides are edges of 5 grey levels."""
    img = np.full((480, 640), 70, np.uint8)
    a = np.radians(TURN)
    dx, dy = -30 * np.cos(a) - 25 * np.sin(a), -30 * np.sin(a) + 25 * np.cos(a)
    below = cv2.boxPoints(((CENTRE[0] + dx, CENTRE[1] + dy), SIZE, TURN))
    cv2.fillPoly(img, [np.rint(below).astype(np.int32)], under)
    cv2.fillPoly(img, [np.rint(card_corners()).astype(np.int32)], top)
    return cv2.GaussianBlur(img, (5, 5), 0)


def gradient(img: np.ndarray) -> np.ndarray:
    gx = cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3)
    return np.asarray(cv2.magnitude(gx, gy))


def test_a_card_with_two_faint_sides_is_found_from_its_corner() -> None:
    """Two sides of the top card run along the felt, the other two over a white card and are
    too faint for straight lines: no rectangle of lines, but the corner whose sides stand out
    gives the card, its far sides found in the gradient."""
    img = faint_frame()
    true = card_corners()
    found = lines(segments(img), 12)
    assert all(err(q, true) > 10 for _, q in rectangles(found, (640, 480)))
    got = corner_rectangles(found, gradient(img))
    assert got, "no card from a corner"
    assert err(got[0][1], true) < 4.0


def test_no_far_side_no_card_from_a_corner() -> None:
    """The same corner with nothing across from it (the card beneath is of the very same
    grey, so the top card's paper runs on into it): no card."""
    img = faint_frame(under=235)
    got = corner_rectangles(lines(segments(img), 12), gradient(img))
    assert all(err(q, card_corners()) > 10 for _, q in got)


def test_a_picture_frame_widens_onto_its_card() -> None:
    """A court card's picture frame is a card-shaped rectangle of strong lines inside the card;
    widened, it is the card, even where the card lies on a white card of its own grey (the
    faint sides as far out as the sides across from them)."""
    true = card_corners()
    inner = grow_quad(true, -18.0)
    for under in (225, 235):
        img = faint_frame(under=under)
        cv2.polylines(img, [np.rint(inner).astype(np.int32)], True, 60, 2)
        wide = expand(inner, gradient(img))
        assert wide is not None, under
        assert err(wide, true) < 3.0, under
    assert err(inner, true) > 15.0


def test_a_frame_on_blank_paper_is_no_card() -> None:
    """No edge outside the frame on any side (nor on two sides across from each other): no
    card around it."""
    true = card_corners()
    inner = grow_quad(true, -18.0)
    img = np.full((480, 640), 235, np.uint8)
    cv2.polylines(img, [np.rint(inner).astype(np.int32)], True, 60, 2)
    assert expand(inner, gradient(img)) is None
    img = faint_frame()
    band = cv2.boxPoints((CENTRE, (SIZE[0] + 80, SIZE[1] - 40), TURN))
    cv2.fillPoly(img, [np.rint(band).astype(np.int32)], 235)  # the long sides lost in paper
    cv2.fillPoly(img, [np.rint(true).astype(np.int32)], 235)
    cv2.polylines(img, [np.rint(inner).astype(np.int32)], True, 60, 2)
    assert expand(inner, gradient(img)) is None


def beneath_corners() -> np.ndarray:
    """The corners of the card beneath the top card in :func:`faint_frame`."""
    a = np.radians(TURN)
    dx, dy = -30 * np.cos(a) - 25 * np.sin(a), -30 * np.sin(a) + 25 * np.cos(a)
    return np.asarray(cv2.boxPoints(((CENTRE[0] + dx, CENTRE[1] + dy), SIZE, TURN)),
                      np.float32)


def test_the_card_on_top_is_the_one_whose_outline_runs_on() -> None:
    """Where two cards overlap, the top card's faint edge runs across the card beneath; the
    beneath card's outline is hidden under the top card."""
    mag = gradient(faint_frame())
    top, below = card_corners(), beneath_corners()
    near = spread(mag)
    assert on_top(top, below, near)
    assert not on_top(below, top, near)
    assert not on_top(grow_quad(top, -18.0), top, near)  # a frame inside its card: no overlap
    far = top + np.float32(300.0)
    assert not on_top(far, top, near)  # apart


def test_only_a_card_of_the_same_size_lies_on_a_card(monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding.on_top: the cards of a pile are of one size, so a quad far smaller (a picture's
    frame) or far larger (two cards taken as one) is not a card lying on another, however
    its outline runs."""
    import hardware.camera.reader.find as find_module

    finding = find_module.find(cv2.cvtColor(faint_frame(), cv2.COLOR_GRAY2BGR))
    top, below = card_corners(), beneath_corners()
    assert finding.on_top(top, below)
    monkeypatch.setattr(find_module, "on_top", lambda a, b, near: True)
    centre = top.mean(axis=0)
    for k, alike in ((0.95, True), (0.8, False), (1.2, False)):  # areas 0.9, 0.64, 1.44
        quad = np.asarray(centre + (top - centre) * k, np.float32)
        assert finding.on_top(quad, below) is alike, k


def test_a_card_s_margin_is_paper() -> None:
    """A card's quad has paper along the inside of each side; a quad whose side runs through
    a picture (or off the card) has not."""
    img = faint_frame()
    top = card_corners()
    assert paper_margin(top, img > 150)
    half = top.copy()  # the top half of the card, its lower side through a dark picture
    half[2], half[3] = (top[1] + top[2]) / 2, (top[0] + top[3]) / 2
    cv2.fillPoly(img, [np.rint(grow_quad(top, -20.0)).astype(np.int32)], 90)
    assert paper_margin(top, img > 150)  # a court card: its picture inside a white margin
    assert not paper_margin(half, img > 150)
    assert not paper_margin(grow_quad(top, 12.0), img > 150)  # the table outside


def test_a_side_lost_to_glare_ends_where_the_arm_does() -> None:
    """Both cards clipped white by glare: no edge at all between them. The top card is the
    corner's arms' reach, as long as the paper there is clipped (no edge could show); paper
    that is merely alike (the test above) gives no card."""
    img = faint_frame(under=255, top=255)
    found, mag = lines(segments(img), 12), gradient(img)
    assert all(err(q, card_corners()) > 10 for _, q in corner_rectangles(found, mag))
    got = corner_rectangles(found, mag, clipped=img >= 250)
    assert got, "no card from a corner"
    assert err(got[0][1], card_corners()) < 7.0  # a drawn card has square corners
