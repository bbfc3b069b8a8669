"""The straight edges of a frame: OpenCV's line segment detector (on a half-size copy), its
collinear pieces joined into lines (:class:`Line`, the stretches along it where there is edge),
the geometry of quads that the finder's steps share, and whether a straight edge runs across a
quad (:func:`crossed`: such a quad lies beneath another card, or is none).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]

#: A card's long side over its short side, seen from above, with room for a tilted camera.
ASPECT = (1.25, 1.8)
#: Pieces closer than this (degrees, pixels) lie on one line.
JOIN_DEG, JOIN_PX = 2.5, 2.5
#: An L of two sides: each side's edge starts within ARM_START of their corner (a card's
#: corner is rounded), runs on with gaps of at most ARM_GAP, and is at least ARM_MIN long.
ARM_START, ARM_GAP, ARM_MIN = 20.0, 30.0, 40.0


@dataclass
class Line:
    """Collinear segments: a unit normal ``n``, offset ``rho`` (n·p = rho), direction ``u``,
    and the stretches along ``u`` where there is edge."""

    n: Array
    rho: float
    u: Array
    theta: float  # direction, in [0, pi)
    spans: list[tuple[float, float]] = field(default_factory=list)
    length: float = 0.0

    def __post_init__(self) -> None:
        self.nx, self.ny = float(self.n[0]), float(self.n[1])
        self.ux, self.uy = float(self.u[0]), float(self.u[1])

    def point(self, t: float) -> tuple[float, float]:
        """The point of the line at ``t`` along it."""
        return (self.nx * self.rho + self.ux * t, self.ny * self.rho + self.uy * t)

    def covered(self, t0: float, t1: float) -> float:
        """The share of [t0, t1] along the line that is edge."""
        if t1 < t0:
            t0, t1 = t1, t0
        if t1 - t0 < 1:
            return 0.0
        got = 0.0
        for a, b in self.spans:
            lo, hi = max(a, t0), min(b, t1)
            if hi > lo:
                got += hi - lo
        return got / (t1 - t0)


def _union(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    spans.sort()
    out: list[tuple[float, float]] = []
    for a, b in spans:
        if out and a <= out[-1][1] + 1.5:
            out[-1] = (out[-1][0], max(out[-1][1], b))
        else:
            out.append((a, b))
    return out


_LSD: Any = None


def segments(gray: Array) -> Array:
    """Straight edge segments of a grey frame, found at half size: rows x1, y1, x2, y2."""
    global _LSD
    if _LSD is None:
        _LSD = cv2.createLineSegmentDetector(cv2.LSD_REFINE_STD)
    half = cv2.resize(gray, (gray.shape[1] // 2, gray.shape[0] // 2),
                      interpolation=cv2.INTER_AREA)
    found = _LSD.detect(half)[0]
    if found is None:
        return np.zeros((0, 4), np.float32)
    return np.asarray(found.reshape(-1, 4) * 2.0, np.float32)


def lines(segs: Array, min_piece: float, most: int = 60) -> list[Line]:
    """The ``most`` longest segments of at least ``min_piece`` pixels joined into lines,
    longest first."""
    lengths = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    order = np.argsort(-lengths)[:most]
    order = order[lengths[order] >= min_piece]
    join = math.radians(JOIN_DEG)
    out: list[Line] = []
    # plain floats: a few dozen segments, where numpy's per-call cost would dominate
    for (x1, y1, x2, y2), length in zip(segs[order].tolist(), lengths[order].tolist(),
                                        strict=True):
        theta = math.atan2(y2 - y1, x2 - x1) % math.pi
        mx, my = (x1 + x2) / 2, (y1 + y2) / 2
        for line in out:
            d = abs(line.theta - theta)
            if min(d, math.pi - d) <= join and \
                    abs(line.nx * mx + line.ny * my - line.rho) <= JOIN_PX:
                break
        else:
            ux, uy = math.cos(theta), math.sin(theta)
            line = Line(np.array([-uy, ux]), -uy * mx + ux * my, np.array([ux, uy]), theta)
            out.append(line)
        ux, uy = line.ux, line.uy
        ta, tb = ux * x1 + uy * y1, ux * x2 + uy * y2
        line.spans.append((min(ta, tb), max(ta, tb)))
        line.length += length
    for line in out:
        line.spans = _union(line.spans)
    out.sort(key=lambda ln: -ln.length)
    return out


def crossing(a: Line, b: Line) -> Array | None:
    m = np.array([a.n, b.n])
    if abs(np.linalg.det(m)) < 1e-6:
        return None
    return np.asarray(np.linalg.solve(m, np.array([a.rho, b.rho])))


def angle_between(a: Line, b: Line) -> float:
    d = abs(a.theta - b.theta)
    return math.degrees(min(d, math.pi - d))


def meet(sides: list[tuple[Array, Array]]) -> Array | None:
    """The corners where four sides (a point and a direction each, in order round the quad)
    meet, or None when two neighbours are parallel."""
    out = []
    for i in range(4):
        (p1, d1), (p2, d2) = sides[i - 1], sides[i]
        m = np.array([d1, -d2]).T
        if abs(np.linalg.det(m)) < 1e-6:
            return None
        t = np.linalg.solve(m, p2 - p1)
        out.append(p1 + t[0] * d1)
    return np.array(out, np.float32)


def sides(quad: Array) -> list[tuple[Array, Array, Array]]:
    """Each side of ``quad``: its first corner, the way to the next, and the unit normal
    pointing into the quad."""
    q = quad.astype(np.float64)
    c = q.mean(axis=0)
    out = []
    for i in range(4):
        a = q[i]
        d = q[(i + 1) % 4] - a
        n = np.array([-d[1], d[0]]) / max(float(np.hypot(d[0], d[1])), 1e-6)
        out.append((a, d, n if n @ (c - a) >= 0 else -n))
    return out


def depth(pts: Array, quad: Array) -> Array:
    """How far each point lies inside ``quad`` (pixels to its nearest side; below 0 outside)."""
    out = np.full(len(pts), np.inf)
    for a, _, n in sides(quad):
        out = np.minimum(out, (pts - a) @ n)
    return out


def sample(img: Array, pts: Array) -> Array:
    """``img`` at the pixels nearest ``pts`` (the last axis x, y), clamped to the image."""
    h, w = img.shape[:2]
    xs = np.clip(np.rint(pts[..., 0]).astype(np.int64), 0, w - 1)
    ys = np.clip(np.rint(pts[..., 1]).astype(np.int64), 0, h - 1)
    return np.asarray(img[ys, xs])


#: A straight edge that runs CROSS_IN pixels inside a quad (deeper than CROSS_DEEP) and
#: CROSS_OUT pixels outside it, unbroken, is the side of a card lying on top of it.
CROSS_IN, CROSS_OUT, CROSS_DEEP = 30.0, 10.0, 6.0


def edge_samples(found: list[Line]) -> tuple[Array, Array]:
    """Points every 2 px along the unbroken straight edges long enough to cross a quad (gaps
    up to ARM_GAP bridged), and the number of the edge each lies on: for :func:`crossed`."""
    pts: list[Array] = []
    ids: list[Array] = []
    k = 0
    for line in found:
        if line.length < CROSS_IN:
            continue
        merged: list[tuple[float, float]] = []
        for a, b in line.spans:
            if merged and a - merged[-1][1] <= ARM_GAP:
                merged[-1] = (merged[-1][0], max(b, merged[-1][1]))
            else:
                merged.append((a, b))
        for a, b in merged:
            if b - a < CROSS_IN + CROSS_OUT:
                continue
            ts = np.arange(a, b, 2.0)
            pts.append((line.n * line.rho)[None, :] + ts[:, None] * line.u[None, :])
            ids.append(np.full(len(ts), k))
            k += 1
    if not pts:
        return np.zeros((0, 2)), np.zeros(0, np.int64)
    return np.concatenate(pts), np.concatenate(ids)


def crossed(quad: Array, found: list[Line] | tuple[Array, Array]) -> bool:
    """Whether a straight edge runs from well inside ``quad`` out across its outline: the
    quad is then a card beneath another (or no card), never the top one. ``found``: the
    lines, or their :func:`edge_samples`."""
    pts, ids = edge_samples(found) if isinstance(found, list) else found
    if not len(ids):
        return False
    inside = depth(pts, quad)
    deep = np.bincount(ids, inside > CROSS_DEEP)
    out = np.bincount(ids, inside < -3.0)
    return bool(((2.0 * deep >= CROSS_IN) & (2.0 * out >= CROSS_OUT)).any())
