"""Step 2 of a read: the card found in a frame, warped upright to ``CARD_W`` x ``CARD_H``
(portrait), and its four corner views, which the classifier reads.

A card's index stands in its top-left corner and, turned round, in its bottom-right one (some
decks print it in all four corners, some only top-right); which way up the card lies, the warp
cannot know. So the four views are: the top-left and top-right corners of the warped card, and
the same two of the card turned half round (the bottom-right and bottom-left corners, turned).
Whichever way up the card lies, these are the same four pictures, in another order.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

#: The warped card (portrait), and a corner view: its top-left ``VIEW_W`` x ``VIEW_H`` pixels.
CARD_W, CARD_H = 128, 176
VIEW_W, VIEW_H = 44, 52


def order_corners(quad: Array) -> Array:
    """Corners clockwise (in the frame, y down) from one end of a short side."""
    pts = quad.reshape(4, 2).astype(np.float32)
    c = pts.mean(axis=0)
    pts = pts[np.argsort(np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0]))]
    d01, d12 = opposite_sides(pts)
    return np.roll(pts, -1, axis=0) if d01 > d12 else pts


def opposite_sides(quad: Array) -> tuple[float, float]:
    """The lengths of a quad's sides 0-1 and 2-3 together, and of its sides 1-2 and 3-0."""
    p = quad.reshape(4, 2)
    return (float(np.linalg.norm(p[0] - p[1]) + np.linalg.norm(p[2] - p[3])),
            float(np.linalg.norm(p[1] - p[2]) + np.linalg.norm(p[3] - p[0])))


def squareness(quad: Array) -> float:
    """How far from square an outline is: its longer pair of opposite sides over the other
    (1.0 square; a card seen straight on ~1.4)."""
    across, along = opposite_sides(np.asarray(quad, np.float64))
    return max(across, along) / max(min(across, along), 1e-9)


def warp(frame: Array, quad: Array, size: tuple[int, int] = (CARD_W, CARD_H)) -> Array:
    """The card inside ``quad`` (clockwise from one end of a short side), upright, ``size``
    pixels. A card much larger than that in the frame is first shrunk by halves (a warp only
    samples: the fine print would alias)."""
    q = quad.reshape(4, 2).astype(np.float32)
    w, h = size
    length = max(float(np.linalg.norm(q[0] - q[3])), float(np.linalg.norm(q[1] - q[2])))
    x, y, bw, bh = cv2.boundingRect(q)
    fh, fw = frame.shape[:2]
    x0, y0 = max(0, x - 2), max(0, y - 2)
    x1, y1 = min(fw, x + bw + 2), min(fh, y + bh + 2)
    part = frame[y0:y1, x0:x1] if x1 > x0 and y1 > y0 else frame[:1, :1]
    q = q - np.array([x0, y0], np.float32)
    while length > 2.2 * h and min(part.shape[:2]) > 8:
        part = cv2.pyrDown(part)
        q = np.asarray((q + 0.5) / 2 - 0.5, np.float32)
        length /= 2
    dst = np.array([[0, 0], [w - 1, 0], [w - 1, h - 1], [0, h - 1]], np.float32)
    M = cv2.getPerspectiveTransform(q, dst)
    return np.asarray(cv2.warpPerspective(part, M, (w, h), flags=cv2.INTER_LINEAR,
                                          borderMode=cv2.BORDER_REPLICATE))


def views(card: Array) -> Array:
    """The four corner views of a warped card (4 x ``VIEW_H`` x ``VIEW_W`` x 3): its top-left,
    its top-right, and those two of the card turned half round."""
    turned = card[::-1, ::-1]
    return np.stack([card[:VIEW_H, :VIEW_W], card[:VIEW_H, -VIEW_W:],
                     turned[:VIEW_H, :VIEW_W], turned[:VIEW_H, -VIEW_W:]])


#: Where :func:`pip_views` look on the upright card: a view at full size over the left column
#: of pips (top-left corner), and the card's upper part (top-left, size) shrunk to a view.
PIP_AT = (22, 20)
PIP_AREA = ((16, 20), (104, 88))


def pip_views(card: Array) -> Array:
    """Four views of a warped card's middle, where a number card's pips stand, as large as
    the index's suit sign or larger (4 x ``VIEW_H`` x ``VIEW_W`` x 3): over the left column of
    pips, and the upper part shrunk, each of the card and of the card turned half round (the
    pips of either half stand upright in it)."""
    out = []
    (ay, ax), ((by, bx), (bh, bw)) = PIP_AT, PIP_AREA
    for c in (card, card[::-1, ::-1]):
        out.append(c[ay:ay + VIEW_H, ax:ax + VIEW_W])
        out.append(cv2.resize(np.ascontiguousarray(c[by:by + bh, bx:bx + bw]), (VIEW_W, VIEW_H),
                              interpolation=cv2.INTER_AREA))
    return np.stack(out)


#: Where :func:`pip_count` looks on the upright card (top, bottom, left, right): the middle,
#: clear of the corner indices.
PIP_FIELD = (8, 168, 20, 108)


def pip_count(card: Array) -> int | None:
    """How many pips a warped number card shows in its middle, or None where they cannot be
    told apart surely. Ink is what stands out from the paper's colour (the middle's median)
    beyond Otsu's threshold; the pips are its blobs at least 0.3 times the largest, and they
    must look alike: none cut by the field's edge, the largest area at most 2.2 times the
    least, widths and heights within twice each other, none over 45 % of the field's width
    or 30 % of its height (a court's picture, blurred pips run together, a card beneath)."""
    y0, y1, x0, x1 = PIP_FIELD
    middle = np.ascontiguousarray(card[y0:y1, x0:x1])
    paper = np.median(middle[::4, ::4].reshape(-1, 3), axis=0)  # every 16th pixel is plenty
    diff = cv2.absdiff(middle, np.full_like(middle, np.round(paper).astype(np.uint8)))
    b, g, r = cv2.split(diff)
    ink = cv2.max(cv2.max(b, g), r)  # numpy's max over the colour axis is 3x slower
    level, _ = cv2.threshold(ink, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    if level < 40:  # no ink that stands out: a blank or washed-out middle
        return None
    mask = cv2.morphologyEx((ink > level).astype(np.uint8), cv2.MORPH_OPEN,
                            np.ones((2, 2), np.uint8))
    n, _, stats, _ = cv2.connectedComponentsWithStats(mask, connectivity=8)
    h, w = mask.shape
    blobs = [(int(a), int(bw), int(bh), bool(x == 0 or y == 0 or x + bw == w or y + bh == h))
             for x, y, bw, bh, a in stats[1:].tolist() if a >= 25]
    if not blobs:
        return None
    largest = max(a for a, _, _, _ in blobs)
    pips = [b for b in blobs if b[0] >= 0.3 * largest]
    areas, widths, heights = ([b[i] for b in pips] for i in range(3))
    if (any(b[3] for b in pips) or max(areas) > 2.2 * min(areas)
            or max(widths) > 2 * min(widths) or max(heights) > 2 * min(heights)
            or max(widths) > 0.45 * w or max(heights) > 0.3 * h):
        return None
    return len(pips)

