"""Whole cards by their outlines: four straight sides that meet at right angles.

The top card of a pile is the one card whose four sides are all seen whole; the sides of the
cards beneath stop where the top card covers them. So straight edges are found (OpenCV's line
segment detector, on a half-size copy), collinear pieces are joined into lines, and every
two pairs of parallel lines that cross at right angles with a card's proportions make a
rectangle. A rectangle is kept when edges run along most of each of its sides; the more of its
outline is edge, the likelier it is the top card. This finds a card lying on a white card
(where the paper between them is one region) and a card whose index or pips run into its edge.
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
#: Two lines this close to square may be the two sides of a card's corner (degrees).
SQUARE_DEG = 7.0
#: Four lines may be a whole card's sides when its opposite sides are this close to parallel
#: and its neighbours this close to square (degrees): the camera's tilt turns them a little.
RECT_PARALLEL_DEG, RECT_SQUARE_DEG = 10.0, 10.0
#: The share of a side that must be edge, at the least for every side and on average.
SIDE_MIN, MEAN_MIN = 0.3, 0.7
#: A rectangle's weakest side may be edge along only SIDE_WEAK of it when the three others
#: are edge along SIDE_SURE (a card's side on a white card as bright as it).
SIDE_WEAK, SIDE_SURE = 0.15, 0.9
#: A card's rounded corners: this share of each end of a side is not counted.
CORNER_SHARE = 0.07


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


def _cross(a: Line, b: Line) -> Array | None:
    m = np.array([a.n, b.n])
    if abs(np.linalg.det(m)) < 1e-6:
        return None
    return np.asarray(np.linalg.solve(m, np.array([a.rho, b.rho])))


def _angle(a: Line, b: Line) -> float:
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


def rectangles(found: list[Line], size: tuple[int, int], max_lines: int = 40
               ) -> list[tuple[float, Array]]:
    """Card-shaped rectangles whose sides are mostly edge: (score, corners), best first.
    The score is the share of the outline that is edge."""
    w, h = size
    ls = found[:max_lines]
    short = (0.08 * min(w, h), 0.8 * min(w, h))
    if len(ls) < 4:
        return []
    th = np.array([ln.theta for ln in ls])
    nrm = np.array([ln.n for ln in ls])
    rho = np.array([ln.rho for ln in ls])
    # how far apart each two lines' directions are, in degrees
    dd = np.abs(th[:, None] - th[None, :])
    apart = np.degrees(np.minimum(dd, np.pi - dd))
    ii, jj = np.triu_indices(len(ls), 1)
    keep = apart[ii, jj] <= RECT_PARALLEL_DEG
    pa, pb = ii[keep], jj[keep]  # the pairs of nearly parallel lines
    p, q = np.triu_indices(len(pa), 1)
    a, b, c, e = pa[p], pb[p], pa[q], pb[q]
    ok = (a != c) & (a != e) & (b != c) & (b != e) & \
        (np.abs(apart[a, c] - 90) <= RECT_SQUARE_DEG)
    a, b, c, e = a[ok], b[ok], c[ok], e[ok]
    # the corners: where a meets c, c meets b, b meets e and e meets a
    quads = np.stack([_crossings(nrm, rho, x, y) for x, y in ((a, c), (c, b), (b, e), (e, a))],
                     axis=1)
    with np.errstate(invalid="ignore"):
        n = np.linalg.norm(quads - np.roll(quads, -1, axis=1), axis=2)
        # The sides' lengths, not the lines' offsets: with the camera tilted, a card's
        # opposite sides are a few degrees from parallel.
        d1, d2 = (n[:, 0] + n[:, 2]) / 2, (n[:, 1] + n[:, 3]) / 2
        lo, hi = np.minimum(d1, d2), np.maximum(d1, d2)
        ok = (lo >= short[0]) & (hi <= short[1] * ASPECT[1]) & \
            (hi >= ASPECT[0] * lo) & (hi <= ASPECT[1] * lo)
    out: list[tuple[float, Array]] = []
    for k in np.flatnonzero(ok).tolist():
        quad = quads[k].astype(np.float32)
        sides = ((ls[a[k]], quad[3], quad[0]), (ls[c[k]], quad[0], quad[1]),
                 (ls[b[k]], quad[1], quad[2]), (ls[e[k]], quad[2], quad[3]))
        shares = []
        for line, p0, p1 in sides:
            t0, t1 = float(line.u @ p0), float(line.u @ p1)
            cut = CORNER_SHARE * abs(t1 - t0)
            shares.append(line.covered(min(t0, t1) + cut, max(t0, t1) - cut))
            if shares[-1] < SIDE_WEAK:
                break
        else:
            weak = sorted(shares)
            if weak[0] < SIDE_MIN and weak[1] < SIDE_SURE:
                continue  # one side this faint only with the three others all edge
            lengths = [float(np.linalg.norm(s[2] - s[1])) for s in sides]
            score = sum(s * ln for s, ln in zip(shares, lengths, strict=True)) / sum(lengths)
            if score >= MEAN_MIN:
                out.append((score, quad))
    out.sort(key=lambda x: -x[0])
    return out


def _crossings(nrm: Array, rho: Array, x: Array, y: Array) -> Array:
    """Where lines ``x[k]`` and ``y[k]`` cross (NaN where they are parallel)."""
    n1, n2, r1, r2 = nrm[x], nrm[y], rho[x], rho[y]
    det = n1[:, 0] * n2[:, 1] - n1[:, 1] * n2[:, 0]
    det = np.where(np.abs(det) < 1e-6, np.nan, det)
    return np.stack([(r1 * n2[:, 1] - r2 * n1[:, 1]) / det,
                     (n1[:, 0] * r2 - n2[:, 0] * r1) / det], axis=1)


#: A side's line may lie this far inside or outside the rough side (pixels), and turn this
#: much (degrees), and must run along this share of it.
REFINE_IN, REFINE_OUT, REFINE_DEG, REFINE_COVER = 6.0, 25.0, 8.0, 0.3


def refine(quad: Array, found: list[Line]) -> Array | None:
    """The rough corners of a card (its paper regions' hull, which stops short of the edge and
    may take in a sliver of a card beneath) moved onto its four sides' lines: for each side,
    the line most of whose length runs along it, near it and outside it. None if a side has
    no such line."""
    if not found:
        return None
    th = np.array([ln.theta for ln in found])
    nn = np.array([ln.n for ln in found])
    rho = np.array([ln.rho for ln in found])
    q = quad.astype(np.float64)
    c = q.mean(axis=0)
    chosen: list[Line] = []
    for i in range(4):
        a, b = q[i], q[(i + 1) % 4]
        d = b - a
        length = math.hypot(d[0], d[1])
        if length < 4:
            return None
        theta = math.atan2(d[1], d[0]) % math.pi
        nrm = np.array([d[1], -d[0]]) / length
        mid = (a + b) / 2
        if nrm @ (mid - c) < 0:
            nrm = -nrm
        dt = np.abs(th - theta)
        denom = nn @ nrm
        with np.errstate(divide="ignore", invalid="ignore"):
            # how far each line lies out from the side's middle, along the outward normal
            out = (rho - nn @ mid) / denom
        ok = (np.degrees(np.minimum(dt, math.pi - dt)) <= REFINE_DEG) & (np.abs(denom) >= 0.5) \
            & (out >= -REFINE_IN) & (out <= REFINE_OUT)
        best: tuple[float, Line] | None = None
        for k in np.flatnonzero(ok).tolist():
            line = found[k]
            t0, t1 = float(line.u @ a), float(line.u @ b)
            share = line.covered(min(t0, t1), max(t0, t1))
            if share < REFINE_COVER:
                continue
            key = share - 0.01 * abs(float(out[k]))
            if best is None or key > best[0]:
                best = (key, line)
        if best is None:
            return None
        chosen.append(best[1])
    corners = []
    for i in range(4):
        p = _cross(chosen[i - 1], chosen[i])
        if p is None:
            return None
        corners.append(p)
    return np.array(corners, np.float32)


#: An L of two sides: each side's edge starts within ARM_START of their corner (a card's
#: corner is rounded), runs on with gaps of at most ARM_GAP, and is at least ARM_MIN long.
ARM_START, ARM_GAP, ARM_MIN = 20.0, 30.0, 40.0
#: A far side is an edge along FAR_ALONG of its length (just beyond an arm's reach, where
#: it is expected: FAR_ALONG_NEAR; a card's edge on a white card may be lost to glare), of a
#: gradient of FAR_FLOOR at least, FAR_PEAK times as strong as the image a few pixels beside.
FAR_ALONG, FAR_ALONG_NEAR, FAR_FLOOR, FAR_PEAK = 0.6, 0.3, 8.0, 1.4
#: Places tried for each far side.
FAR_TRIES = 4
#: The share of a far side's expected place that must be clipped white for it to be taken
#: without an edge.
FAR_CLIPPED = 0.6
_FAR_CAP = 240.0  # gradient values above this count as this (a crossing edge does not dominate)


def _arms(line: Line, t: float) -> list[tuple[float, float]]:
    """The edges of ``line`` that start at ``t`` along it: (sign of the way, length)."""
    out = []
    for sign in (1.0, -1.0):
        spans = line.spans if sign > 0 else [(-b, -a) for a, b in reversed(line.spans)]
        tt = sign * t
        end: float | None = None
        for a, b in spans:
            if b <= tt:
                continue
            if end is None:
                if a > tt + ARM_START:
                    break
                end = b
            elif a - end > ARM_GAP:
                break
            else:
                end = max(end, b)
        if end is not None and end - tt >= ARM_MIN:
            out.append((sign, end - tt))
    return out


def _far_side(mag: Array, corner: Array, across: Array, along: Array, reach: float,
              length: float, clipped: Array | None = None) -> list[tuple[float, float, int]]:
    """Where the side parallel to ``along`` across from ``corner`` may lie just beyond the
    reach of the arm along ``across`` (the arm ran the whole side): edges of the gradient
    magnitude ``mag``, as (distance, how much it stands out of the image beside it, 0),
    nearest the reach first (a card beneath may have a stronger edge a little further), two
    at most. Where glare has clipped the paper there to white (``clipped``) and no edge is
    seen, the side is taken to end where the arm does."""
    s, peak = _far_edges(mag, corner, across, along, length, reach - 8.0, reach + 22.0,
                         FAR_ALONG_NEAR)
    ok = np.flatnonzero(peak >= FAR_PEAK)
    near = [(float(s[k]), float(peak[k]), 0)
            for k in ok[np.argsort(np.abs(s[ok] - reach - 4.0))]]
    if not near and clipped is not None:
        ts = np.linspace(0.1, 0.9, 24) * length
        pts = corner[None, :] + (reach + 4.0) * across[None, :] + ts[:, None] * along[None, :]
        if float(sample(clipped, pts).mean()) >= FAR_CLIPPED:
            near = [(reach + 4.0, FAR_PEAK, 0)]
    return near[:2]


def _further(mag: Array, corner: Array, across: Array, along: Array, reach: float,
             length: float, near: list[tuple[float, float, int]]
             ) -> list[tuple[float, float, int]]:
    """``near`` (from :func:`_far_side`) and then the strongest edges from 0.6 of the reach
    to well beyond it (the arm stopped short, or ran on along a card beneath), rank 1."""
    s, peak = _far_edges(mag, corner, across, along, length, max(ARM_MIN * 0.75, 0.6 * reach),
                         1.45 * reach + 10.0, FAR_ALONG)
    ok = np.flatnonzero(peak >= FAR_PEAK)
    further = [(float(s[k]), float(peak[k]), 1) for k in ok[np.argsort(-peak[ok])]]
    return (near + [f for f in further if all(abs(f[0] - n[0]) > 2 for n in near)]
            )[:FAR_TRIES]


def _far_edges(mag: Array, corner: Array, across: Array, along: Array, length: float,
               lo: float, hi: float, share: float) -> tuple[Array, Array]:
    """The offsets from ``lo`` to ``hi`` where a line parallel to ``along`` is a local maximum
    of the gradient that ``share`` of its points reach, and how much each stands out of the
    image 5 px either side."""
    offs = np.arange(lo - 7, hi + 8, 1.0)
    ts = np.linspace(0.1, 0.9, 32) * length
    pts = corner[None, None, :] + offs[:, None, None] * across[None, None, :] \
        + ts[None, :, None] * along[None, None, :]
    v = np.minimum(sample(mag, pts), _FAR_CAP)
    v = np.maximum(np.maximum(v[:-2], v[1:-1]), v[2:])  # within a pixel of the line
    k = min(len(ts) - 1, round((1.0 - share) * len(ts)))
    prof = np.partition(v, k, axis=1)[:, k]  # at offs[1:-1]
    mid = prof[6:-6]
    beside = np.maximum(np.maximum(prof[1:-11], prof[11:-1]), FAR_FLOOR / 2)
    top = (mid >= prof[5:-7]) & (mid >= prof[7:-5]) & (mid >= FAR_FLOOR)
    return offs[1:-1][6:-6][top], (mid / beside)[top]


def _far_pairs(fa: list[tuple[float, float, int]], fb: list[tuple[float, float, int]]
               ) -> list[tuple[int, float, float, float]]:
    """The places of the two far sides that make a card's proportions: (rank, da, db, the
    weaker's standing out)."""
    return [(ta + tb, da, db, min(pa, pb)) for da, pa, ta in fa for db, pb, tb in fb
            if ASPECT[0] <= max(da, db) / max(min(da, db), 1.0) <= ASPECT[1]]


