"""Step 1 of a read: where the top card of the pile lies in a frame, by a small convolutional
network.

The network (trained by ``python3 -m training.locator``, shipped beside this file as
``locator.onnx`` and run by :mod:`hardware.camera.reader.network`) looks at the frame shrunk to
``IN_W`` pixels wide and gives, for each cell of half that size, the chance that the cell lies on
the top card: the card whose outline nothing covers, whatever lies beneath it, however faint its
edge on a white card or a white table. Each blob of that map is fitted as a card's outline: each
side the straight line through the run of the blob's outline that most agree (:func:`fit_sides`: a
blob running on onto a card beneath does not pull the side out; the camera may be tilted, so the
four sides are fitted apart). A card small in the frame is looked at again in a frame cut round it
and enlarged (:data:`ZOOM_BELOW`). Each side is then moved onto the card's edge in the full frame
(:func:`refine`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from hardware.camera.reader.network import Network, load
from hardware.camera.reader.warp import order_corners
from referee.errors import RefereeError

Array = npt.NDArray[Any]

LOCATOR_PATH = Path(__file__).with_name("locator.onnx")
#: The network's input for a 4:3 frame (any frame is shrunk to ``IN_W`` wide and a multiple
#: of 16 high); its map is half that size.
IN_W, IN_H = 160, 128
#: A blob of the map is a card where the chance passes this.
LEVEL = 0.5
#: Blobs smaller than this share of the map are not cards.
MIN_AREA = 0.004
#: A card whose outline's side from its first corner to its last is shorter than this (pixels
#: of the network's input) is looked at again in a part of the frame cut round it, shrunk less.
#: That side is the long or the short one, as OpenCV's least box round the blob orders its
#: corners; the long side, and the short, each read more wrong (docs/camera.md).
ZOOM_BELOW = 56.0
#: How far (share of the card's length, at least 4 pixels) a side is looked for either side of
#: the fitted outline's.
REACH = 0.04
#: How far a frame's edges are drawn out (share of its height, each way) for a second look
#: (:meth:`Locator.look`, ``pad``): a card filling 90 % of the frame's height then fills 60 %.
#: On real photographs of cards close to the camera, the network's map of the frame as it is
#: had holes where the card's plain paper lay, or took a court's frame or an ornate ace's pip
#: for the card; drawn out, the same frames gave one solid blob (docs/camera.md).
DRAWN_OUT = 0.25


class LocatorError(RefereeError, RuntimeError):
    """The shipped locator network is missing: a broken install (``python3 -m
    training.locator`` writes it)."""


@dataclass(frozen=True)
class Spot:
    """A place where the network sees the top card: its corners in the frame (clockwise from
    one end of a short side), the mean chance over its blob, and the mean chance inside its
    outline (an outline that takes in a card beneath, or the table, has less)."""

    quad: Array
    score: float
    on_top: float = 1.0


@dataclass(frozen=True)
class Sight:
    """What the locator made of a frame: its map (half the input's size) and the places the
    top card may lie, likeliest first."""

    chance: Array
    spots: list[Spot]


def _network(path: Path, fresh: int = 0) -> Network:
    if not path.exists():
        raise LocatorError(f"the locator network {path} is missing (train it with "
                           "python3 -m training.locator)")
    return load(path, fresh)


def input_size(w: int, h: int) -> tuple[int, int]:
    """The network's input size for a frame ``w`` x ``h``: ``IN_W`` wide, a multiple of 16
    high (a 4:3 frame: ``IN_W`` x ``IN_H``)."""
    return IN_W, max(16, round(IN_W * h / w / 16) * 16)


def step(w: int) -> int:
    """The whole factor by which :meth:`Locator.chances` first shrinks a picture ``w`` wide
    (by area), before the last small resize to the network's input."""
    return max(1, w // IN_W)


class Locator:
    """Finds the top card in BGR frames."""

    _loads = 0

    def __init__(self, path: Path = LOCATOR_PATH, *, fresh: bool = False) -> None:
        if fresh:  # a file rewritten in place (training): read it again
            Locator._loads += 1
        self.net = _network(path, Locator._loads if fresh else 0)

    def chances(self, image: Array) -> Array:
        """The chance of each cell (half the network's input) lying on the top card."""
        small = shrink(image)
        blob = (small.astype(np.float32) * (1 / 255.0) - 0.5).transpose(2, 0, 1)[None]
        logits = self.net.run(blob)[0][0, 0]
        return np.asarray(1.0 / (1.0 + np.exp(-logits)), np.float32)

    def look(self, frame: Array, most: int = 2, pad: float = 0.0) -> Sight:
        """The network's map of a frame and the places the top card may lie in it, each side
        on the card's edge. ``pad``: the network looks at the frame with its edges drawn out
        (their pixels repeated) by that share of its height each way, the places given in the
        frame's own pixels: a card filling most of a frame, close to the camera, then lies in
        it as in the piles the network learned from (:data:`DRAWN_OUT`)."""
        h, w = frame.shape[:2]
        p = int(round(pad * h))
        seen = whole(frame if p == 0 else cv2.copyMakeBorder(frame, p, p, p, p,
                                                             cv2.BORDER_REPLICATE))
        chance = self.chances(seen)
        spots = []
        for quad, score in blobs(chance, most):
            k = np.array([seen.shape[1] / chance.shape[1], seen.shape[0] / chance.shape[0]],
                         np.float32)
            full = (quad + 0.5) * k - 0.5 - p
            length = float(np.linalg.norm(full[0] - full[3]))
            top = inside(chance, quad)
            # small in the frame as it is, not in the look drawn out: the part cut round a
            # card of half the frame's height would be the whole frame again, undrawn
            if length * IN_W / w < ZOOM_BELOW:
                full, score, top = self._zoom(frame, full, score, top)
            spots.append(Spot(on_edges(frame, full), score, top))
        return Sight(chance, sorted(spots, key=lambda s: -s.score))

    def _zoom(self, frame: Array, quad: Array, score: float,
              top: float) -> tuple[Array, float, float]:
        """A small card looked at again: the part of the frame round it (:func:`zoom_part`),
        shrunk to the network's input."""
        centre = quad.mean(axis=0)
        part, x0, y0 = zoom_part(frame, quad)
        # at the part's own input size: cut to whole pixels, a 4:3 frame's part is often
        # 160x112, not 160x128 (its cards squashed by 7 %); read at 160x128, fold 1's
        # calibration scenes read worse (docs/camera.md, "What stands in the way")
        chance = self.chances(part)
        near = [(q, s) for q, s in blobs(chance, 2)]
        if not near:
            return quad, score, top
        k = np.array([part.shape[1] / chance.shape[1], part.shape[0] / chance.shape[0]],
                     np.float32)
        best = min(near, key=lambda qs: float(np.linalg.norm(
            ((qs[0] + 0.5) * k - 0.5).mean(axis=0) + (x0, y0) - centre)))
        return ((best[0] + 0.5) * k - 0.5 + np.array([x0, y0], np.float32), best[1],
                inside(chance, best[0]))


def shrink(image: Array, size: tuple[int, int] | None = None) -> Array:
    """``image`` at the network's input ``size`` (else :func:`input_size`): by area at a whole
    factor first (OpenCV's quick path), then the last small resize."""
    h, w = image.shape[:2]
    k = step(w)
    small = image if k == 1 else cv2.resize(image, (w // k, h // k),
                                            interpolation=cv2.INTER_AREA)
    return np.asarray(cv2.resize(small, size or input_size(w, h), interpolation=cv2.INTER_AREA
                                 if small.shape[1] > 2 * IN_W else cv2.INTER_LINEAR))


def zoom_part(frame: Array, quad: Array) -> tuple[Array, int, int]:
    """The part of ``frame`` a small card is looked at again in (:meth:`Locator._zoom`): 2.2
    times as high as ``quad``'s side from its first corner to its last, the frame's shape,
    round its centre and inside the frame; the part and its top left corner."""
    h, w = frame.shape[:2]
    centre = quad.mean(axis=0)
    length = float(np.linalg.norm(quad[0] - quad[3]))
    cw = min(w, max(2.2 * length * w / h, 2.2 * length))
    ch = cw * h / w
    x0 = int(np.clip(centre[0] - cw / 2, 0, w - cw))
    y0 = int(np.clip(centre[1] - ch / 2, 0, h - ch))
    return whole(frame[y0:y0 + int(ch), x0:x0 + int(cw)]), x0, y0


def on_edges(frame: Array, quad: Array) -> Array:
    """``quad`` (float32, 4 x 2) with each side moved onto the card's edge (:func:`refine`,
    reaching :data:`REACH` of its side from its first corner to its last, at least 4
    pixels), its corners in order (:func:`~hardware.camera.reader.warp.order_corners`)."""
    length = float(np.linalg.norm(quad[0] - quad[3]))
    return order_corners(refine(frame, quad, max(4.0, REACH * length)))


def grown(frame: Array, quad: Array, scale: float) -> Array:
    """``quad`` grown ``scale`` times about its centre and laid on the card's edges
    (:func:`on_edges`): where the network took a court's picture or an ace's large pip for
    the card, an outline grown from it may lie on the card's own edges."""
    q = quad.reshape(4, 2).astype(np.float32)
    centre = q.mean(axis=0)
    return on_edges(frame, centre + scale * (q - centre))


def overlap(a: Array, b: Array) -> float:
    """How much two convex outlines overlap: their common area over the area either covers
    (0: apart or degenerate, 1: the same)."""
    p, q = a.reshape(4, 2).astype(np.float32), b.reshape(4, 2).astype(np.float32)
    common, _ = cv2.intersectConvexConvex(p, q)
    either = float(cv2.contourArea(p)) + float(cv2.contourArea(q)) - float(common)
    return float(common) / either if either > 0 else 0.0


def whole(image: Array) -> Array:
    """``image`` without the last rows and columns (fewer than the step by which
    :meth:`Locator.chances` first shrinks it) that keep its size from being a whole number of
    steps: OpenCV shrinks by area at a whole step on its quick path (a 1280x960 frame's part,
    a frame drawn out: 0.5 against 1.2 ms, 1.5 against 8.7 ms on the bench machine)."""
    h, w = image.shape[:2]
    k = step(w)
    return image[:h - h % k, :w - w % k]


def inside(chance: Array, quad: Array) -> float:
    """The mean chance of a map inside a quad (pixels of the map)."""
    mask = np.zeros(chance.shape, np.uint8)
    cv2.fillConvexPoly(mask, np.round((quad.reshape(-1, 2) + 0.5) * 16 - 8).astype(np.int32),
                       1, cv2.LINE_8, 4)
    return float(chance[mask > 0].mean()) if mask.any() else 0.0


def blobs(chance: Array, most: int) -> list[tuple[Array, float]]:
    """The largest blobs of a map above :data:`LEVEL`, each fitted as a quad (pixels of the
    map), with its mean chance."""
    n, labels, stats, _ = cv2.connectedComponentsWithStats((chance > LEVEL).astype(np.uint8))
    out = []
    for i in (np.argsort(-stats[1:, cv2.CC_STAT_AREA])[:most] + 1).tolist():
        if stats[i, cv2.CC_STAT_AREA] < max(6, MIN_AREA * chance.size):
            break
        blob = (labels == i).astype(np.uint8)
        # the outline at twice the map's size: the sides' lines fit to half a cell
        big = cv2.resize(chance * blob, None, fx=2, fy=2, interpolation=cv2.INTER_LINEAR)
        contours, _ = cv2.findContours((big > LEVEL).astype(np.uint8), cv2.RETR_EXTERNAL,
                                       cv2.CHAIN_APPROX_NONE)
        if not contours:
            continue
        outline = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float32)
        quad = fit_sides(outline, cv2.boxPoints(cv2.minAreaRect(outline)))
        out.append(((quad + 0.5) / 2 - 0.5, float(chance[blob > 0].mean())))
    return out


def _meet(lines: list[tuple[Array, Array]]) -> Array | None:
    """The corners where each line (a point and a direction) meets the one before it, or
    None where two are parallel."""
    out = []
    for k in range(4):
        (a1, d1), (a2, d2) = lines[k - 1], lines[k]
        ax, ay, dx1, dy1 = float(a1[0]), float(a1[1]), float(d1[0]), float(d1[1])
        dx2, dy2 = float(d2[0]), float(d2[1])
        det = dx2 * dy1 - dx1 * dy2
        if abs(det) < 1e-6:
            return None
        bx, by = float(a2[0]) - ax, float(a2[1]) - ay
        s = (dx2 * by - dy2 * bx) / det
        out.append((ax + s * dx1, ay + s * dy1))
    return np.asarray(out, np.float32)


def _side_frames(q: Array) -> list[tuple[Array, Array, float]]:
    """Each side of a quad as its start, its unit direction and its length."""
    out = []
    for k in range(4):
        a, b = q[k], q[(k + 1) % 4]
        length = max(float(np.linalg.norm(b - a)), 1e-6)
        out.append((a, (b - a) / length, length))
    return out


def fit_sides(outline: Array, quad: Array, rounds: int = 3, near: float = 1.5) -> Array:
    """A quad fitted to the points of a blob's outline, starting from ``quad``: each point
    goes to the side it lies nearest, and each side becomes the straight line through the
    run of its points that most agree (within ``near``), so that a blob running on onto a
    card beneath does not pull the side out."""
    pts = outline.reshape(-1, 2).astype(np.float32)
    px, py = pts[:, 0][None].astype(np.float64), pts[:, 1][None].astype(np.float64)
    q = quad.reshape(4, 2).astype(np.float64)
    fitted: list[tuple[Array, tuple[Array, Array]] | None] = [None] * 4
    for _ in range(rounds):
        # the four sides at once (4 x points): numpy's cost here is per call, not per point
        e = q[[1, 2, 3, 0]] - q
        lengths = np.maximum(np.sqrt(e[:, 0] * e[:, 0] + e[:, 1] * e[:, 1]), 1e-6)
        ux, uy = e[:, :1] / lengths[:, None], e[:, 1:] / lengths[:, None]
        dx, dy = px - q[:, :1], py - q[:, 1:]
        along, offs = dx * ux + dy * uy, dy * ux - dx * uy
        nearest = np.argmin(np.where((along > -near) & (along < lengths[:, None] + near),
                                     np.abs(offs), np.inf), axis=0)
        lines: list[tuple[Array, Array]] = []
        for k in range(4):
            mine = nearest == k
            if np.count_nonzero(mine) >= 4:
                off = offs[k, mine]
                ranked = np.sort(off)
                rounded = np.round(ranked)  # sorted: its distinct values are the tries
                tries = rounded[np.concatenate(([True], rounded[1:] != rounded[:-1]))]
                agree = (np.searchsorted(ranked, tries + near, side="right")
                         - np.searchsorted(ranked, tries - near, side="left"))
                mine[mine] = np.abs(off - tries[int(agree.argmax())]) <= near
            if np.count_nonzero(mine) < 4:
                lines.append((q[k], e[k]))
                continue
            last = fitted[k]
            if last is not None and np.array_equal(last[0], mine):
                lines.append(last[1])  # the same points as the round before: the same line
                continue
            vx, vy, x0, y0 = cv2.fitLine(pts[mine], cv2.DIST_HUBER, 0, 0.01, 0.01).ravel()
            lines.append((np.array([x0, y0]), np.array([vx, vy])))
            fitted[k] = (mine, lines[-1])
        met = _meet(lines)
        if met is None:
            break
        moved = float(np.abs(met - q).max())
        q = met.astype(np.float64)
        if moved < 0.01:
            break
    return np.asarray(q, np.float32)


def _median(x: Array) -> float:
    """The median of a short 1-D array (``np.median``'s value, without its overhead)."""
    s = np.sort(x)
    n = len(s)
    return float(s[n // 2]) if n % 2 else float((s[n // 2 - 1] + s[n // 2]) / 2)


def _line_through(t: Array, d: Array) -> tuple[float, float]:
    """The least-squares line ``d = c0 + c1 * t`` (``t`` not all equal)."""
    tm, dm = float(t.mean()), float(d.mean())
    dt = t - tm
    c1 = float(dt @ (d - dm)) / float(dt @ dt)
    return dm - c1 * tm, c1


def refine(frame: Array, quad: Array, reach: float, points: int = 24) -> Array:
    """``quad`` with each side moved onto the card's edge: at points along the side, the
    steepest change in brightness across it within ``reach`` pixels (a card is lighter or
    darker than what lies around it); a straight line through them (those far from the others'
    median left out). A side with too little edge stays where it was."""
    q = quad.reshape(4, 2).astype(np.float64)
    centre = q.mean(axis=0)
    ts = np.linspace(0.12, 0.88, points)
    step = max(0.5, reach / 12)
    offsets = np.arange(-reach - step, reach + step * 1.01, step)
    lines: list[tuple[Array, Array]] = []
    for a, u, length in _side_frames(q):
        nrm = np.array([-u[1], u[0]])
        if float(np.dot(centre - a, nrm)) < 0:
            nrm = -nrm  # into the card
        pts = (a[None, None] + ts[:, None, None] * (u * length)[None, None]
               + offsets[None, :, None] * nrm[None, None]).reshape(-1, 2).astype(np.float32)
        sampled = cv2.remap(frame, pts[:, :1], pts[:, 1:], cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_REPLICATE).astype(np.float32)
        grey = sampled if sampled.ndim == 2 else sampled.reshape(-1, sampled.shape[-1]) @ (
            np.array([0.114, 0.587, 0.299], np.float32) if sampled.shape[-1] == 3
            else np.full(sampled.shape[-1], 1 / sampled.shape[-1], np.float32))
        vals = grey.reshape(points, len(offsets))
        rise = vals[:, 2:] - vals[:, :-2]
        # the card's paper is brighter than the table in most frames: the side's sign is
        # the one most points along it agree on
        sign = 1.0 if float(rise.max(axis=1).clip(min=0).sum()) >= float(
            (-rise.min(axis=1)).clip(min=0).sum()) else -1.0
        rise = rise * sign
        best = rise.argmax(axis=1)
        sure = rise.max(axis=1) > 8.0
        if sure.sum() < 0.4 * points:
            lines.append((a, u))
            continue
        tt, dd = ts[sure], offsets[1:-1][best[sure]]
        middle = _median(dd)
        keep = np.abs(dd - middle) <= max(1.5, 2 * step)
        if keep.sum() >= 5:
            c0, c1 = _line_through(tt[keep], dd[keep])
        else:
            c0, c1 = middle, 0.0
        start, end = a + c0 * nrm, a + u * length + (c0 + c1) * nrm
        lines.append((start, end - start))
    met = _meet(lines)
    if met is None or float(np.abs(met - q).max()) > 2.5 * reach:
        return quad.reshape(4, 2).astype(np.float32)
    return met
