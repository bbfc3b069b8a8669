"""Step 2 of a read: the card found in a frame, warped upright to ``WARP_W`` x ``WARP_H``
(portrait; the two ways up read the same, as a card's indices stand in opposite corners), and
the quads around an outline that are tried when it does not read (:func:`grow_quad`,
:func:`reshaped`)."""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

WARP_W, WARP_H = 200, 300


def order_corners(quad: Array) -> Array:
    """Corners clockwise from one end of a short side."""
    pts = quad.reshape(4, 2).astype(np.float32)
    c = pts.mean(axis=0)
    ang = np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0])
    pts = pts[np.argsort(ang)]  # clockwise in image coordinates (y down)
    d01 = np.linalg.norm(pts[0] - pts[1]) + np.linalg.norm(pts[2] - pts[3])
    d12 = np.linalg.norm(pts[1] - pts[2]) + np.linalg.norm(pts[3] - pts[0])
    if d01 > d12:
        pts = np.roll(pts, -1, axis=0)
    return pts


#: The shapes of playing cards (long side / short side): poker size (63.5 x 88.9 mm) and
#: bridge size (57.15 x 88.9 mm).
CARD_ASPECTS = (88.9 / 63.5, 88.9 / 57.15)
#: A side is moved to give a card's shape only by this many pixels or more, and at most this
#: share of the short side.
RESHAPE_PX = (3.0, 0.3)


def reshaped(quad: Array, aspects: tuple[float, ...] = CARD_ASPECTS) -> list[Array]:
    """``quad`` with one side moved (along the two sides it meets) so that it has a card's
    shape, each side and each shape in turn, the smallest moves first: where one side of an
    outline was found a few pixels off, onto a card beneath or into the card, one of these
    is the card."""
    q = order_corners(quad).astype(np.float64)
    short = (np.linalg.norm(q[1] - q[0]) + np.linalg.norm(q[3] - q[2])) / 2
    long = (np.linalg.norm(q[2] - q[1]) + np.linalg.norm(q[0] - q[3])) / 2
    out: list[tuple[float, Array]] = []
    for aspect in aspects:
        for side in range(4):
            a, b = side, (side + 1) % 4
            # a short side (0 and 2) moves to set the long one, a long side the short one
            delta = aspect * short - long if side % 2 == 0 else long / aspect - short
            if not RESHAPE_PX[0] <= abs(delta) <= RESHAPE_PX[1] * short:
                continue
            moved = q.copy()
            for c, other in ((a, (a - 1) % 4), (b, (b + 1) % 4)):
                along = q[c] - q[other]
                moved[c] = q[c] + delta * along / max(float(np.linalg.norm(along)), 1e-6)
            out.append((abs(float(delta)), moved.astype(np.float32)))
    return [m for _, m in sorted(out, key=lambda dm: dm[0])]


def grow_quad(quad: Array, px: float) -> Array:
    """``quad`` with each side moved ``px`` pixels outwards."""
    out = []
    for i in range(4):
        p = quad[i].astype(np.float64)
        a = p - quad[(i + 1) % 4]
        b = p - quad[i - 1]
        out.append(p + px * (a / max(np.linalg.norm(a), 1e-6) + b / max(np.linalg.norm(b), 1e-6)))
    return np.array(out, np.float32)


def warp(frame: Array, quad: Array) -> Array:
    """The card inside ``quad``, upright, ``WARP_W`` x ``WARP_H``."""
    dst = np.array([[0, 0], [WARP_W - 1, 0], [WARP_W - 1, WARP_H - 1], [0, WARP_H - 1]],
                   np.float32)
    M = cv2.getPerspectiveTransform(quad.astype(np.float32), dst)
    return np.asarray(cv2.warpPerspective(frame, M, (WARP_W, WARP_H), flags=cv2.INTER_AREA))