def corner_rectangles(found: list[Line], mag: Array, max_lines: int = 30,
                      clipped: Array | None = None) -> list[tuple[float, Array]]:
    """Cards found from one corner: two sides at right angles whose edges start at their
    crossing (the sides of the top card that stand out, such as those along the table), and
    the two sides across from them found as the edges, faint or not (a card on a white card),
    at about the arms' reach. (score, corners), likeliest first: the far sides nearest the
    arms' reach, then those that stand out most; the score is how much the weaker far side
    stands out."""
    h, w = mag.shape
    ls = [ln for ln in found[:max_lines] if ln.length >= ARM_MIN]
    samples = edge_samples(found)
    ranked: list[tuple[int, float, Array]] = []
    for i in range(len(ls)):
        for j in range(i + 1, len(ls)):
            a, b = ls[i], ls[j]
            if abs(_angle(a, b) - 90) > SQUARE_DEG:
                continue
            p = _cross(a, b)
            if p is None or not (0 <= p[0] < w and 0 <= p[1] < h):
                continue
            for sa, la in _arms(a, float(a.u @ p)):
                for sb, lb in _arms(b, float(b.u @ p)):
                    ea, eb = sa * a.u, sb * b.u
                    # both far sides just beyond the arms first: the likeliest, and cheap
                    na = _far_side(mag, p, ea, eb, la, lb, clipped)
                    nb = _far_side(mag, p, eb, ea, lb, la, clipped)
                    pairs = _far_pairs(na, nb)
                    if not pairs:
                        pairs = _far_pairs(_further(mag, p, ea, eb, la, lb, na),
                                           _further(mag, p, eb, ea, lb, la, nb))
                    if not pairs:
                        continue
                    rank, da, db, score = min(pairs, key=lambda x: (x[0], -x[3]))
                    quad = np.array([p, p + da * ea, p + da * ea + db * eb, p + db * eb],
                                    np.float32)
                    if not crossed(quad, samples):
                        ranked.append((rank, score, quad))
    ranked.sort(key=lambda x: (x[0], -x[1]))
    return [(score, quad) for _, score, quad in ranked]


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


