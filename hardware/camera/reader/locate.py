"""The locator: where the top card of the pile lies in a frame, by a small convolutional network.

The network (trained by ``python3 -m training.locator``, shipped beside this file as
``locator.onnx`` and run by OpenCV's ``dnn`` module) looks at the frame at a quarter of its size
and gives, for each cell of an eighth of it, the chance that the cell lies on the top card: the
card whose outline nothing covers, whatever lies beneath it, however faint its edge on a white
card. Each blob of that map is fitted as a card's outline: the smallest rectangle around it,
its sides then laid on the blob's straight runs (:func:`fit_sides`) and moved to hold the most
chance (:func:`fit_box`), so that a blob running on onto a card beneath is cut back. Each side is
then moved onto the card's edge in the full frame (:func:`refine`).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from referee.errors import RefereeError

Array = npt.NDArray[Any]

LOCATOR_PATH = Path(__file__).with_name("locator.onnx")
#: The size of the network's input (a quarter of a 640x480 frame) and of its map (an eighth).
IN_W, IN_H = 160, 120
MAP_W, MAP_H = 80, 60
#: A blob of the map is a card where the chance passes this.
LEVEL = 0.5
#: Blobs smaller than this share of the frame are not cards.
MIN_AREA = 0.01
#: How far (pixels of the frame) a side is looked for either side of the fitted outline's.
REACH = 6.0


class LocatorError(RefereeError, RuntimeError):
    """The shipped locator network is missing: a broken install, as for the model
    (``python3 -m training.locator`` writes it)."""


@dataclass(frozen=True)
class Spot:
    """A place where the network sees the top card: its corners in the frame (clockwise from
    one end of a short side) and the mean chance over its blob."""

    quad: Array
    score: float


@dataclass(frozen=True)
class Sight:
    """What the locator made of a frame: its map at half the frame's size, and the places
    the top card may lie, likeliest first."""

    chance: Array
    spots: list[Spot]

    def on_top(self, quad: Array) -> float:
        """The mean chance over a quad of the frame: how much the network takes it for the
        top card (a card beneath, or the table, is near 0)."""
        mask = np.zeros(self.chance.shape, np.uint8)
        cv2.fillConvexPoly(mask, np.round(quad.reshape(-1, 2) * 8).astype(np.int32), 1,
                           cv2.LINE_8, 4)  # half size, 4 bits of fraction: * 16 / 2
        inside = mask > 0
        return float(self.chance[inside].mean()) if inside.any() else 0.0


@lru_cache(maxsize=4)
def _network(path: Path) -> Any:
    if not path.exists():
        raise LocatorError(f"the locator network {path} is missing (train it with "
                           "python3 -m training.locator)")
    return cv2.dnn.readNetFromONNX(str(path))


class Locator:
    """Finds the top card in BGR frames."""

    def __init__(self, path: Path = LOCATOR_PATH) -> None:
        self.net = _network(path)

    def chances(self, frame: Array) -> Array:
        """The chance of each cell (an eighth of the frame's size) lying on the top card."""
        small = cv2.resize(frame, (IN_W, IN_H), interpolation=cv2.INTER_AREA)
        blob = (small.astype(np.float32) * (1 / 255.0) - 0.5).transpose(2, 0, 1)[None]
        self.net.setInput(np.ascontiguousarray(blob))
        logits = np.asarray(self.net.forward(), np.float32)[0, 0]
        return np.asarray(1.0 / (1.0 + np.exp(-logits)), np.float32)

    def look(self, frame: Array, most: int = 3) -> Sight:
        """The network's map of a frame and the places the top card may lie in it."""
        h, w = frame.shape[:2]
        up = cv2.resize(self.chances(frame), (w // 2, h // 2), interpolation=cv2.INTER_LINEAR)
        return Sight(np.asarray(up, np.float32), self._spots(frame, up, most))

    def spots(self, frame: Array, most: int = 3) -> list[Spot]:
        """The places the top card may lie, likeliest first, each side on the card's edge."""
        return self.look(frame, most).spots

    @staticmethod
    def _spots(frame: Array, up: Array, most: int) -> list[Spot]:
        n, labels, stats, _ = cv2.connectedComponentsWithStats((up > LEVEL).astype(np.uint8))
        gray: Array | None = None
        out: list[Spot] = []
        for i in (np.argsort(-stats[1:, cv2.CC_STAT_AREA])[:most] + 1).tolist():
            if stats[i, cv2.CC_STAT_AREA] < MIN_AREA * up.size:
                break
            blob = (labels == i).astype(np.uint8)
            contours, _ = cv2.findContours(blob, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            outline = max(contours, key=cv2.contourArea).reshape(-1, 2).astype(np.float32)
            box = fit_box(up, fit_sides(outline, cv2.boxPoints(cv2.minAreaRect(outline))))
            if gray is None:
                gray = cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY).astype(np.float32)
            out.append(Spot(order(refine(gray, box * 2.0, REACH)), float(up[blob > 0].mean())))
        return sorted(out, key=lambda s: -s.score)


def _meet(lines: list[tuple[Array, Array]]) -> Array | None:
    """The corners where each line (a point and a direction) meets the one before it, or
    None where two are parallel."""
    out = []
    for k in range(4):
        (a1, d1), (a2, d2) = lines[k - 1], lines[k]
        ax, ay, dx1, dy1 = float(a1[0]), float(a1[1]), float(d1[0]), float(d1[1])
        dx2, dy2 = float(d2[0]), float(d2[1])
        det = dx2 * dy1 - dx1 * dy2  # of [d1, -d2]
        if abs(det) < 1e-6:
            return None
        bx, by = float(a2[0]) - ax, float(a2[1]) - ay
        s = (dx2 * by - dy2 * bx) / det  # Cramer's rule for a1 + s d1 = a2 + r d2
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
    pts = outline.reshape(-1, 2).astype(np.float64)
    q = quad.reshape(4, 2).astype(np.float64)
    for _ in range(rounds):
        sides = _side_frames(q)
        dists = []
        for a, u, length in sides:
            along = (pts - a) @ u
            across = np.abs((pts - a) @ np.array([-u[1], u[0]]))
            dists.append(np.where((along > -near) & (along < length + near), across, np.inf))
        nearest = np.argmin(np.stack(dists), axis=0)
        lines: list[tuple[Array, Array]] = []
        for k, (a, u, length) in enumerate(sides):
            mine = pts[nearest == k]
            offs = (mine - a) @ np.array([-u[1], u[0]])
            if len(mine) >= 4:
                # the offset most points agree on, then a line through those points
                ranked = np.sort(offs)
                tries = np.unique(np.round(offs))
                agree = (np.searchsorted(ranked, tries + near, side="right")
                         - np.searchsorted(ranked, tries - near, side="left"))
                mine = mine[np.abs(offs - tries[int(agree.argmax())]) <= near]
            if len(mine) < 4:
                lines.append((a, u * length))
                continue
            vx, vy, x0, y0 = cv2.fitLine(mine.astype(np.float32), cv2.DIST_HUBER, 0, 0.01,
                                         0.01).ravel()
            lines.append((np.array([x0, y0]), np.array([vx, vy])))
        met = _meet(lines)
        if met is None:
            break
        moved = float(np.abs(met - q).max())
        q = met.astype(np.float64)
        if moved < 0.01:
            break  # settled: another round gives the same sides
    return np.asarray(q, np.float32)


def _held(ii: Array, x0: Array, y0: Array, x1: Array, y1: Array) -> Array:
    """The sums of an image over boxes (arrays of x0, y0, x1, y1), from its integral image;
    an empty box holds -inf."""
    sums = ii[y1, x1] - ii[y0, x1] - ii[y1, x0] + ii[y0, x0]
    return np.where((x1 > x0) & (y1 > y0), sums, -np.inf)


def _moved(ii: Array, box: list[int], k: int, tries: Array) -> Array:
    """:func:`_held` of ``box`` (x0, y0, x1, y1) with its side ``k`` at each of ``tries``."""
    x0, y0, x1, y1 = box
    if k == 0:
        sums, ok = ii[y1, x1] - ii[y0, x1] - ii[y1, tries] + ii[y0, tries], tries < x1
    elif k == 1:
        sums, ok = ii[y1, x1] - ii[tries, x1] - ii[y1, x0] + ii[tries, x0], tries < y1
    elif k == 2:
        sums, ok = ii[y1, tries] - ii[y0, tries] - ii[y1, x0] + ii[y0, x0], tries > x0
    else:
        sums, ok = ii[tries, x1] - ii[y0, x1] - ii[tries, x0] + ii[y0, x0], tries > y0
    ok &= (y1 > y0) if k in (0, 2) else (x1 > x0)  # the side that stays keeps its width
    return np.where(ok, sums, -np.inf)


def fit_box(chance: Array, quad: Array, level: float = LEVEL, reach: int = 12,
            turns: tuple[float, ...] = (0.0, -2.0, 2.0, -4.0, 4.0)) -> Array:
    """The rectangle near ``quad`` that holds the most chance above ``level`` (cells below
    it count against): a blob that runs on onto a card beneath is cut back to the card,
    since taking the run-on in would take in much empty table too. Its turn is tried a few
    degrees either way, and each side moved up to ``reach`` cells, until nothing gains."""
    q = quad.reshape(4, 2).astype(np.float64)
    centre = q.mean(axis=0)
    d = q[1] - q[0]
    base = float(np.degrees(np.arctan2(d[1], d[0])))
    diagonal = max(np.linalg.norm(q[2] - q[0]), np.linalg.norm(q[3] - q[1]))
    size = int(np.ceil(diagonal)) + 2 * reach + 4
    best: tuple[float, Array] | None = None
    for turn in turns:
        m = cv2.getRotationMatrix2D((float(centre[0]), float(centre[1])), base + turn, 1.0)
        m[:, 2] += size / 2 - centre
        turned = cv2.warpAffine(chance - level, m, (size, size), flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_CONSTANT, borderValue=-level)
        ii = cv2.integral(turned, sdepth=cv2.CV_64F)
        corners = cv2.transform(q.reshape(-1, 1, 2), m).reshape(4, 2)
        box = [min(max(round(float(v)), 0), size) for v in
               (*corners.min(axis=0), *corners.max(axis=0))]
        now = float(_held(ii, *(np.array([v]) for v in box))[0])
        for _ in range(4):
            moved = False
            for k in range(4):
                tries = np.arange(max(0, box[k] - reach), min(size, box[k] + reach) + 1)
                got = _moved(ii, box, k, tries)
                i = int(got.argmax())
                if got[i] > now + 1e-9:
                    box[k], now, moved = int(tries[i]), float(got[i]), True
            if not moved:
                break
        if best is None or now > best[0]:
            x0, y0, x1, y1 = box
            rect = np.array([[x0, y0], [x1, y0], [x1, y1], [x0, y1]], np.float64)
            back = cv2.invertAffineTransform(m)
            best = (now, cv2.transform(rect.reshape(-1, 1, 2), back).reshape(4, 2))
    assert best is not None
    return np.asarray(best[1], np.float32)


def order(quad: Array) -> Array:
    """The corners clockwise (in the frame, y down) from one end of a short side."""
    pts = quad.reshape(4, 2).astype(np.float32)
    c = pts.mean(axis=0)
    pts = pts[np.argsort(np.arctan2(pts[:, 1] - c[1], pts[:, 0] - c[0]))]
    d01 = np.linalg.norm(pts[0] - pts[1]) + np.linalg.norm(pts[2] - pts[3])
    d12 = np.linalg.norm(pts[1] - pts[2]) + np.linalg.norm(pts[3] - pts[0])
    return np.roll(pts, -1, axis=0) if d01 > d12 else pts


def refine(gray: Array, quad: Array, reach: float = REACH, points: int = 24) -> Array:
    """``quad`` with each side moved onto the card's edge: at points along the side, the
    steepest rise in brightness going into the card within ``reach`` pixels; a straight line
    through them (those far from the others' median left out). A side with too little edge
    stays where it was."""
    q = quad.reshape(4, 2).astype(np.float64)
    centre = q.mean(axis=0)
    ts = np.linspace(0.1, 0.9, points)
    offsets = np.arange(-reach - 0.5, reach + 0.51, 0.5)
    lines: list[tuple[Array, Array]] = []
    for a, u, length in _side_frames(q):
        nrm = np.array([-u[1], u[0]])
        if float(np.dot(centre - a, nrm)) < 0:
            nrm = -nrm  # into the card
        pts = (a[None, None] + ts[:, None, None] * (u * length)[None, None]
               + offsets[None, :, None] * nrm[None, None]).reshape(-1, 2).astype(np.float32)
        vals = cv2.remap(gray, pts[:, :1], pts[:, 1:], cv2.INTER_LINEAR,
                         borderMode=cv2.BORDER_REPLICATE).reshape(points, len(offsets))
        rise = vals[:, 2:] - vals[:, :-2]  # into the card, at offsets[1:-1]
        best = rise.argmax(axis=1)
        sure = rise.max(axis=1) > 6.0
        if sure.sum() < 0.35 * points:
            lines.append((a, u))
            continue
        tt, dd = ts[sure], offsets[1:-1][best[sure]]
        keep = np.abs(dd - np.median(dd)) <= 2.5
        if keep.sum() >= 4:
            design = np.stack([np.ones(int(keep.sum())), tt[keep]], axis=1)
            c0, c1 = np.linalg.lstsq(design, dd[keep], rcond=None)[0]
        else:
            c0, c1 = float(np.median(dd)), 0.0
        start, end = a + c0 * nrm, a + u * length + (c0 + c1) * nrm
        lines.append((start, end - start))
    met = _meet(lines)
    return quad.reshape(4, 2).astype(np.float32) if met is None else met
