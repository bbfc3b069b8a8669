"""Whole cards by their paper: the contour-and-warp idiom of OpenCV's
``samples/python/squares.py``. Paper (bright, unsaturated) off the edges falls apart into
regions, the white of a card between its pips, its index and its picture; a region whose
outline is a convex quadrilateral of a card's proportions, filled to its corners, is a whole
card, and the regions of one card grown together fill such a rectangle (:func:`grow_cards`).
Cards beneath are offset and partly covered, so their outlines are not quadrilaterals.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from hardware.camera.reader.lines import Line, meet
from hardware.camera.reader.rectangles import refine
from hardware.camera.reader.warp import order_corners

Array = npt.NDArray[Any]

#: A card's long side over its short side, seen from above (poker 1.40, bridge 1.56), with
#: room for a camera a little off vertical.
ASPECT = (1.25, 1.75)


def rect_fit(pts: Array) -> tuple[float, float, float]:
    """Hull area, hull area over its minimum rectangle's area, and that rectangle's aspect."""
    hull = cv2.convexHull(pts.reshape(-1, 1, 2).astype(np.float32))
    area = float(cv2.contourArea(hull))
    (_, _), (rw, rh), _ = cv2.minAreaRect(hull)
    if rw < 1 or rh < 1:
        return area, 0.0, 0.0
    return area, area / (rw * rh), max(rw, rh) / min(rw, rh)


def hull_quad(pts: Array) -> Array | None:
    """The four corners of a card-shaped hull, ordered, or None."""
    hull = cv2.convexHull(pts.reshape(-1, 1, 2).astype(np.float32))
    for eps in (0.02, 0.03, 0.045):
        approx = cv2.approxPolyDP(hull, eps * cv2.arcLength(hull, True), True)
        if len(approx) == 4:
            break
    else:
        box = cv2.boxPoints(cv2.minAreaRect(hull))
        return order_corners(box)
    return order_corners(approx)


#: The share of a side's length an edge must run along for the side to be a card's.
SIDE_SUPPORT = 0.3
#: The least share of a card's rectangle its paper regions must cover (a court card: little).
MIN_FILL = 0.2


def _snap(quad: Array, canny: Array) -> Array | None:
    """Move each side of ``quad`` outwards onto the card's edge: the regions stop short of
    it (an index or a pip near the edge cuts a strip off). None if the sides do not meet."""
    h, w = canny.shape
    c = quad.mean(axis=0)
    lines = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        d = b - a
        length = float(np.linalg.norm(d))
        if length < 4:
            return None
        nrm = np.array([d[1], -d[0]]) / length
        if np.dot(nrm, (a + b) / 2 - c) < 0:
            nrm = -nrm
        ts = np.linspace(0.15, 0.85, 24)
        offs = np.arange(-2, 19)
        pts = np.rint(a[None, None, :] + ts[None, :, None] * d[None, None, :]
                      + offs[:, None, None] * nrm[None, None, :]).astype(np.int64)
        xs, ys = pts[..., 0], pts[..., 1]
        inside = (xs >= 0) & (xs < w) & (ys >= 0) & (ys < h)
        xc, yc = np.clip(xs, 0, w - 1), np.clip(ys, 0, h - 1)
        near = (canny[yc, xc] > 0) | (canny[np.clip(yc + 1, 0, h - 1), xc] > 0)
        hits_all = (near & inside).sum(axis=1)
        best, best_off = -1, 0.0
        for off, hits in zip(offs.tolist(), hits_all.tolist(), strict=True):
            if hits > best + 2 or (hits >= best and off < best_off and hits > 0.6 * 24):
                best, best_off = hits, float(off)
        if best < SIDE_SUPPORT * len(ts):
            return None  # a side with no edge along it: not a card's outline
        lines.append((a + best_off * nrm, d))
    return meet(lines)


def support(quad: Array, near: Array) -> float:
    """The share of the outline of ``quad`` (less its rounded corners) on ``near`` (the edges,
    widened by two pixels)."""
    h, w = near.shape
    ts = np.linspace(0.08, 0.92, 40)
    pts = []
    for i in range(4):
        a, b = quad[i], quad[(i + 1) % 4]
        pts.append(a[None, :] + ts[:, None] * (b - a)[None, :])
    p = np.rint(np.concatenate(pts)).astype(np.int64)
    inside = (p[:, 0] >= 0) & (p[:, 0] < w) & (p[:, 1] >= 0) & (p[:, 1] < h)
    if not inside.all():
        return 0.0
    return float((near[p[:, 1], p[:, 0]] > 0).mean())


def grow_cards(free: Array, canny: Array, opening: Array, straight: list[Line]
          ) -> list[tuple[float, Array]]:
    """Card-shaped groups of the paper regions of ``free`` (paper off the edges)."""
    h, w = free.shape
    found: list[tuple[float, Array]] = []
    regions = cv2.morphologyEx(free, cv2.MORPH_OPEN, opening)
    # Each region's outline (the top level of RETR_CCOMP) less its holes (pips, glyphs).
    cnts, tree = cv2.findContours(regions, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    min_area = 0.0004 * w * h
    frags = []
    if not cnts:
        return found
    holes: dict[int, float] = {}
    for i, (_, _, _, parent) in enumerate(tree[0]):
        if parent >= 0:
            holes[int(parent)] = holes.get(int(parent), 0.0) + cv2.contourArea(cnts[i])
    for i, (_, _, _, parent) in enumerate(tree[0]):
        if parent >= 0:
            continue
        a = cv2.contourArea(cnts[i]) - holes.get(i, 0.0)
        if a < min_area:
            continue
        x, y, bw, bh = cv2.boundingRect(cnts[i])
        pts = cv2.convexHull(cnts[i]).reshape(-1, 2)
        frags.append((a, x, y, bw, bh, pts.astype(np.float32)))
    frags.sort(key=lambda f: -f[0])
    tried: set[frozenset[int]] = set()
    for k in range(len(frags)):
        group = {k}
        pts = frags[k][5]
        gx0, gy0 = frags[k][1], frags[k][2]
        gx1, gy1 = gx0 + frags[k][3], gy0 + frags[k][4]
        grown = True
        while grown:
            grown = False
            best: tuple[float, int, Array] | None = None
            for j, (_, x, y, bw, bh, fp) in enumerate(frags):
                if j in group or x > gx1 + 6 or y > gy1 + 6 or x + bw < gx0 - 6 \
                        or y + bh < gy0 - 6:
                    continue
                both = np.concatenate([pts, fp])
                area, rect, aspect = rect_fit(both)
                if rect < 0.9 or aspect > ASPECT[1] or area > 0.6 * w * h:
                    continue
                if best is None or rect > best[0]:
                    best = (rect, j, both)
            if best is not None:
                group.add(best[1])
                pts = cv2.convexHull(best[2].reshape(-1, 1, 2)).reshape(-1, 2)
                _, x, y, bw, bh, _ = frags[best[1]]
                gx0, gy0 = min(gx0, x), min(gy0, y)
                gx1, gy1 = max(gx1, x + bw), max(gy1, y + bh)
                grown = True
        key = frozenset(group)
        if key in tried:
            continue
        tried.add(key)
        area, rect, aspect = rect_fit(pts)
        if rect < 0.9 or not ASPECT[0] <= aspect <= ASPECT[1] or area < 0.01 * w * h:
            continue
        fill = sum(frags[j][0] for j in group) / max(area, 1.0)
        if fill < MIN_FILL:
            continue
        quad = hull_quad(pts)
        if quad is None:
            continue
        rough = quad
        quad = refine(rough, straight)
        if quad is None:
            quad = _snap(rough, canny)
        if quad is None:
            continue
        found.append((area, quad))
    return found