#: A quad inside a card (a court card's picture frame) is widened onto the card's outline:
#: the nearest edge outside each side, EXPAND_MIN pixels out at the least and EXPAND_MAX of
#: the short side at the most, along half the side.
EXPAND_MIN, EXPAND_MAX, EXPAND_ALONG = 4.0, 0.3, 0.5


def expand(quad: Array, mag: Array) -> Array | None:
    """The card around ``quad`` (ordered corners), or None: each side moved out onto the
    nearest edge beyond it that stands out; a side with none (on a white card beneath) as far
    as the side across from it (a picture frame is centred on its card)."""
    q = quad.astype(np.float64)
    short = min(float(np.linalg.norm(q[1] - q[0])), float(np.linalg.norm(q[2] - q[1])))
    moved = []
    for a, d, inward in sides(q):
        length = float(np.hypot(d[0], d[1]))
        if length < 4:
            return None
        u, n = d / length, -inward
        s, peak = _far_edges(mag, a, n, u, length, EXPAND_MIN, EXPAND_MAX * short,
                             EXPAND_ALONG)
        ok = np.flatnonzero(peak >= FAR_PEAK)
        moved.append((a, n, u, float(s[ok].min()) if len(ok) else None))
    out = []
    for i, (a, n, u, off) in enumerate(moved):
        if off is None:
            off = moved[(i + 2) % 4][3]
            if off is None:
                return None
        out.append((a + off * n, u))
    return meet(out)


