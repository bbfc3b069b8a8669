"""Step 3 of a read: a warped card's corner indices. The ink of each corner is split into the
rank (the topmost glyph, two glyphs side by side for a 10) and the suit below it
(:func:`corner_glyphs`); their features (:func:`rank_features`, :func:`suit_features`) go to
the two classifiers (:mod:`hardware.camera.reader.classify`), which name them
(:func:`read_corners`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from hardware.camera.reader.classify import RANK_CLASSES, SUIT_CLASSES, load_model
from hardware.camera.reader.warp import WARP_H, WARP_W
from referee.cards import Card

Array = npt.NDArray[Any]

#: The corner window read for an index, as fractions of the card's width and height.
CORNER_W, CORNER_H = 0.21, 0.33
RANK_SIZE = (24, 32)
SUIT_SIZE = (24, 24)


@dataclass(frozen=True)
class Glyphs:
    """A corner's rank and suit ink, normalised, and the suit's redness."""

    rank: Array
    suit: Array
    red: float
    rank_aspect: float
    suit_aspect: float


def fit_glyph(mask: Array, size: tuple[int, int]) -> Array:
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
    return Glyphs(fit_glyph(rank_mask, RANK_SIZE), fit_glyph(suit_mask, SUIT_SIZE), red,
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
