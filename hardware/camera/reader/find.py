"""Step 1 of a read by the frame's edges: the whole cards of a frame (:func:`find`), largest
first, and what the recogniser needs to look further when none reads (:class:`Finding`): the
rectangles of straight lines, cards found from one corner, a picture frame widened onto its
card, a quad moved in off a card beneath, and which of two quads lies on the other.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from hardware.camera.reader.edges import expand, on_top, paper_margin, shrink, spread
from hardware.camera.reader.lines import Line, crossed, edge_samples, lines, segments
from hardware.camera.reader.rectangles import corner_rectangles, rectangles
from hardware.camera.reader.regions import ASPECT, grow_cards, hull_quad, rect_fit, support
from hardware.camera.reader.warp import order_corners

Array = npt.NDArray[Any]

_KERNEL = np.ones((3, 3), np.uint8)
#: Openings of the paper regions, tried in turn until a card is found.
_OPENINGS = tuple(cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (k, k)) for k in (1, 3, 9))
_CLOSE = cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (9, 9))  # at half size
#: Canny thresholds of the finder.
CANNY = (25, 75)
#: Lines at least this long (pixels) part the paper regions, across gaps up to WALL_GAP.
WALL_MIN, WALL_GAP = 20.0, 20.0
#: The least share of a whole card's outline that is edge; a card with SURE_SUPPORT is sure.
WHOLE_SUPPORT, SURE_SUPPORT = 0.75, 0.9
#: Grey levels (of the blurred frame) from which paper is clipped white: no edge shows there.
CLIPPED = 250
#: Two quads whose areas are this far apart (the larger over the smaller, the camera's tilt
#: allowing for some) may be two cards of one pile.
SAME_SIZE = (0.75, 1 / 0.75)
#: Rectangles of straight lines tried when no whole card read.
RECT_TRIES = 4
#: Cards tried inside each quad read unclear whose sides are moved in (:meth:`Finding.shrunk`).
SHRINK_TRIES = 2
#: A rectangle of straight lines around a quad without an index (a picture frame) may be its
#: card when its area is this many times the quad's; this many are tried.
ENCLOSING, ENCLOSING_TRIES = (1.3, 5.0), 2


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
        None (:func:`hardware.camera.reader.edges.expand`)."""
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
                q = order_corners(q) / self.scale
                if _new(q, out):
                    out.append(q.astype(np.float32))
            if len(out) >= ENCLOSING_TRIES:
                break
        return out

    def shrunk(self, quad: Array) -> list[Array]:
        """Cards inside ``quad`` with one side moved in onto an edge
        (:func:`hardware.camera.reader.edges.shrink`) and a white margin inside every side: where
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
        """The straight edges' points (:func:`hardware.camera.reader.lines.edge_samples`)."""
        return edge_samples(self.straight)

    def crossed(self, quad: Array) -> bool:
        """Whether a straight edge runs across the quad: it lies beneath a card, or spans
        two (:func:`hardware.camera.reader.lines.crossed`)."""
        return crossed(quad * self.scale, self.samples)

    @cached_property
    def spread(self) -> Array:
        """The gradient at its strongest within a pixel
        (:func:`hardware.camera.reader.edges.spread`)."""
        return spread(self.gradient)

    def on_top(self, a: Array, b: Array) -> bool:
        """Whether the card in quad ``a`` lies on the one in ``b``
        (:func:`hardware.camera.reader.edges.on_top`). The cards of a pile are of one size: a
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
        (:func:`hardware.camera.reader.rectangles.rectangles`), made once a frame."""
        h, w = self.blurred.shape[:2]
        return rectangles(self.straight, (w, h))

    def rectangles(self) -> list[Array]:
        """Card-shaped rectangles of straight lines not among :attr:`quads`, best first
        (:func:`hardware.camera.reader.rectangles.rectangles`): for a frame in which no whole card
        read, where one was found on edges (such as a court card's picture frame)."""
        out: list[Array] = []
        for _, q in self.lined[:RECT_TRIES + len(self.quads)]:
            q = order_corners(q) / self.scale
            if _new(q, out + self.quads):
                out.append(q.astype(np.float32))
        return out[:RECT_TRIES]

    def from_corners(self) -> list[Array]:
        """Cards found from a corner whose two sides stand out, the two across from it faint
        (:func:`hardware.camera.reader.rectangles.corner_rectangles`), likeliest first; for a frame
        in which no whole card read."""
        out: list[Array] = []
        clipped = self.blurred >= CLIPPED
        for _, q in corner_rectangles(self.straight, self.gradient, clipped=clipped):
            if not paper_margin(q, self.paper):
                continue  # a side runs through a picture, not along a card's white margin
            q = order_corners(q) / self.scale
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
        for a, q in grow_cards(free, canny, opening, straight):
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
        area, rect, aspect = rect_fit(pts)
        if rect >= 0.93 and ASPECT[0] <= aspect <= ASPECT[1] and area < 0.6 * w * h:
            quad = hull_quad(pts)
            if quad is not None:
                found.append((area, quad / scale, support(quad, near)))
    found.sort(key=lambda x: -x[0])
    finding = Finding([], straight, blurred, paper, scale)
    if not any(edge >= SURE_SUPPORT for _, _, edge in found):
        # No card with its whole outline on edges: the rectangles of the straight lines
        # (a card whose paper runs into a white card's beneath), after the others.
        found.extend((0.0, order_corners(q) / scale, score) for score, q in finding.lined[:2])
    for _, q, _ in found:
        if _new(q, finding.quads):
            finding.quads.append(q.astype(np.float32))
    return finding