#: A quad's side may be moved in onto an edge from SHRINK_MIN to SHRINK_MAX of the quad's
#: extent across it, where the edge runs along SHRINK_ALONG of the side.
SHRINK_MIN, SHRINK_MAX, SHRINK_ALONG = 0.06, 0.35, 0.6


def shrink(quad: Array, mag: Array) -> list[Array]:
    """Quads of a card's proportions made from ``quad`` (ordered corners) by moving one side
    in onto an edge parallel to it that stands out in the gradient ``mag``: a quad that ran
    on along a card beneath, past the top card's faint side. Nearest first."""
    q = quad.astype(np.float64)
    out: list[tuple[float, Array]] = []
    ss = sides(q)
    for i, (a, d, inward) in enumerate(ss):
        length = float(np.hypot(d[0], d[1]))
        across = abs(float((ss[(i + 2) % 4][0] - a) @ inward))
        if length < 4 or across < 4:
            continue
        u = d / length
        s, peak = _far_edges(mag, a, inward, u, length, SHRINK_MIN * across,
                             SHRINK_MAX * across, SHRINK_ALONG)
        for off in s[peak >= FAR_PEAK]:
            rest = across - float(off)
            if not ASPECT[0] <= max(rest, length) / max(min(rest, length), 1.0) <= ASPECT[1]:
                continue
            moved = [(b, dd) for b, dd, _ in ss]
            moved[i] = (a + float(off) * inward, d)
            got = meet(moved)
            if got is not None:
                out.append((float(off), got))
    out.sort(key=lambda x: x[0])
    return [g for _, g in out]


