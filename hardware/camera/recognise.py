"""The recogniser: the top card of a pile in a camera frame, with a confidence.

1. Find the top card: first where the locator network sees it (:mod:`hardware.camera.locate`);
   when that does not read, by the contour-and-warp idiom of OpenCV's
   ``samples/python/squares.py``. Edges (Canny) bound regions; a region whose outline is a
   convex quadrilateral of a card's proportions, filled to its corners, is a whole card.
   Cards beneath are offset and partly covered, so their outlines are not quadrilaterals; the
   largest whole card is the top one (and the locator's map must agree that it is on top).
2. Warp it upright to 200x300 (portrait; the two ways up read the same, as a card's indices
   stand in opposite corners).
3. Read both corner indices: the ink of each corner is split into the rank (the topmost glyph,
   two glyphs side by side for a 10) and the suit below it; two small classifiers (numpy MLPs
   trained by :mod:`hardware.camera.train` and shipped as ``model.npz``) name them.
4. The card is named only when both corners agree (or, with an enrolled deck, when its
   template clearly sides with one of two corners that differ); the confidence combines the
   readings. Below the threshold (:data:`AGREED` for two corners that agree by themselves,
   :data:`THRESHOLD` otherwise) the read is *unclear* (``card`` None), never a guess.
5. A number card's large pips, counted and read apart from the index (:func:`pip_card`),
   make a read below :data:`PIP_CHECK` unclear when they plainly show another card (or, for
   a black card, another suit), and name a card left unclear when they plainly show one
   that a corner or the template named too.

A deck enrolled with ``referee camera enroll`` adds its 52 cards as templates: the warped card
is then matched against them too, which decides between close readings.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from hardware.camera.locate import Locator, Sight
from hardware.camera.outline import (
    Line,
    corner_rectangles,
    crossed,
    edge_samples,
    expand,
    lines,
    meet,
    on_top,
    paper_margin,
    rectangles,
    refine,
    segments,
    shrink,
    spread,
)
from referee.cards import Card, full_deck

Array = npt.NDArray[Any]

WARP_W, WARP_H = 200, 300
#: The corner window read for an index, as fractions of the card's width and height.
CORNER_W, CORNER_H = 0.21, 0.33
RANK_SIZE = (24, 32)
SUIT_SIZE = (24, 24)
RANK_CLASSES = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)
SUIT_CLASSES = "CDHS"
#: A read below this confidence is unclear; AGREED for two corners that name one card by
#: themselves (the geometric mean of their readings), THRESHOLD for every other read.
THRESHOLD, AGREED = 0.80, 0.65
MODEL_PATH = Path(__file__).with_name("model.npz")


class RecogniserError(Exception):
    """The shipped model is missing (run ``python3 -m hardware.camera.train``)."""


@dataclass(frozen=True)
class Read:
    """What the recogniser made of one frame."""

    card: Card | None
    confidence: float
    quad: Array | None = None  # the top card's corners in the frame, or None: no card seen
    reason: str = ""
    guess: Card | None = None  # of an unclear read: the card both its corners named, if any

    def to_json(self, image: str | None = None) -> dict[str, Any]:
        """``{"image": …, "card": "QH" | None, "confidence": …}``."""
        out: dict[str, Any] = {} if image is None else {"image": image}
        out["card"] = None if self.card is None else str(self.card)
        out["confidence"] = round(float(self.confidence), 4)
        return out


# -- 1. the top card ------------------------------------------------------------------------
def _order(quad: Array) -> Array:
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


_KERNEL = np.ones((3, 3), np.uint8)
#: Openings of the paper regions, tried in turn until a card is found.
_OPENINGS = tuple(cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)) for k in (1, 3, 9))
_CLOSE = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (9, 9))  # at half size
#: A card's long side over its short side, seen from above (poker 1.40, bridge 1.56), with
#: room for a camera a little off vertical.
ASPECT = (1.25, 1.75)


def _rect_fit(pts: Array) -> tuple[float, float, float]:
    """Hull area, hull area over its minimum rectangle's area, and that rectangle's aspect."""
    hull = cv2.convexHull(pts.reshape(-1, 1, 2).astype(np.float32))
    area = float(cv2.contourArea(hull))
    (_, _), (rw, rh), _ = cv2.minAreaRect(hull)
    if rw < 1 or rh < 1:
        return area, 0.0, 0.0
    return area, area / (rw * rh), max(rw, rh) / min(rw, rh)


def _quad(pts: Array) -> Array | None:
    """The four corners of a card-shaped hull, ordered, or None."""
    hull = cv2.convexHull(pts.reshape(-1, 1, 2).astype(np.float32))
    for eps in (0.02, 0.03, 0.045):
        approx = cv2.approxPolyDP(hull, eps * cv2.arcLength(hull, True), True)
        if len(approx) == 4:
            break
    else:
        box = cv2.boxPoints(cv2.minAreaRect(hull))
        return _order(box)
    return _order(approx)


#: The share of a side's length an edge must run along for the side to be a card's.
SIDE_SUPPORT = 0.3
#: Canny thresholds of the finder.
CANNY = (25, 75)
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


#: Lines at least this long (pixels) part the paper regions, across gaps up to WALL_GAP.
WALL_MIN, WALL_GAP = 20.0, 20.0
#: The least share of a whole card's outline that is edge; a card with SURE_SUPPORT is sure.
WHOLE_SUPPORT, SURE_SUPPORT = 0.75, 0.9


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


def _grow(free: Array, canny: Array, opening: Array, straight: list[Line]
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
                area, rect, aspect = _rect_fit(both)
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
        area, rect, aspect = _rect_fit(pts)
        if rect < 0.9 or not ASPECT[0] <= aspect <= ASPECT[1] or area < 0.01 * w * h:
            continue
        fill = sum(frags[j][0] for j in group) / max(area, 1.0)
        if fill < MIN_FILL:
            continue
        quad = _quad(pts)
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


def find_cards(frame: Array, canny_thresholds: tuple[int, int] = CANNY) -> list[Array]:
    """The whole cards in a frame (ordered corners), largest first."""
    return find(frame, canny_thresholds).quads


def _new(quad: Array, seen: list[Array]) -> bool:
    """Whether ``quad`` is none of ``seen`` (corners within 8 px, either way up)."""
    return all(np.abs(quad - u).max() > 8 and np.abs(np.roll(quad, 2, axis=0) - u).max() > 8
               for u in seen)


@dataclass
class Finding:
    """The whole cards of a frame, and what :meth:`from_corners` needs to look further."""

    quads: list[Array]
    straight: list[Line]
    blurred: Array
    paper: Array
    scale: float

    @cached_property
    def gradient(self) -> Array:
        """The gradient magnitude of the (blurred) frame, at the finder's scale."""
        gx = cv2.Sobel(self.blurred, cv2.CV_32F, 1, 0, ksize=3)
        gy = cv2.Sobel(self.blurred, cv2.CV_32F, 0, 1, ksize=3)
        return np.asarray(cv2.magnitude(gx, gy))

    def around(self, quad: Array) -> Array | None:
        """The card around a quad that lies inside one (a court card's picture frame), or
        None (:func:`hardware.camera.outline.expand`)."""
        got = expand(quad * self.scale, self.gradient)
        if got is None or not paper_margin(got, self.paper):
            return None
        return np.asarray(got / self.scale, np.float32)

    def enclosing(self, quad: Array) -> list[Array]:
        """Card-shaped rectangles of straight lines (:attr:`lined`) around ``quad`` (a court
        card's picture frame that :meth:`around` could not widen), best first."""
        inner = quad.astype(np.float32) * self.scale
        area = cv2.contourArea(inner)
        out: list[Array] = []
        for _, q in self.lined:
            ratio = cv2.contourArea(q) / max(area, 1.0)
            if not ENCLOSING[0] <= ratio <= ENCLOSING[1]:
                continue
            outline = q.reshape(-1, 1, 2)
            if all(cv2.pointPolygonTest(outline, (float(x), float(y)), True) >= 2.0
                   for x, y in inner):
                q = _order(q) / self.scale
                if _new(q, out):
                    out.append(q.astype(np.float32))
            if len(out) >= ENCLOSING_TRIES:
                break
        return out

    def shrunk(self, quad: Array) -> list[Array]:
        """Cards inside ``quad`` with one side moved in onto an edge
        (:func:`hardware.camera.outline.shrink`) and a white margin inside every side: where
        ``quad`` ran on along a card beneath, past the top card's faint side."""
        out: list[Array] = []
        for q in shrink(quad * self.scale, self.gradient):
            if paper_margin(q, self.paper):
                out.append(np.asarray(q / self.scale, np.float32))
            if len(out) >= SHRINK_TRIES:
                break
        return out

    @cached_property
    def samples(self) -> tuple[Array, Array]:
        """The straight edges' points (:func:`hardware.camera.outline.edge_samples`)."""
        return edge_samples(self.straight)

    def crossed(self, quad: Array) -> bool:
        """Whether a straight edge runs across the quad: it lies beneath a card, or spans
        two (:func:`hardware.camera.outline.crossed`)."""
        return crossed(quad * self.scale, self.samples)

    @cached_property
    def spread(self) -> Array:
        """The gradient at its strongest within a pixel (:func:`hardware.camera.outline.spread`)."""
        return spread(self.gradient)

    def on_top(self, a: Array, b: Array) -> bool:
        """Whether the card in quad ``a`` lies on the one in ``b``
        (:func:`hardware.camera.outline.on_top`). The cards of a pile are of one size: a
        quad far larger or smaller (a picture's frame, two cards taken as one) is none."""
        if a is b:
            return False
        ratio = cv2.contourArea(a.astype(np.float32)) / max(
            cv2.contourArea(b.astype(np.float32)), 1.0)
        return SAME_SIZE[0] <= ratio <= SAME_SIZE[1] and \
            on_top(a * self.scale, b * self.scale, self.spread)

    def covered(self, quad: Array, others: list[Array]) -> bool:
        """Whether one of ``others`` lies on the card in ``quad`` (:meth:`on_top`); a quad a
        straight edge runs across lies beneath a card itself, or spans two, and tells
        nothing."""
        return any(self.on_top(other, quad) and not self.crossed(other) for other in others)

    @cached_property
    def lined(self) -> list[tuple[float, Array]]:
        """The card-shaped rectangles of the straight lines, at the finder's scale
        (:func:`hardware.camera.outline.rectangles`), made once a frame."""
        h, w = self.blurred.shape[:2]
        return rectangles(self.straight, (w, h))

    def rectangles(self) -> list[Array]:
        """Card-shaped rectangles of straight lines not among :attr:`quads`, best first
        (:func:`hardware.camera.outline.rectangles`): for a frame in which no whole card
        read, where one was found on edges (such as a court card's picture frame)."""
        out: list[Array] = []
        for _, q in self.lined[:RECT_TRIES + len(self.quads)]:
            q = _order(q) / self.scale
            if _new(q, out + self.quads):
                out.append(q.astype(np.float32))
        return out[:RECT_TRIES]

    def from_corners(self) -> list[Array]:
        """Cards found from a corner whose two sides stand out, the two across from it faint
        (:func:`hardware.camera.outline.corner_rectangles`), likeliest first; for a frame
        in which no whole card read."""
        out: list[Array] = []
        clipped = self.blurred >= CLIPPED
        for _, q in corner_rectangles(self.straight, self.gradient, clipped=clipped):
            if not paper_margin(q, self.paper):
                continue  # a side runs through a picture, not along a card's white margin
            q = _order(q) / self.scale
            if _new(q, out + self.quads):
                out.append(q.astype(np.float32))
        return out


