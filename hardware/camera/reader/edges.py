"""A quad against the edges around it: the edges beside each side that stand out in the
gradient (:func:`far_edges`), a quad widened onto them (:func:`expand`, a court card's picture
frame onto its card) or moved in onto one (:func:`shrink`), which of two overlapping cards lies
on the other (:func:`on_top`), and a card's white margin inside its sides
(:func:`paper_margin`).
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from hardware.camera.reader.lines import ASPECT, depth, meet, sample, sides

Array = npt.NDArray[Any]

#: A far side is an edge along FAR_ALONG of its length (just beyond an arm's reach, where
#: it is expected: FAR_ALONG_NEAR; a card's edge on a white card may be lost to glare), of a
#: gradient of FAR_FLOOR at least, FAR_PEAK times as strong as the image a few pixels beside.
FAR_ALONG, FAR_ALONG_NEAR, FAR_FLOOR, FAR_PEAK = 0.6, 0.3, 8.0, 1.4
_FAR_CAP = 240.0  # gradient values above this count as this (a crossing edge does not dominate)


def far_edges(mag: Array, corner: Array, across: Array, along: Array, length: float,
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
        s, peak = far_edges(mag, a, n, u, length, EXPAND_MIN, EXPAND_MAX * short,
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
        s, peak = far_edges(mag, a, inward, u, length, SHRINK_MIN * across,
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
