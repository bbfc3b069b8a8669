"""The recogniser: the top card of a pile in a camera frame, with a confidence.

1. Find the top card: the contour-and-warp idiom of OpenCV's ``samples/python/squares.py``.
   Edges (Canny) bound regions; a region whose outline is a convex quadrilateral of a card's
   proportions, filled to its corners, is a whole card. Cards beneath are offset and partly
   covered, so their outlines are not quadrilaterals; the largest whole card is the top one.
2. Warp it upright to 200x300 (portrait; the two ways up read the same, as a card's indices
   stand in opposite corners).
3. Read both corner indices: the ink of each corner is split into the rank (the topmost glyph,
   two glyphs side by side for a 10) and the suit below it; two small classifiers (numpy MLPs
   trained by :mod:`hardware.camera.train` and shipped as ``model.npz``) name them.
4. The card is named only when both corners agree (or one is very sure and the other
   unreadable); the confidence is the lower of the two readings. Below the threshold the read
   is *unclear* (``card`` None), never a guess.

A deck enrolled with ``referee camera enroll`` adds its 52 cards as templates: the warped card
is then matched against them too, which decides between close readings.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from referee.cards import Card, full_deck

Array = npt.NDArray[Any]

WARP_W, WARP_H = 200, 300
#: The corner window read for an index, as fractions of the card's width and height.
CORNER_W, CORNER_H = 0.21, 0.33
RANK_SIZE = (24, 32)
SUIT_SIZE = (24, 24)
RANK_CLASSES = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)
SUIT_CLASSES = "CDHS"
#: A read below this confidence is unclear.
THRESHOLD = 0.80
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


def find_cards(frame: Array) -> list[Array]:
    """The whole cards in a frame (ordered corners), largest first."""
    gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY) if frame.ndim == 3 else frame
    h, w = gray.shape
    scale = 1.0
    if w > 800:  # big photos: find the card on a smaller copy
        scale = 640.0 / w
        gray = cv2.resize(gray, (640, round(h * scale)), interpolation=cv2.INTER_AREA)
        h, w = gray.shape
    blur = cv2.GaussianBlur(gray, (5, 5), 0)
    found: list[tuple[float, Array]] = []
    for lo, hi, grow in ((20, 60, 1), (40, 120, 1), (20, 60, 2)):
        edges = cv2.dilate(cv2.Canny(blur, lo, hi), _KERNEL, iterations=grow)
        contours, _ = cv2.findContours(edges, cv2.RETR_LIST, cv2.CHAIN_APPROX_SIMPLE)
        for cnt in contours:
            area = cv2.contourArea(cnt)
            if not 0.01 * w * h < area < 0.7 * w * h:
                continue
            # The hull: an index or a picture touching the card's edge only notches it.
            hull = cv2.convexHull(cnt)
            harea = cv2.contourArea(hull)
            if area < 0.6 * harea:
                continue
            approx = cv2.approxPolyDP(hull, 0.02 * cv2.arcLength(hull, True), True)
            if len(approx) != 4:
                continue
            qarea = cv2.contourArea(approx)
            if qarea <= 0 or harea / qarea < 0.95:
                continue
            pts = _order(approx)
            sides = np.linalg.norm(np.roll(pts, -1, axis=0) - pts, axis=1)
            short = (sides[0] + sides[2]) / 2
            long = (sides[1] + sides[3]) / 2
            if not 0.5 < short / max(long, 1.0) < 0.85:
                continue
            if abs(sides[0] - sides[2]) > 0.2 * short or abs(sides[1] - sides[3]) > 0.2 * long:
                continue
            v = np.roll(pts, -1, axis=0) - pts
            cos = np.abs((v * np.roll(v, -1, axis=0)).sum(1)) / (
                np.linalg.norm(v, axis=1) * np.linalg.norm(np.roll(v, -1, axis=0), axis=1))
            if cos.max() > 0.25:
                continue
            # the outline of an edge band lies on its outer side or its inner side
            found.append((qarea, pts / scale))
    found.sort(key=lambda x: -x[0])
    unique: list[Array] = []
    for _, pts in found:
        if all(np.abs(pts - u).max() > 8 and np.abs(np.roll(pts, 2, axis=0) - u).max() > 8
               for u in unique):
            unique.append(pts)
    return unique


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


def corner_glyphs(card: Array) -> Glyphs | None:
    """The index of the card's top-left corner, or None when it cannot be split."""
    cw, ch = round(CORNER_W * WARP_W), round(CORNER_H * WARP_H)
    crop = card[:ch, :cw].astype(np.float32)
    gray = crop.min(axis=2)  # red ink is dark in green and blue
    paper = float(np.percentile(gray, 85))
    if paper < 40 or paper - float(gray.min()) < 50:
        return None
    m = 2
    gray[:m, :] = paper
    gray[:, :m] = paper
    g8 = np.clip(gray, 0, 255).astype(np.uint8)
    otsu, _ = cv2.threshold(g8, 0, 255, cv2.THRESH_BINARY + cv2.THRESH_OTSU)
    ink = (gray < min(float(otsu), paper - 35)).astype(np.uint8)
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
    hist = np.zeros((cy, cx, bins), np.float32)
    ys, xs = np.mgrid[0:cy * cell, 0:cx * cell]
    ci, cj = ys // cell, xs // cell
    m = mag[:cy * cell, :cx * cell]
    f = frac[:cy * cell, :cx * cell]
    b = b0[:cy * cell, :cx * cell]
    np.add.at(hist, (ci, cj, b), m * (1 - f))
    np.add.at(hist, (ci, cj, (b + 1) % bins), m * f)
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
    """A one-hidden-layer perceptron with a softmax output (weights from ``model.npz``)."""

    def __init__(self, mean: Array, std: Array, w1: Array, b1: Array, w2: Array,
                 b2: Array) -> None:
        self.mean, self.std, self.w1, self.b1, self.w2, self.b2 = mean, std, w1, b1, w2, b2

    def probabilities(self, x: Array) -> Array:
        """Class probabilities of each row of ``x``."""
        z = (x - self.mean) / self.std
        h = np.maximum(z @ self.w1 + self.b1, 0)
        o = h @ self.w2 + self.b2
        o = o - o.max(axis=-1, keepdims=True)
        e = np.exp(o)
        return np.asarray(e / e.sum(axis=-1, keepdims=True))


@lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> tuple[Mlp, Mlp]:
    """The rank and suit classifiers that ship with the package."""
    if not path.exists():
        raise RecogniserError(f"the recogniser's model {path} is missing; make it with "
                              "python3 -m hardware.camera.train")
    with np.load(path) as z:
        nets = tuple(Mlp(*(z[f"{name}_{k}"] for k in ("mean", "std", "w1", "b1", "w2", "b2")))
                     for name in ("rank", "suit"))
    return nets[0], nets[1]


# -- enrolled decks -------------------------------------------------------------------------
TEMPLATE = (40, 60)


def template_vector(card: Array) -> Array:
    """A warped card as a zero-mean unit vector (grey, small), for matching."""
    g = cv2.cvtColor(card, cv2.COLOR_BGR2GRAY)
    small = cv2.resize(g, TEMPLATE, interpolation=cv2.INTER_AREA).astype(np.float32)
    cw, ch = round(CORNER_W * WARP_W), round(CORNER_H * WARP_H)
    corner = np.asarray(g[:ch, :cw], np.float32)
    v = np.concatenate([small.ravel(), 2.0 * corner.ravel()])
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
                                vectors=self.vectors)

    @classmethod
    def load(cls, path: str | Path) -> EnrolledDeck:
        """Read a deck file; a file that is not one raises ValueError or OSError."""
        try:
            with np.load(path, allow_pickle=False) as z:
                cards = tuple(Card.parse(str(c)) for c in z["cards"])
                vectors = np.asarray(z["vectors"], np.float32)
        except (KeyError, EOFError) as exc:
            raise ValueError(f"{path} is not a camera deck file ({exc})") from None
        except ValueError as exc:
            raise ValueError(f"{path} is not a camera deck file ({exc})") from None
        if len(cards) != vectors.shape[0]:
            raise ValueError(f"{path} is not a camera deck file (sizes differ)")
        return cls(cards, vectors)

    def match(self, card: Array) -> tuple[Card, float, float]:
        """Best card, its score and the runner-up's score (both orientations tried)."""
        a = template_vector(card)
        b = template_vector(np.ascontiguousarray(card[::-1, ::-1]))
        scores = np.maximum(self.vectors @ a, self.vectors @ b)
        order = np.argsort(-scores)
        return self.cards[int(order[0])], float(scores[order[0]]), float(scores[order[1]])


# -- the whole read -------------------------------------------------------------------------
def read_corners(card: Array) -> list[tuple[Card, float] | None]:
    """Each corner's reading of a warped card: (card, confidence) or None."""
    rank_net, suit_net = load_model()
    glyphs = [corner_glyphs(card), corner_glyphs(np.ascontiguousarray(card[::-1, ::-1]))]
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


class Recogniser:
    """Reads the top card of frames; ``deck`` (an enrolled deck) sharpens the reads."""

    def __init__(self, deck: EnrolledDeck | None = None, threshold: float = THRESHOLD) -> None:
        self.deck = deck
        self.threshold = threshold
        load_model()

    def read(self, frame: Array) -> Read:
        """The top card of a BGR frame, or an unclear read (``card`` None)."""
        quads = find_cards(frame)
        if not quads:
            return Read(None, 0.0, None, "no card")
        quad = quads[0]
        card_img = warp(frame, quad)
        corners = read_corners(card_img)
        seen = [c for c in corners if c is not None]
        card: Card | None = None
        conf = 0.0
        if len(seen) == 2 and seen[0][0] == seen[1][0]:
            card, conf = seen[0][0], min(seen[0][1], seen[1][1]) ** 0.5 * (
                max(seen[0][1], seen[1][1]) ** 0.5)
        elif len(seen) == 2:
            surer = max(seen, key=lambda s: s[1])
            card, conf = surer[0], 0.5 * surer[1] * (1 - min(s[1] for s in seen))
        elif len(seen) == 1:
            card, conf = seen[0][0], 0.85 * seen[0][1]
        if self.deck is not None:
            tcard, best, second = self.deck.match(card_img)
            tconf = float(np.clip((best - second) / 0.08, 0, 1)) * float(best > 0.6)
            if card == tcard:
                conf = max(conf, tconf, 1 - (1 - conf) * (1 - tconf))
            elif tconf > 0.5 and conf < 0.99:
                card, conf = tcard, tconf * (1 - conf)
            else:
                conf = min(conf, 1 - tconf)
        if card is None or conf < self.threshold:
            return Read(None, conf, quad, "unclear")
        return Read(card, conf, quad)


def all_cards() -> list[Card]:
    """The 52 cards, in the order of the classifiers' tables."""
    return full_deck()
