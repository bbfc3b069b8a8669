"""Whole cards by their outlines: four straight sides that meet at right angles.

The top card of a pile is the one card whose four sides are all seen whole; the sides of the
cards beneath stop where the top card covers them. So every two pairs of parallel lines
(:mod:`hardware.camera.reader.lines`) that cross at right angles with a card's proportions make
a rectangle (:func:`rectangles`). A rectangle is kept when edges run along most of each of its
sides; the more of its outline is edge, the likelier it is the top card. This finds a card
lying on a white card (where the paper between them is one region) and a card whose index or
pips run into its edge. A card's rough corners are moved onto its sides' lines
(:func:`refine`), and a card whose far sides are faint is found from one corner
(:func:`corner_rectangles`).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import numpy.typing as npt

from hardware.camera.reader.edges import FAR_ALONG, FAR_ALONG_NEAR, FAR_PEAK, far_edges
from hardware.camera.reader.lines import (
    ARM_GAP,
    ARM_MIN,
    ARM_START,
    ASPECT,
    Line,
    angle_between,
    crossed,
    crossing,
    edge_samples,
    sample,
)

Array = npt.NDArray[Any]

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
        p = crossing(chosen[i - 1], chosen[i])
        if p is None:
            return None
        corners.append(p)
    return np.array(corners, np.float32)


#: Places tried for each far side.
FAR_TRIES = 4
#: The share of a far side's expected place that must be clipped white for it to be taken
#: without an edge.
FAR_CLIPPED = 0.6


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
    s, peak = far_edges(mag, corner, across, along, length, reach - 8.0, reach + 22.0,
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
    s, peak = far_edges(mag, corner, across, along, length, max(ARM_MIN * 0.75, 0.6 * reach),
                         1.45 * reach + 10.0, FAR_ALONG)
    ok = np.flatnonzero(peak >= FAR_PEAK)
    further = [(float(s[k]), float(peak[k]), 1) for k in ok[np.argsort(-peak[ok])]]
    return (near + [f for f in further if all(abs(f[0] - n[0]) > 2 for n in near)]
            )[:FAR_TRIES]


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
            if abs(angle_between(a, b) - 90) > SQUARE_DEG:
                continue
            p = crossing(a, b)
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