def _outline_points(quad: Array, per_side: int = 40) -> Array:
    """Points along a quad's sides, less their ends (a card's rounded corners)."""
    ts = np.linspace(0.08, 0.92, per_side)
    q = quad.astype(np.float64)
    return np.concatenate([q[i][None, :] + ts[:, None] * (q[(i + 1) % 4] - q[i])[None, :]
                           for i in range(4)])


#: The least share of a quad's outline that must run inside another (and outside it) for the
#: two to overlap as two cards do, one lying on the other.
OVERLAP = (0.08, 0.92)


def spread(mag: Array) -> Array:
    """The gradient magnitude at its strongest within a pixel: what :func:`on_top` reads."""
    return np.asarray(cv2.dilate(mag, np.ones((3, 3), np.uint8)))


def on_top(a: Array, b: Array, near: Array) -> bool:
    """Whether the card ``a`` lies on the card ``b`` where they overlap: the outline of the
    card on top runs on, an edge however faint, across the other, while the outline of the
    card beneath is hidden under it (``near``: the :func:`spread` gradient). False when they
    do not overlap so (apart, or one inside the other, as a court card's picture frame is)."""
    pa, pb = _outline_points(a), _outline_points(b)
    ia, ib = depth(pa, b) > 4.0, depth(pb, a) > 4.0
    if not (OVERLAP[0] <= ia.mean() <= OVERLAP[1] and OVERLAP[0] <= ib.mean() <= OVERLAP[1]):
        return False
    return float(np.median(sample(near, pa[ia]))) \
        > 1.5 * float(np.median(sample(near, pb[ib]))) + 2.0


#: Every card has a white margin inside its edge: along each side, this share of the points
#: MARGIN_IN pixels inside the outline must be paper.
MARGIN_PAPER, MARGIN_IN = 0.5, 4.0


def paper_margin(quad: Array, paper: Array) -> bool:
    """Whether paper runs along the inside of every side of ``quad`` (a card's white
    margin), not a picture or the table (a quad whose side runs through a card's picture)."""
    ts = np.linspace(0.1, 0.9, 24)
    for a, d, n in sides(quad):
        pts = a[None, :] + ts[:, None] * d[None, :] + MARGIN_IN * n[None, :]
        if float((sample(paper, pts) > 0).mean()) < MARGIN_PAPER:
            return False
    return True