def find(frame: Array, canny_thresholds: tuple[int, int] = CANNY) -> Finding:
    """The whole cards in a frame (ordered corners), largest first.

    Paper (bright, unsaturated) not on an edge falls apart into regions: the white of a card
    between its pips, its index and its picture. The regions of one card together fill a
    rectangle of a card's proportions; a card beneath, offset and turned, does not fit that
    rectangle. So regions are grown into groups while their hull stays such a rectangle."""
    h0, w0 = frame.shape[:2]
    scale = 1.0
    if w0 > 800:  # big photos: find the card on a smaller copy
        scale = 640.0 / w0
        frame = cv2.resize(frame, (640, round(h0 * scale)), interpolation=cv2.INTER_AREA)
    h, w = frame.shape[:2]
    hsv = cv2.cvtColor(frame, cv2.COLOR_BGR2HSV)
    sat, val = hsv[..., 1], hsv[..., 2]
    bright = float(np.percentile(val[::4, ::4], 99))
    paper = (sat < 70) & (val > max(90.0, 0.45 * bright))
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    blurred = cv2.GaussianBlur(gray, (5, 5), 0)
    canny = cv2.Canny(blurred, *canny_thresholds)
    found: list[tuple[float, Array, float]] = []  # area, corners, support
    half = cv2.resize(paper.astype(np.uint8), (w // 2, h // 2), interpolation=cv2.INTER_AREA)
    # The straight edges around the paper (the pile). The line finder sees fainter edges than
    # Canny (a card on a white card): they part the paper too, their short gaps closed.
    x, y, bw, bh = cv2.boundingRect(half)
    x0, y0 = max(0, 2 * x - 12), max(0, 2 * y - 12)
    x1, y1 = min(w, 2 * (x + bw) + 12), min(h, 2 * (y + bh) + 12)
    segs = segments(gray[y0:y1, x0:x1])
    segs[:, 0::2] += x0
    segs[:, 1::2] += y0
    straight = lines(segs, 12)
    walls = canny.copy()
    for line in straight:
        if line.length < WALL_MIN:
            continue
        spans = line.spans
        for k, (a, b) in enumerate(spans):
            if k + 1 < len(spans) and spans[k + 1][0] - b < WALL_GAP:
                b = spans[k + 1][0]
            p0, p1 = line.point(a), line.point(b)
            cv2.line(walls, (round(p0[0]), round(p0[1])), (round(p1[0]), round(p1[1])), 255, 1)
    edges = cv2.dilate(walls, _KERNEL)
    free = (paper & (edges == 0)).astype(np.uint8)
    near = cv2.dilate(canny, _KERNEL, iterations=2)
    for opening in _OPENINGS:  # none, then wider: a card beneath joined by a faint edge
        for a, q in _grow(free, canny, opening, straight):
            edge = support(q, near)
            if edge >= WHOLE_SUPPORT:
                found.append((a, q / scale, edge))
    # A card alone (the first of a pile, a card being enrolled): its whole paper blob.
    blobs, _ = cv2.findContours(cv2.morphologyEx(half, cv2.MORPH_CLOSE, _CLOSE),
                                cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    for blob in blobs:
        if cv2.contourArea(blob) < 0.0025 * w * h:
            continue
        pts = blob.reshape(-1, 2).astype(np.float32) * 2 + 0.5
        area, rect, aspect = _rect_fit(pts)
        if rect >= 0.93 and ASPECT[0] <= aspect <= ASPECT[1] and area < 0.6 * w * h:
            quad = _quad(pts)
            if quad is not None:
                found.append((area, quad / scale, support(quad, near)))
    found.sort(key=lambda x: -x[0])
    finding = Finding([], straight, blurred, paper, scale)
    if not any(edge >= SURE_SUPPORT for _, _, edge in found):
        # No card with its whole outline on edges: the rectangles of the straight lines
        # (a card whose paper runs into a white card's beneath), after the others.
        found.extend((0.0, _order(q) / scale, score) for score, q in finding.lined[:2])
    for _, q, _ in found:
        if _new(q, finding.quads):
            finding.quads.append(q.astype(np.float32))
    return finding


#: Grey levels (of the blurred frame) from which paper is clipped white: no edge shows there.
CLIPPED = 250
#: Cards found from a corner tried when no whole card read.
CORNER_TRIES = 5
#: Two quads whose areas are this far apart (the larger over the smaller, the camera's tilt
#: allowing for some) may be two cards of one pile.
SAME_SIZE = (0.75, 1 / 0.75)
#: Rectangles of straight lines tried when no whole card read.
RECT_TRIES = 4
#: Reads of a quad that may be a court card's picture frame, and how many such quads are
#: widened onto their card.
BLANK, BLANK_TRIES = ("no index", "one corner"), 3
#: Quads read unclear whose sides are moved in (:meth:`Finding.shrunk`), and how many
#: cards are tried inside each.
UNSURE, UNSURE_TRIES, SHRINK_TRIES = ("unclear", "one corner", "no index"), 2, 2
#: A rectangle of straight lines around a quad without an index (a picture frame) may be its
#: card when its area is this many times the quad's; this many are tried.
ENCLOSING, ENCLOSING_TRIES = (1.3, 5.0), 2
#: Pixels (of the frame) by which a quad is widened, in turn, when a corner cannot be read.
READ_WIDER = (4.0, 8.0)
#: The locator's places tried, likeliest first.
SPOT_TRIES = 2
#: An outline of the edge finder is read only where the locator's map holds at least this
#: mean chance (a card beneath, or the table, is near 0).
ON_TOP = 0.25


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
    q = _order(quad).astype(np.float64)
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


# -- 3. the corner index --------------------------------------------------------------------
@dataclass(frozen=True)
class Glyphs:
    """A corner's rank and suit ink, normalised, and the suit's redness."""

    rank: Array
    suit: Array
    red: float
    rank_aspect: float
    suit_aspect: float


def _fit(mask: Array, size: tuple[int, int]) -> Array:
    """Ink of a glyph box scaled (aspect kept) and centred into ``size`` (w, h), 0..1."""
    h, w = mask.shape
    tw, th = size
    s = min((tw - 2) / w, (th - 2) / h)
    nw, nh = max(1, round(w * s)), max(1, round(h * s))
    small = cv2.resize(mask.astype(np.float32), (nw, nh), interpolation=cv2.INTER_AREA)
    out = np.zeros((th, tw), np.float32)
    y0, x0 = (th - nh) // 2, (tw - nw) // 2
    out[y0:y0 + nh, x0:x0 + nw] = small
    return out


#: Margins (pixels of the warped card) blanked before a corner is split: the card's outline
#: found a few pixels wide leaves a strip of table or of the card beneath along the edge.
MARGINS = (2, 5, 8)

#: Shares of the way from the ink threshold to the darkest ink, tried in turn on ink that runs
#: out of the corner until the index splits.
DARKER = (0.0, 0.25, 0.5)

#: An upright line of ink at least this share of a corner's height is a picture frame.
FRAME_LINE = 0.45
#: A level line of ink at least this share of a corner's width that runs out of the corner on
#: the right is the top of a picture frame.
FRAME_TOP = 0.3


def corner_glyphs(card: Array) -> Glyphs | None:
    """The index of the card's top-left corner, or None when it cannot be split."""
    cw, ch = round(CORNER_W * WARP_W), round(CORNER_H * WARP_H)
    crop = card[:ch, :cw].astype(np.float32)
    gray = crop.min(axis=2)  # red ink is dark in green and blue
    flat = gray.ravel()
    k = int(0.85 * (flat.size - 1))
    paper = float(np.partition(flat, k)[k])  # the 85th percentile
    if paper < 40:
        return None
    inks: dict[int, tuple[Array, Array, float] | None] = {}
    for darker in DARKER:
        for m in MARGINS:
            if m not in inks:
                inks[m] = _corner_ink(gray, paper, m)
            got = inks[m]
            if got is None:
                continue
            glyphs = _split(crop, paper, m, *got, darker)
            if glyphs is not None:
                return glyphs
    return None


def _corner_ink(gray: Array, paper: float, m: int) -> tuple[Array, Array, float] | None:
    """The corner's grey levels with a margin of ``m`` pixels blanked, its ink (picture
    frames taken out) and the ink's threshold; None if there is no ink."""
    ch, cw = gray.shape
    if paper - float(gray[m:, m:].min()) < 50:
        return None
    gray = gray.copy()
    gray[:m, :] = paper
    gray[:, :m] = paper
    g8 = np.clip(gray, 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(g8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    cut = min(float(otsu), paper - 35)
    ink: Array = (gray < cut).astype(np.uint8)
    # A court card's picture frame runs down beside the index, and a rank's tail may touch
    # it: long upright lines are taken out (no index glyph is nearly half a corner tall).
    lines = cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((round(FRAME_LINE * ch), 1), np.uint8))
    if lines.any():
        ink &= 1 - cv2.dilate(lines, np.ones((1, 3), np.uint8))
    # and the frame's top, a thin level line running out of the corner on the right (not ink
    # strokes thick, such as a suit that blur has joined to a picture)
    thin = ink & (1 - cv2.morphologyEx(ink, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8)))
    level = cv2.morphologyEx(thin, cv2.MORPH_OPEN, np.ones((1, round(FRAME_TOP * cw)), np.uint8))
    if level[:, -2:].any():
        n, labels, stats, _ = cv2.connectedComponentsWithStats(level, connectivity=8)
        out = [i for i in range(1, n) if stats[i, 0] + stats[i, 2] >= cw - 1]
        ink &= 1 - cv2.dilate(np.isin(labels, out).astype(np.uint8), np.ones((3, 1), np.uint8))
    return gray, ink, cut


def _split(crop: Array, paper: float, m: int, gray: Array, ink: Array, cut: float,
           darker: float) -> Glyphs | None:
    """The rank and suit of a corner's ink, or None; ``darker`` as in :data:`DARKER`."""
    ch, cw = ink.shape
    if darker:
        # Blur can join the index to a pip or a picture beside it: of ink that runs out of
        # the corner, only the darker part is kept.
        n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
        out = [i for i in range(1, n) if stats[i, 0] + stats[i, 2] >= cw - 1
               or stats[i, 1] + stats[i, 3] >= ch - 1]
        if not out:
            return None  # nothing runs out: as without the darker step
        ink = ink.copy()
        for i in out:
            inside = labels == i
            lo = float(gray[inside].min())
            ink[inside & (gray >= cut - darker * (cut - lo))] = 0
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    comps = []
    for i in range(1, n):
        x, y, w, h, a = (int(v) for v in stats[i])
        if a < 10 or h < 5:
            continue
        if x + w >= cw - 1 or y + h >= ch - 1 or x <= m or y <= m:
            continue  # cut by the window (a pip, a picture) or the card's own edge
        comps.append((y, x, w, h, i))
    if len(comps) < 2:
        return None
    comps.sort()
    y0, x0, w0, h0, _ = comps[0]
    rank_ids = []
    rx0, ry0, rx1, ry1 = x0, y0, x0 + w0, y0 + h0
    for y, x, w, h, i in comps:
        overlap = min(y + h, y0 + h0) - max(y, y0)
        if overlap >= 0.5 * min(h, h0) and h >= 0.5 * h0:
            rank_ids.append(i)
            rx0, ry0 = min(rx0, x), min(ry0, y)
            rx1, ry1 = max(rx1, x + w), max(ry1, y + h)
    below = [c for c in comps if c[0] >= ry1 - 2 and c[4] not in rank_ids]
    if not below:
        return None

    def score(c: tuple[int, int, int, int, int]) -> float:
        y, x, w, h, _ = c
        xo = min(x + w, rx1) - max(x, rx0)
        return (y - ry1) - 2.0 * xo

    sy, sx, sw, sh, si = min(below, key=score)
    if min(sx + sw, rx1) - max(sx, rx0) <= 0 or sy - ry1 > 1.2 * (ry1 - ry0):
        return None
    rank_mask = np.isin(labels[ry0:ry1, rx0:rx1], rank_ids)
    suit_mask = labels[sy:sy + sh, sx:sx + sw] == si
    pix = crop[sy:sy + sh, sx:sx + sw][suit_mask]
    b, g, r = pix[:, 0].mean(), pix[:, 1].mean(), pix[:, 2].mean()
    red = float((r - (g + b) / 2) / max(paper, 1.0))
    return Glyphs(_fit(rank_mask, RANK_SIZE), _fit(suit_mask, SUIT_SIZE), red,
                  (rx1 - rx0) / max(ry1 - ry0, 1), sw / max(sh, 1))


def hog(img: Array, cell: int = 4, bins: int = 9) -> Array:
    """Histograms of oriented gradients over ``cell`` x ``cell`` cells, each normalised with
    its 2x2 neighbourhood (OpenCV 5 has no HOGDescriptor in the headless wheel)."""
    gx = cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=1)
    gy = cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=1)
    mag = np.hypot(gx, gy)
    ang = (np.arctan2(gy, gx) % np.pi) * (bins / np.pi)
    b0 = np.floor(ang).astype(np.int64) % bins
    frac = ang - np.floor(ang)
    h, w = img.shape
    cy, cx = h // cell, w // cell
    ys, xs = np.mgrid[0:cy * cell, 0:cx * cell]
    cellno = ((ys // cell) * cx + xs // cell) * bins
    m = mag[:cy * cell, :cx * cell]
    f = frac[:cy * cell, :cx * cell]
    b = b0[:cy * cell, :cx * cell]
    size = cy * cx * bins
    hist = (np.bincount((cellno + b).ravel(), (m * (1 - f)).ravel(), size)
            + np.bincount((cellno + (b + 1) % bins).ravel(), (m * f).ravel(), size))
    hist = hist.reshape(cy, cx, bins).astype(np.float32)
    pad = np.pad(hist, ((0, 1), (0, 1), (0, 0)))
    energy = (pad[:-1, :-1] ** 2 + pad[1:, :-1] ** 2 + pad[:-1, 1:] ** 2
              + pad[1:, 1:] ** 2).sum(axis=2, keepdims=True)
    return np.asarray((hist / np.sqrt(energy + 1e-3)).ravel(), np.float32)


def rank_features(g: Glyphs) -> Array:
    """The rank classifier's input."""
    hog_ = hog(g.rank)
    small = cv2.resize(g.rank, (12, 16), interpolation=cv2.INTER_AREA).ravel()
    return np.concatenate([hog_, small, [g.rank_aspect]]).astype(np.float32)


def suit_features(g: Glyphs) -> Array:
    """The suit classifier's input."""
    hog_ = hog(g.suit)
    small = cv2.resize(g.suit, (12, 12), interpolation=cv2.INTER_AREA).ravel()
    red = np.full(8, np.clip(g.red * 4, -2, 2))
    return np.concatenate([hog_, small, red, [g.suit_aspect]]).astype(np.float32)


# -- the classifiers ------------------------------------------------------------------------
class Mlp:
    """One-hidden-layer perceptrons with a softmax output, their probabilities averaged
    (weights from ``model.npz``, stacked along a first axis; a single network's have none).
    The logits are divided by ``temperature`` (below 1: surer)."""

    def __init__(self, mean: Array, std: Array, w1: Array, b1: Array, w2: Array,
                 b2: Array, temperature: float = 1.0) -> None:
        self.mean, self.std, self.temperature = mean, std, temperature
        self.w1, self.b1 = (w1, b1) if w1.ndim == 3 else (w1[None], b1[None])
        self.w2, self.b2 = (w2, b2) if w2.ndim == 3 else (w2[None], b2[None])

    def probabilities(self, x: Array) -> Array:
        """Class probabilities of each row of ``x``."""
        z = (x - self.mean) / self.std
        h = np.maximum(z @ self.w1 + self.b1[:, None], 0)
        o = (h @ self.w2 + self.b2[:, None]) / self.temperature
        o = o - o.max(axis=-1, keepdims=True)
        e = np.exp(o)
        return np.asarray((e / e.sum(axis=-1, keepdims=True)).mean(axis=0))


@lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> tuple[Mlp, Mlp]:
    """The rank and suit classifiers that ship with the package."""
    if not path.exists():
        raise RecogniserError(f"the recogniser's model {path} is missing; make it with "
                              "python3 -m hardware.camera.train")
    with np.load(path) as z:
        nets = []
        for name in ("rank", "suit"):
            mean, std, w1, b1, w2, b2 = (z[f"{name}_{k}"]
                                         for k in ("mean", "std", "w1", "b1", "w2", "b2"))
            t = float(z[f"{name}_temperature"]) if f"{name}_temperature" in z else 1.0
            nets.append(Mlp(mean, std, w1, b1, w2, b2, t))
    return nets[0], nets[1]


# -- enrolled decks -------------------------------------------------------------------------
#: A template's size: the whole card, small (its layout of pips or picture names it; a corner
#: index at this size does not, and at full size a warp a pixel or two off spoils it).
TEMPLATE = (40, 60)
#: The width (template pixels) of the slow change of light taken away from a template's grey.
TEMPLATE_LIGHT = 8.0
#: The weight of a template's redness beside its grey (hearts and diamonds from spades and
#: clubs, where the suits' shapes are too small to tell).
TEMPLATE_RED = 0.5
#: What a deck file's templates are: a file made by another version cannot be matched.
TEMPLATE_KIND = "card-light-red-40x60"
#: The lead of a template's best score over any card not alike it that makes it clear (1).
TEMPLATE_LEAD = 0.08
#: A best score below this names nothing (a card covered, or not the deck's).
TEMPLATE_FLOOR = 0.6


def template_vector(card: Array) -> Array:
    """A warped card as a zero-mean unit vector, for matching: its grey without the light's
    slow change across it, and its redness, both small."""
    small = cv2.resize(card, TEMPLATE, interpolation=cv2.INTER_AREA).astype(np.float32)
    b, g, r = cv2.split(small)
    grey = 0.114 * b + 0.587 * g + 0.299 * r
    grey = grey - cv2.GaussianBlur(grey, (0, 0), TEMPLATE_LIGHT)
    v = np.concatenate([grey.ravel(), TEMPLATE_RED * (r - (g + b) / 2).ravel()])
    v = v - v.mean()
    return np.asarray(v / (np.linalg.norm(v) + 1e-6), np.float32)


@dataclass(frozen=True)
class EnrolledDeck:
    """The 52 cards of one deck as templates (``referee camera enroll``)."""

    cards: tuple[Card, ...]
    vectors: Array

    def save(self, path: str | Path) -> None:
        """Write the deck file (npz)."""
        with open(path, "wb") as fh:
            np.savez_compressed(fh, cards=np.array([str(c) for c in self.cards]),
                                vectors=self.vectors, kind=np.array(TEMPLATE_KIND))

    @classmethod
    def load(cls, path: str | Path) -> EnrolledDeck:
        """Read a deck file; a file that is not one raises ValueError or OSError."""
        try:
            with np.load(path, allow_pickle=False) as z:
                cards = tuple(Card.parse(str(c)) for c in z["cards"])
                vectors = np.asarray(z["vectors"], np.float32)
                kind = str(z["kind"]) if "kind" in z.files else "an older kind"
        except (KeyError, EOFError) as exc:
            raise ValueError(f"{path} is not a camera deck file ({exc})") from None
        except ValueError as exc:
            raise ValueError(f"{path} is not a camera deck file ({exc})") from None
        if len(cards) != vectors.shape[0]:
            raise ValueError(f"{path} is not a camera deck file (sizes differ)")
        if kind != TEMPLATE_KIND:
            raise ValueError(f"{path} holds templates of {kind}, which this version does not "
                             "match: enroll the deck again (referee camera enroll)")
        return cls(cards, vectors)

    def look(self, card: Array) -> TemplateMatch:
        """How the deck's templates match a warped card (both orientations tried)."""
        a = template_vector(card)
        b = template_vector(cv2.flip(card, -1))
        scores = np.maximum(self.vectors @ a, self.vectors @ b)
        order = np.argsort(-scores)
        best = self.cards[int(order[0])]
        second = float(scores[order[1]]) if len(order) > 1 else -1.0  # a deck of one card
        other = next((float(scores[i]) for i in order[1:]
                      if not alike(self.cards[int(i)], best)), -1.0)
        return TemplateMatch(best, float(scores[order[0]]), second, other)


@dataclass(frozen=True)
class TemplateMatch:
    """The enrolled template likeliest for a card, its score, the runner-up's, and the best
    score of a card not :func:`alike` it."""

    card: Card
    score: float
    second: float
    other: float

    @property
    def clear(self) -> float:
        """How clearly the template names its card (0-1: its lead over the runner-up); none
        below the floor (a card covered, or not the deck's)."""
        return float(np.clip((self.score - self.second) / TEMPLATE_LEAD, 0, 1)) \
            * float(self.score > TEMPLATE_FLOOR)

    @property
    def clear_kind(self) -> float:
        """How clearly it names its card's rank and colour (its lead over any card not alike
        it), as :attr:`clear`."""
        return float(np.clip((self.score - self.other) / TEMPLATE_LEAD, 0, 1)) \
            * float(self.score > TEMPLATE_FLOOR)


def alike(a: Card, b: Card) -> bool:
    """Whether two cards look alike to a template: the same rank and colour (the ace of
    hearts and of diamonds differ only in the small pips' shape, which a template a pixel
    off loses; the corners tell their suits)."""
    return a.rank == b.rank and (a.suit in "HD") == (b.suit in "HD")


# -- the whole read -------------------------------------------------------------------------
def read_corners(card: Array) -> list[tuple[Card, float] | None]:
    """Each corner's reading of a warped card: (card, confidence) or None."""
    rank_net, suit_net = load_model()
    glyphs = [corner_glyphs(card), corner_glyphs(cv2.flip(card, -1))]
    present = [g for g in glyphs if g is not None]
    if not present:
        return [None, None]
    pr = rank_net.probabilities(np.stack([rank_features(g) for g in present]))
    ps = suit_net.probabilities(np.stack([suit_features(g) for g in present]))
    out: list[tuple[Card, float] | None] = []
    k = 0
    for g in glyphs:
        if g is None:
            out.append(None)
            continue
        ri, si = int(pr[k].argmax()), int(ps[k].argmax())
        out.append((Card(RANK_CLASSES[ri], SUIT_CLASSES[si]), float(pr[k, ri] * ps[k, si])))
        k += 1
    return out


#: Where a warped card's pips are looked for (shares of its width and height: between the
#: indices' columns, clear of the ends).
PIP_BOX = (0.12, 0.88, 0.05, 0.95)
#: A pip: its height as a share of the card's, its width over its height, and the share of
#: its box its ink fills (suit shapes; not a letter's stroke or a picture's line).
PIP_HEIGHT, PIP_ASPECT, PIP_FILL = (0.05, 0.3), (0.6, 1.5), (0.35, 0.9)
#: Pips whose centre is nearer the card's middle than this share of its height are on the
#: middle row, printed either way up.
PIP_MIDDLE = 0.06
#: At most this many pips of each half of the card are read.
PIP_READ = 2
#: A pip's partner, where the card turned round would put it, is this near (a share of the
#: card's height).
PIP_PLACE = 0.05
#: Pips at least this share of the tallest one's height are taken (the large pips of one
#: card, not a smaller mark beside them).
PIP_SAME = 0.75
#: A number card's pips deny the corners' suit when their chance of it is below the first
#: and of another suit above the second.
PIP_DENY = (0.1, 0.8)
#: Only a read less sure than this is checked against its pips: the corners that blur
#: misled read 0.65-0.84, 90-98 % of the right reads of black number cards 0.9 or more.
PIP_CHECK = 0.9


_NO_RANK = np.zeros((RANK_SIZE[1], RANK_SIZE[0]), np.float32)  # a pip has no rank glyph


@dataclass
class Pips:
    """The large pips found in a warped card's body (:func:`find_pips`)."""

    crop: Array  # the body box of the card
    labels: Array  # its ink's connected components
    stats: Array  # their boxes and areas (OpenCV's stats)
    paper: float  # the paper's brightness
    pips: list[tuple[int, float, float]]  # (label, x, y): centres, shares of the card's size
    whole: bool  # no other blob of a pip's size: a picture, pips run together, a pip cut off


def find_pips(card: Array) -> Pips | None:
    """The large pips in a warped card's body: ink blobs of a pip's size, shape and fill,
    each at least ``PIP_SAME`` of the tallest one's height; None when there are none."""
    h_, w_ = card.shape[:2]
    x0, x1 = round(PIP_BOX[0] * w_), round(PIP_BOX[1] * w_)
    y0, y1 = round(PIP_BOX[2] * h_), round(PIP_BOX[3] * h_)
    crop = card[y0:y1, x0:x1]
    b, g, r = cv2.split(crop)
    gray = cv2.min(cv2.min(b, g), r)  # the darkest channel: red ink is ink
    sample = gray[::2, ::2].ravel()
    k = int(0.85 * (sample.size - 1))
    paper = float(np.partition(sample, k)[k])
    if paper < 40 or paper - float(sample.min()) < 50:
        return None
    otsu, _ = cv2.threshold(gray, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    ink = (gray < min(float(otsu), paper - 35)).astype(np.uint8)
    n, labels, stats, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    ch, cw = ink.shape
    found: list[tuple[int, int, float, float]] = []  # (height, label, x, y)
    blobs: list[tuple[int, int, bool]] = []  # other blobs: (height, area, cut by the box)
    for i in range(1, n):
        x, y, w, h, a = (int(v) for v in stats[i])
        cut = x <= 0 or y <= 0 or x + w >= cw or y + h >= ch
        if not cut and PIP_HEIGHT[0] * h_ <= h <= PIP_HEIGHT[1] * h_ \
                and PIP_ASPECT[0] <= w / h <= PIP_ASPECT[1] \
                and PIP_FILL[0] <= a / (w * h) <= PIP_FILL[1]:
            found.append((h, i, (x0 + x + w / 2) / w_, (y0 + y + h / 2) / h_))
        else:
            blobs.append((h, a, cut))
    if not found:
        return None
    tallest = max(f[0] for f in found)
    pips = [(i, x, y) for h, i, x, y in found if h >= PIP_SAME * tallest]
    area = float(np.median([stats[i][4] for i, _, _ in pips]))
    # A blob inside the box as big as half a pip, or one cut by the box as tall as a pip
    # (not an index's glyph), means the pips seen are not all the card's.
    whole = not any(a >= 0.5 * area if not cut else h >= PIP_SAME * tallest and a >= 0.5 * area
                    for h, a, cut in blobs)
    return Pips(crop, labels, stats, paper, pips, whole)


def pip_suits(card: Array, found: Pips | None = None) -> Array | None:
    """The suit chances (``SUIT_CLASSES`` order) of the large pips in a warped card's body,
    each read the way up it is printed, averaged; None when no pip is seen. The pips
    are several times the size of the index's suit: blur that makes a club in the corner
    pass for a spade leaves the pips plain."""
    found = find_pips(card) if found is None else found
    if found is None:
        return None
    # Pips in the card's lower half are printed upside down (an upside-down club reads as a
    # spade); a pip on the middle row is either way up, as the card lies, and is left out.
    # A few from each half are enough.
    upper = [i for i, _, y in found.pips if y <= 0.5 - PIP_MIDDLE]
    lower = [i for i, _, y in found.pips if y >= 0.5 + PIP_MIDDLE]
    features = []
    for i, flip in [(i, False) for i in upper[:PIP_READ]] + [(i, True) for i in lower[:PIP_READ]]:
        x, y, w, h, _ = (int(v) for v in found.stats[i])
        mask = found.labels[y:y + h, x:x + w] == i
        pix = found.crop[y:y + h, x:x + w][mask].astype(np.float32)
        red = float((pix[:, 2].mean() - (pix[:, 0].mean() + pix[:, 1].mean()) / 2)
                    / max(found.paper, 1.0))
        if flip:
            mask = mask[::-1, ::-1]
        features.append(suit_features(Glyphs(_NO_RANK, _fit(mask, SUIT_SIZE), red, 1.0,
                                             w / h)))
    if not features:
        return None
    _, suit_net = load_model()
    return np.asarray(suit_net.probabilities(np.stack(features)).mean(axis=0), np.float32)


def pip_card(card: Array, found: Pips | None = None) -> tuple[Card, float] | None:
    """The number card its pips show, with the pips' chance of its suit, or None when they do
    not plainly show one: 2 to 10 pips, nothing else of a pip's size in the card's body, laid
    out as a number card's pips are (each has a partner where the card turned round would put
    it, but for an odd count's one in the middle column), their suit above 0.9. ``found``:
    what :func:`find_pips` found on ``card``, if it was looked for already."""
    found = find_pips(card) if found is None else found
    if found is None or not found.whole or not 2 <= len(found.pips) <= 10:
        return None
    aspect = card.shape[0] / card.shape[1]
    odd = [(x, y) for i, x, y in found.pips
           if not any(j != i and abs(px - (1 - x)) < PIP_PLACE * aspect
                      and abs(py - (1 - y)) < PIP_PLACE for j, px, py in found.pips)]
    n = len(found.pips)
    if n % 2 == 0 and odd:
        return None
    if n % 2 == 1:
        # One pip of an odd count has no partner: in the middle column, and for a 3, 5 or 9
        # near the middle row (a 7's is above or below it).
        if len(odd) != 1 or abs(odd[0][0] - 0.5) >= PIP_PLACE * aspect \
                or (n != 7 and abs(odd[0][1] - 0.5) >= 0.1):
            return None
    chances = pip_suits(card, found)
    if chances is None or float(chances.max()) < 0.9:
        return None
    return Card(n, SUIT_CLASSES[int(chances.argmax())]), float(chances.max())


def pips_deny(card_img: Array, card: Card, found: Pips | None = None) -> bool:
    """Whether a black number card's pips plainly show another suit than ``card``'s. Blur
    joins a club's lobes into a spade's outline (and may part a spade's); the red suits differ
    by more than blur takes away, and are not checked (the check costs about 2.5 ms).
    ``found``: as for :func:`pip_card`."""
    if not 2 <= card.rank <= 10 or card.suit not in "CS":
        return False  # a court card's picture and an ace's large pip are not pips to read
    chances = pip_suits(card_img, found)
    if chances is None:
        return False
    named = float(chances[SUIT_CLASSES.index(card.suit)])
    return named < PIP_DENY[0] and float(chances.max()) > PIP_DENY[1]


class Recogniser:
    """Reads the top card of frames; ``deck`` (an enrolled deck) sharpens the reads."""

    def __init__(self, deck: EnrolledDeck | None = None, threshold: float = THRESHOLD,
                 agreed: float = AGREED, locator: Locator | None | bool = True) -> None:
        self.deck = deck
        self.threshold = threshold
        self.agreed = agreed
        self.locator = Locator() if locator is True else (locator or None)
        load_model()

    def read(self, frame: Array) -> Read:
        """The top card of a BGR frame, or an unclear read (``card`` None): where the
        locator sees the top card first (then its likeliest place given a card's shape,
        :func:`reshaped`), then the outlines found in the frame's edges."""
        first: Read | None = None
        sight: Sight | None = None
        if self.locator is not None:
            sight = self.locator.look(frame)
            for spot in sight.spots[:SPOT_TRIES]:
                got = self.read_quad(frame, spot.quad)
                if got.card is not None:
                    return got
                first = first or got
            if sight.spots:
                # the likeliest place, one side a few pixels off: given a card's shape
                for quad in reshaped(sight.spots[0].quad):
                    got = self.read_quad(frame, quad)
                    if got.card is not None and sight.on_top(quad) >= ON_TOP:
                        return got
        got = self.read_outlines(frame)
        if got.card is not None and sight is not None and got.quad is not None \
                and sight.on_top(got.quad) < ON_TOP:
            # the network takes that outline for a card beneath, or the table
            got = Read(None, got.confidence, got.quad, "beneath the top card", got.card)
        return got if got.card is not None or first is None else first

    def read_outlines(self, frame: Array) -> Read:
        """The top card by the outlines found in the frame's edges. The whole cards
        found are tried largest first (two cards that happen to line up can pass for one
        large card; such a quad reads unclear and the next is tried)."""
        first: Read | None = None
        finding = find(frame)
        blank: list[Array] = []  # quads in which no index, or one alone, was seen
        unsure: list[Array] = []  # quads read unclear, whatever the reason (UNSURE)
        beneath: Read | None = None  # a read of a quad a straight edge runs across
        doubts: list[Read] = []  # whole cards read unclear, with the card they named
        for quad in finding.quads[:3]:
            got = self.read_quad(frame, quad)
            if got.guess is not None:
                doubts.append(got)
            if got.card is not None:
                if not finding.crossed(quad):
                    return got
                # It lies beneath a card (or spans two): only when no other quad reads.
                beneath = beneath or got
                continue
            if got.reason in BLANK:
                blank.append(quad)
            if got.reason in UNSURE:
                unsure.append(quad)
            first = first or got
        if beneath is not None:
            return beneath
        for quad in finding.rectangles():
            got = self.read_quad(frame, quad)
            if got.guess is not None:
                doubts.append(got)
            if got.card is not None and not finding.crossed(quad):
                return got
            if got.reason in BLANK:
                blank.append(quad)
            if got.reason in UNSURE:
                unsure.append(quad)
            first = first or got
        # No whole card read: a card whose sides on a white card beneath are faint. Such a
        # quad may also be a card beneath one whose sides there are faint: not one that
        # another quad found lies on (a quad a straight edge runs across lies beneath a card
        # itself, or spans two: it tells nothing).
        corners = finding.from_corners()[:CORNER_TRIES]
        for quad in corners:
            got = _unless_disputed(self.read_quad(frame, quad), doubts)
            if got.card is not None:
                if not finding.covered(quad, corners + finding.quads[:3]):
                    return got
                got = Read(None, got.confidence, quad, "beneath another")
            if got.reason in BLANK:
                blank.append(quad)
            first = first or got
        # A quad without an index may be a court card's picture frame (its one "index" a
        # piece of the picture): the card around it.
        for quad in blank[:BLANK_TRIES]:
            wider = finding.around(quad)
            for card in ([wider] if wider is not None else []) + finding.enclosing(quad):
                got = _unless_disputed(self.read_quad(frame, card), doubts)
                if got.card is not None:
                    return got
        # A quad that ran on along a card beneath, past the top card's faint side.
        for quad in unsure[:UNSURE_TRIES]:
            for card in finding.shrunk(quad):
                got = _unless_disputed(self.read_quad(frame, card), doubts)
                if got.card is not None and not finding.covered(card, corners + finding.quads[:3]):
                    return got
        return first or Read(None, 0.0, None, "no card")

    def read_quad(self, frame: Array, quad: Array) -> Read:
        """The card inside one quad of the frame."""
        card_img = warp(frame, quad)
        corners = read_corners(card_img)
        for px in READ_WIDER:
            if all(c is not None for c in corners):
                break
            # The outline may have been found a few pixels inside the card, cutting an index:
            # read a little wider (the margins of the corners take off what lies beyond).
            wider = read_corners(warp(frame, grow_quad(quad, px)))
            corners = [c if c is not None else w for c, w in zip(corners, wider, strict=True)]
        seen = [c for c in corners if c is not None]
        if not seen:
            return Read(None, 0.0, quad, "no index")
        card: Card | None = None
        conf = 0.0
        agreed = len(seen) == 2 and seen[0][0] == seen[1][0]
        need = self.threshold
        if agreed:
            # Two corners read apart agree (their geometric mean: the corners of one deck err
            # alike, so they are not independent evidence).
            card, conf = seen[0][0], (seen[0][1] * seen[1][1]) ** 0.5
            need = min(self.threshold, self.agreed)
        elif len(seen) == 2:
            surer = max(seen, key=lambda s: s[1])
            card, conf = surer[0], 0.5 * surer[1] * (1 - min(s[1] for s in seen))
        elif len(seen) == 1:
            # One corner alone is too often a card beneath whose other corner is covered, and
            # the visible part of such a card can match its enrolled template well (2 of the
            # 3 wrong reads of 2 000 enrolled scenes): never a card.
            return Read(None, 0.85 * seen[0][1], quad, "one corner")
        # The cards the readings name, for the pips to settle an unclear read (below); where
        # both corners name one card, the surer one's chance (sorted: it is set last).
        support = dict(sorted(seen, key=lambda s: s[1]))
        if self.deck is not None and card is not None:
            t = self.deck.look(card_img)
            tcard, tconf = t.card, t.clear
            sides = {s[0]: s[1] for s in seen if alike(s[0], tcard)}
            if tconf >= 0.5:
                support[tcard] = max(support.get(tcard, 0.0), tconf)
            if card != tcard or tconf < 0.5:
                need = self.threshold  # an enrolled deck's template must confirm a lesser read
            if card == tcard:
                conf = 1 - (1 - conf) * (1 - tconf)
            elif len({s[0] for s in seen}) == 2 and len(sides) == 1 and t.clear_kind >= 0.5:
                # the corners differ and the deck's template sides with one of them
                card, conf = next(iter(sides)), t.clear_kind * max(sides.values())
            elif alike(card, tcard):
                pass  # a template a pixel off cannot tell the suits of one colour: the corners
            elif t.clear_kind >= 0.5 and conf < 0.99:
                # the template clearly names another card: unclear, unless the corners are all
                # but sure (a template that is not clear leaves the corners to decide)
                return self._pips_settle(card_img, support,
                                         Read(None, conf, quad, "template disagrees"))
        if card is None or conf < need:
            return self._pips_settle(card_img, support,
                                     Read(None, conf, quad, "unclear", card if agreed else None))
        if conf < PIP_CHECK:
            # Blur joins a club's lobes in a small index into a spade's outline, and makes a
            # 10 of an 8: pips that plainly show another card, or another suit, deny the read.
            found = find_pips(card_img)
            shown = None if found is None else pip_card(card_img, found)
            if shown is not None:
                denied = shown[0] != card
            else:
                denied = found is not None and pips_deny(card_img, card, found)
            if denied:
                unclear = Read(None, conf, quad, "pips disagree", card if agreed else None)
                return _settled(shown, support, unclear)
        return Read(card, conf, quad)

    @staticmethod
    def _pips_settle(card_img: Array, support: dict[Card, float], unclear: Read) -> Read:
        """``unclear``, or the card its pips settle it on (:func:`_settled`)."""
        if not any(2 <= c.rank <= 10 for c in support):
            return unclear  # only a number card's pips are read
        return _settled(pip_card(card_img), support, unclear)


def _settled(shown: tuple[Card, float] | None, support: dict[Card, float],
             unclear: Read) -> Read:
    """``unclear``, or the number card the pips plainly show (``shown``, :func:`pip_card`)
    where a corner or the enrolled deck's template named it too: two readings that cannot err
    alike (the pips are counted and their suit read apart from the index)."""
    if shown is None or shown[0] not in support:
        return unclear
    card, chance = shown
    return Read(card, 1 - (1 - chance) * (1 - support[card]), unclear.quad, "pips")


def _unless_disputed(got: Read, doubts: list[Read]) -> Read:
    """``got``, or an unclear read when a whole card found on the same place named another
    card, if not surely (an outline found from a corner may be a few pixels off, onto the
    card beneath)."""
    if got.card is None or got.quad is None:
        return got
    centre = got.quad.mean(axis=0)
    for d in doubts:
        if d.quad is not None and d.guess != got.card and cv2.pointPolygonTest(
                d.quad.reshape(-1, 1, 2), (float(centre[0]), float(centre[1])), False) > 0:
            return Read(None, got.confidence, got.quad, "outlines disagree", got.card)
    return got


def all_cards() -> list[Card]:
    """The 52 cards, in the order of the classifiers' tables."""
    return full_deck()
