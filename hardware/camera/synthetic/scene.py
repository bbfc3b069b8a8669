"""The virtual camera: seeded, deterministic photographs of a pile of cards on a table.

A :class:`Scene` is the table (:mod:`hardware.camera.synthetic.tables`: felt, wood, white,
dark, striped or checked cloth …), the cards lying on it (the top one last, those beneath
offset and partly covered), maybe a hand, and the camera: its frame size (640x480 to 1280x960),
its tilt off vertical (a pinhole camera turned about its centre, up to 30 degrees), the light
(uneven, tinted, vignetted, a soft glare) and the picture's faults (focus and motion blur,
sensor noise, JPEG). :func:`render` films it; :func:`random_scene` draws one from a seed within
the range the recogniser is held to: the same seed, the same image.

Positions are on the table plane, in pixels of the frame a camera straight above would take
(the same frame size): :func:`camera` maps them into the tilted camera's frame.
"""

from __future__ import annotations

import math
import random
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from hardware.camera.synthetic.artwork import card_png
from hardware.camera.synthetic.tables import table_image
from referee.cards import Card, full_deck

#: An image or any array (numpy's dtypes are not worth spelling out at this edge).
Image = npt.NDArray[Any]
#: The frame size of a scene unless it says otherwise.
FRAME_W, FRAME_H = 640, 480
#: The frame sizes the recogniser is held to.
SIZES = ((640, 480), (800, 600), (1024, 768), (1280, 960))


@dataclass(frozen=True)
class Placed:
    """A card lying on the table: its centre and length (its long side) in pixels of the
    table plane, its turn (degrees)."""

    card: Card
    cx: float
    cy: float
    height: float
    angle: float


@dataclass(frozen=True)
class Hand:
    """A hand over the table: where the palm is, which way the fingers point, how big (pixels
    of a 640-wide frame: a hand is drawn to the frame's scale)."""

    x: float
    y: float
    angle: float
    size: float
    tone: tuple[int, int, int]


@dataclass
class Scene:
    """What the camera sees, and how it sees it."""

    deck: str
    background: int  # the table (:func:`~hardware.camera.synthetic.tables.table_image`)
    cards: list[Placed] = field(default_factory=list)
    hands: list[Hand] = field(default_factory=list)
    seed: int = 0
    size: tuple[int, int] = (FRAME_W, FRAME_H)
    tilt: tuple[float, float] = (0.0, 0.0)  # degrees off vertical, and towards which way
    fov: float = 62.0  # the camera's horizontal field of view, degrees
    light: tuple[float, float, float] = (1.0, 0.0, 0.0)  # gain, slope across, slope down
    tint: tuple[float, float, float] = (1.0, 1.0, 1.0)  # white balance: B, G, R gains
    vignette: float = 0.0
    glare: tuple[float, float, float, float] | None = None  # x, y (share of frame), size, gain
    blur: float = 0.0  # focus blur, pixels of a 640-wide frame
    motion: tuple[float, float] = (0.0, 0.0)  # motion blur: length (as blur), direction
    noise: float = 0.0
    jpeg: int = 0

    @property
    def top(self) -> Card | None:
        """The card on top of the pile, or None for an empty table."""
        return self.cards[-1].card if self.cards else None


#: A deck named ``NAME+plain`` is deck NAME with its border line painted white: a borderless
#: card, as many printed decks are.
PLAIN = "+plain"


@lru_cache(maxsize=512)
def card_rgba(deck: str, card: Card) -> Image:
    """A card's artwork as BGRA (``deck`` may end in :data:`PLAIN`), rendered once and cached."""
    base = deck.removesuffix(PLAIN)
    im = cv2.imread(str(card_png(base, card)), cv2.IMREAD_UNCHANGED)
    if im is None:
        raise OSError(f"cannot read the artwork of {card} in {base}")
    if im.shape[2] == 3:
        im = np.dstack([im, np.full(im.shape[:2], 255, np.uint8)])
    if deck != base:  # the ring 4 px in from the card's edge, the paper's colour
        alpha = im[..., 3]
        inner = cv2.erode((alpha > 250).astype(np.uint8), np.ones((9, 9), np.uint8),
                          borderType=cv2.BORDER_CONSTANT, borderValue=0)
        ring = (alpha > 0) & (inner == 0)
        paper = np.median(im[inner > 0][:, :3], axis=0) if inner.any() else (254, 254, 254)
        im[ring, :3] = np.asarray(paper, np.uint8)
    return np.asarray(im, np.uint8)


@lru_cache(maxsize=8192)
def _art_size(deck: str, card: Card) -> tuple[int, int]:
    h, w = card_rgba(deck, card).shape[:2]
    return h, w


def aspect(deck: str, card: Card) -> float:
    """A card's length over its width in its artwork."""
    h, w = _art_size(deck, card)
    return h / w


def camera(scene: Scene) -> npt.NDArray[np.float64]:
    """The homography from the table plane to the frame: a pinhole camera turned ``tilt[0]``
    degrees off vertical about its centre, towards ``tilt[1]``."""
    w, h = scene.size
    f = (w / 2) / math.tan(math.radians(scene.fov) / 2)
    K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]], np.float64)
    angle, towards = (math.radians(v) for v in scene.tilt)
    axis = np.array([-math.sin(towards), math.cos(towards), 0.0]) * angle
    R, _ = cv2.Rodrigues(axis)
    return np.asarray(K @ R @ np.linalg.inv(K), np.float64)


def card_corners(p: Placed, ratio: float) -> npt.NDArray[np.float32]:
    """The four corners of a placed card on the table plane (top-left of its artwork first,
    clockwise)."""
    h = p.height
    w = h / ratio
    a = math.radians(p.angle)
    ca, sa = math.cos(a), math.sin(a)
    pts = [(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)]
    return np.array([(p.cx + x * ca - y * sa, p.cy + x * sa + y * ca) for x, y in pts],
                    np.float32)


def corners_in_frame(scene: Scene, p: Placed) -> npt.NDArray[np.float32]:
    """A placed card's corners as the camera sees them (pixels of the frame)."""
    pts = card_corners(p, aspect(scene.deck, p.card)).reshape(-1, 1, 2)
    return np.asarray(cv2.perspectiveTransform(pts, camera(scene)).reshape(-1, 2), np.float32)


def hand_mask(hand: Hand, size: tuple[int, int], scale: float = 1.0) -> npt.NDArray[np.float32]:
    """Where a hand covers a frame of ``size`` (0-1), its coordinates times ``scale``."""
    w, h = size
    mask = np.zeros((h, w), np.uint8)
    a = math.radians(hand.angle)
    ux, uy = math.cos(a), math.sin(a)
    s = hand.size * scale
    x, y = hand.x * scale, hand.y * scale

    def pt(px: float, py: float) -> tuple[int, int]:
        return round(px), round(py)

    cv2.ellipse(mask, pt(x, y), pt(0.55 * s, 0.45 * s), hand.angle, 0, 360, 255, -1)
    cv2.line(mask, pt(x, y), pt(x - ux * 3 * s, y - uy * 3 * s), 255, max(1, round(0.7 * s)))
    for i, (off, length) in enumerate(((-0.33, 0.85), (-0.11, 1.0), (0.11, 0.95),
                                       (0.31, 0.75))):
        bx, by = x + ux * 0.35 * s - uy * off * s, y + uy * 0.35 * s + ux * off * s
        cv2.line(mask, pt(bx, by), pt(bx + ux * length * s, by + uy * length * s), 255,
                 max(2, round((0.2 - 0.01 * i) * s)))
    thumb = a - 1.1
    cv2.line(mask, pt(x, y), pt(x + math.cos(thumb) * 0.9 * s, y + math.sin(thumb) * 0.9 * s),
             255, max(2, round(0.22 * s)))
    k = max(3, round(5 * scale) | 1)
    return cv2.GaussianBlur(mask, (k, k), 0).astype(np.float32) / 255.0


#: The least height (pixels) of the card artwork kept for a card drawn small: a card ``n``
#: pixels long gets artwork 96, 192, 384 … pixels tall, never less than ``n`` (a warp that
#: enlarges artwork blurs it; one that shrinks it much only samples it).
_SMALL_CARD = 96


@lru_cache(maxsize=4096)
def _card_at(deck: str, card: Card, height: int) -> Image:
    im = card_rgba(deck, card)
    if height >= im.shape[0]:
        return im
    h, w = im.shape[:2]
    size = (max(1, round(w * height / h)), height)
    return np.asarray(cv2.resize(im, size, interpolation=cv2.INTER_AREA), np.uint8)


def _artwork_for(deck: str, card: Card, length: float) -> Image:
    """The card's artwork at the least kept height for a card ``length`` pixels long."""
    kept = int(_SMALL_CARD * 2 ** max(0, math.ceil(math.log2(max(length, 1) / _SMALL_CARD))))
    return _card_at(deck, card, kept)


#: Pixels (of a 640-wide frame) round a card's box that its shadow may darken.
_MARGIN = 16


def _lay(frame: Image, warped: Image, box: tuple[int, int, int, int], k: float) -> None:
    """Lay the card ``warped`` (BGRA, the frame's size within ``box``) on ``frame`` in place:
    its soft shadow on what lies beneath, its grey cut edge."""
    x0, y0, x1, y1 = box
    alpha = warped[y0:y1, x0:x1, 3].astype(np.float32) / 255.0
    shadow = cv2.GaussianBlur(alpha, (0, 0), max(0.5, 2.5 * k))
    move = np.array([[1, 0, 2 * k], [0, 1, 2 * k]], np.float32)
    shadow = cv2.warpAffine(shadow, move, (x1 - x0, y1 - y0))[..., None]
    part = frame[y0:y1, x0:x1] * (1 - 0.45 * shadow)
    rim = alpha - cv2.erode(alpha, np.ones((3, 3), np.uint8))
    face = warped[y0:y1, x0:x1, :3].astype(np.float32) * (1 - 0.35 * min(1.0, k) * rim[..., None])
    frame[y0:y1, x0:x1] = part * (1 - alpha[..., None]) + face * alpha[..., None]


def render(scene: Scene, out: tuple[int, int] | None = None) -> Image:
    """Film the scene: a BGR frame of the scene's size, or of ``out`` (the same scene filmed
    at that size: blur, motion and noise scaled with it; JPEG only at the scene's own size).
    The locator's training films its scenes straight at the network's input size."""
    w, h = scene.size
    ow, oh = out or scene.size
    k = ow / w  # output pixels per frame pixel
    S = np.array([[k, 0, 0.5 * k - 0.5], [0, oh / h, 0.5 * oh / h - 0.5], [0, 0, 1]], np.float64)
    rng = np.random.default_rng(scene.seed)
    H = S @ camera(scene)
    bg, margin = table_image(scene.background, (ow, oh))  # drawn at the output's scale
    M = H @ np.array([[1 / k, 0, -margin / k], [0, 1 / k, -margin / k], [0, 0, 1]], np.float64)
    frame: Image = cv2.warpPerspective(bg, M, (ow, oh), flags=cv2.INTER_LINEAR,
                                       borderMode=cv2.BORDER_REFLECT).astype(np.float32)
    scale = k * w / FRAME_W  # pixels of a 640-wide frame to output pixels
    for p in scene.cards:
        dst = cv2.perspectiveTransform(
            card_corners(p, aspect(scene.deck, p.card)).reshape(-1, 1, 2), H).reshape(4, 2)
        length = float(max(np.linalg.norm(dst[0] - dst[3]), np.linalg.norm(dst[1] - dst[2])))
        im = _artwork_for(scene.deck, p.card, length)
        ah, aw = im.shape[:2]
        full_h, full_w = _art_size(scene.deck, p.card)
        # the artwork's corners as they lie on the full-size artwork (pixel centres kept)
        src = np.array([[0, 0], [full_w, 0], [full_w, full_h], [0, full_h]], np.float32)
        src = (src + 0.5) * np.array([aw / full_w, ah / full_h], np.float32) - 0.5
        x, y, bw, bh = cv2.boundingRect(dst.astype(np.float32))
        m = round(_MARGIN * scale) + 2
        x0, y0 = max(0, x - m), max(0, y - m)
        x1, y1 = min(ow, x + bw + m), min(oh, y + bh + m)
        if x1 <= x0 or y1 <= y0:
            continue  # wholly out of the frame
        shift = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
        G = shift @ cv2.getPerspectiveTransform(src, dst.astype(np.float32))
        warped = cv2.warpPerspective(im, G, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR)
        _lay(frame[y0:y1, x0:x1], warped, (0, 0, x1 - x0, y1 - y0), scale)
    for hand in scene.hands:
        mh = hand_mask(hand, (ow, oh), scale)[..., None]
        tone = np.array(hand.tone, np.float32)
        shade = 0.8 + 0.5 * cv2.GaussianBlur(rng.random((oh, ow), np.float32), (0, 0),
                                             max(1.0, 9 * scale))[..., None]
        frame = frame * (1 - mh) + tone * shade * mh
    return _film(scene, frame, scale, (ow, oh) == scene.size, rng)


#: Sensor noise is drawn from a few fields of unit noise a frame size (drawing it afresh for
#: every frame costs more than the rest of the film).
_NOISES = 4


@lru_cache(maxsize=_NOISES)
def _noise_field(which: int) -> Image:
    return np.random.default_rng(which).standard_normal((960, 1280, 3), dtype=np.float32)


def _noise(w: int, h: int, which: int) -> Image:
    """Unit noise for a frame of ``w`` x ``h``: a corner of one of the fields, or drawn anew
    for a larger frame."""
    if w <= 1280 and h <= 960:
        return _noise_field(which)[:h, :w]
    return np.random.default_rng(which).standard_normal((h, w, 3), dtype=np.float32)


def _film(scene: Scene, frame: Image, scale: float, jpeg: bool,
          rng: np.random.Generator) -> Image:
    """The camera's faults on a composed frame: uneven, tinted, vignetted light, glare, motion
    and focus blur and noise (``scale``: output pixels per pixel of a 640-wide frame), JPEG."""
    oh, ow = frame.shape[:2]
    # light, vignette and glare change slowly: worked out on a coarse grid, then enlarged
    gw, gh = max(2, ow // 16), max(2, oh // 16)
    yy, xx = np.mgrid[0:gh, 0:gw].astype(np.float32)
    u, v = (xx + 0.5) / gw - 0.5, (yy + 0.5) / gh - 0.5
    gain, gx, gy = scene.light
    light = gain * (1 + gx * u + gy * v) * (1 - scene.vignette * (u * u + v * v) * 2)
    glare = np.zeros_like(light)
    if scene.glare is not None:
        cx, cy, size, strength = scene.glare
        d2 = ((u + 0.5 - cx) ** 2 + ((v + 0.5 - cy) * oh / ow) ** 2) / (2 * size ** 2)
        glare = strength * np.exp(-d2)
    gains = cv2.merge([light * np.float32(t) for t in scene.tint])
    frame = cv2.multiply(frame, cv2.resize(gains, (ow, oh), interpolation=cv2.INTER_LINEAR))
    if scene.glare is not None:
        glare = cv2.resize(glare, (ow, oh), interpolation=cv2.INTER_LINEAR)
        frame = cv2.add(frame, cv2.merge([glare, glare, glare]))
    length, direction = scene.motion
    if length * scale >= 1.5:
        n = max(2, round(length * scale))
        kernel = np.zeros((n | 1, n | 1), np.float32)
        c = (n | 1) // 2
        a = math.radians(direction)
        cv2.line(kernel, (round(c - math.cos(a) * n / 2), round(c - math.sin(a) * n / 2)),
                 (round(c + math.cos(a) * n / 2), round(c + math.sin(a) * n / 2)), 1.0, 1)
        frame = cv2.filter2D(frame, -1, kernel / kernel.sum())
    if scene.blur * scale > 0.3:
        frame = cv2.GaussianBlur(frame, (0, 0), scene.blur * scale)
    if scene.noise > 0:
        noise = _noise(frame.shape[1], frame.shape[0], int(rng.integers(_NOISES)))
        frame = cv2.scaleAdd(noise, scene.noise * min(1.0, scale), frame)
    out: Image = np.asarray(cv2.convertScaleAbs(cv2.max(frame, 0.0)), np.uint8)  # saturated
    if scene.jpeg and jpeg:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg])
        if ok:
            out = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), np.uint8)
    return out


def random_look(scene: Scene, rng: random.Random, *, tilt: float = 30.0) -> None:
    """Draw the camera's tilt (up to ``tilt`` degrees), the light and the picture's faults."""
    scene.tilt = (rng.uniform(0, tilt) if rng.random() < 0.7 else rng.uniform(0, 5),
                  rng.uniform(-180, 180))
    scene.fov = rng.uniform(50, 75)
    scene.light = (rng.uniform(0.65, 1.15), rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5))
    scene.tint = (rng.uniform(0.85, 1.15), 1.0, rng.uniform(0.85, 1.15))
    scene.vignette = rng.choice((0.0, rng.uniform(0, 0.35)))
    if rng.random() < 0.3:
        scene.glare = (rng.random(), rng.random(), rng.uniform(0.05, 0.2), rng.uniform(20, 90))
    scene.blur = rng.choice((0.0, 0.0, 0.5, 0.8, 1.2, 1.6))
    scene.motion = (rng.choice((0.0, 0.0, 0.0, rng.uniform(2, 6))), rng.uniform(0, 180))
    scene.noise = rng.uniform(0, 8)
    scene.jpeg = rng.choice((0, 45, 60, 75, 85, 95))


def random_hand(rng: random.Random, size: tuple[int, int],
                avoid: tuple[float, float, float] | None = None) -> Hand:
    """A hand reaching in from an edge of a frame of ``size`` (away from ``avoid`` = x, y,
    radius, pixels of the frame)."""
    w, h = size
    k = w / FRAME_W
    x, y = w / 2, h / 2
    for _ in range(20):
        x, y = rng.uniform(0, w), rng.uniform(0, h)
        if avoid is None or math.hypot(x - avoid[0], y - avoid[1]) > avoid[2]:
            break
    angle = math.degrees(math.atan2(y - h / 2, x - w / 2)) + 180 + rng.uniform(-30, 30)
    tone = rng.choice(((120, 150, 205), (90, 120, 170), (60, 80, 120), (140, 170, 225)))
    return Hand(x / k, y / k, angle, rng.uniform(45, 75), tone)


def in_frame(scene: Scene, p: Placed, margin: float = 2.0) -> bool:
    """Whether the whole of a placed card lies in the frame."""
    c = corners_in_frame(scene, p)
    w, h = scene.size
    return bool((c.min(axis=0) >= margin).all() and (c[:, 0] <= w - 1 - margin).all()
                and (c[:, 1] <= h - 1 - margin).all())


def apparent_length(scene: Scene, p: Placed) -> float:
    """A placed card's long side as the camera sees it (pixels, the longer of the two)."""
    c = corners_in_frame(scene, p)
    return float(max(np.linalg.norm(c[0] - c[3]), np.linalg.norm(c[1] - c[2])))


def pile(scene: Scene, rng: random.Random, top: Card, length: float, below: int,
         cards: list[Card], *, squared: float = 0.2, angle: float | None = None) -> bool:
    """Lay a pile in the scene: the top card ``length`` pixels long (as seen) wholly in the
    frame, ``below`` cards of ``cards`` beneath it at any offset and turn (a share
    ``squared`` of piles lie almost square on one another). False if no place was found."""
    w, h = scene.size
    angle = rng.uniform(-180, 180) if angle is None else angle
    back = np.linalg.inv(camera(scene))  # from the frame to the table
    for attempt in range(80):
        room = 0.42 * max(0.0, 1.0 - length / h)  # a long card lies near the middle
        u, v = (0.5 + rng.uniform(-room, room)) * w, (0.5 + rng.uniform(-room, room)) * h
        cx, cy = (float(c) for c in cv2.perspectiveTransform(
            np.array([[[u, v]]], np.float64), back)[0, 0])
        trial = Placed(top, cx, cy, length, angle)
        seen = apparent_length(scene, trial)
        trial = Placed(top, cx, cy, length * length / max(seen, 1.0), angle)
        if in_frame(scene, trial):
            break
        if attempt >= 20:
            length *= 0.98  # a card too long for the frame at this tilt: a little shorter
    else:
        return False
    square = rng.random() < squared
    for card in cards[:below]:
        if square:
            d, turn = rng.uniform(0.0, 0.12) * trial.height, rng.uniform(-8, 8)
        else:
            d, turn = rng.uniform(0.1, 0.6) * trial.height, rng.uniform(-180, 180)
        b = rng.uniform(0, 2 * math.pi)
        scene.cards.append(Placed(card, cx + d * math.cos(b), cy + d * math.sin(b),
                                  trial.height, angle + turn))
    scene.cards.append(trial)
    return True


def random_scene(seed: int, deck: str, *, top: Card | None = None, beneath: int | None = None,
                 hands: bool = True, size: tuple[int, int] | None = None,
                 length: tuple[float, float] | None = None, tilt: float = 30.0,
                 angle: float | None = None, table: int | None = None) -> Scene:
    """A random pile photograph within the range the recogniser is held to: a frame of one of
    :data:`SIZES` (or ``size``), the top card (``top`` or random) wholly in view, from 120
    pixels long to 90 % of the frame's height (or ``length``: the least and most), 0 to 4
    cards beneath at any offset and turn, any table, a camera up to ``tilt`` degrees off
    vertical, sometimes a hand beside the pile (``angle``: the top card's turn, ``table``: the
    table, else drawn). The same arguments, the same scene."""
    rng = random.Random(f"scene-{deck}-{seed}")
    frame = size or rng.choice(SIZES)
    number = rng.randrange(100_000)
    scene = Scene(deck=deck, background=number if table is None else table, seed=seed,
                  size=frame)
    cards = full_deck()
    rng.shuffle(cards)
    card = top or cards[-1]
    cards = [c for c in cards if c != card]
    low, high = length or (120.0, 0.9 * frame[1])
    want = math.exp(rng.uniform(math.log(low), math.log(high)))
    random_look(scene, rng, tilt=tilt)
    n_below = rng.choice((0, 1, 1, 2, 2, 3, 4)) if beneath is None else beneath
    if not pile(scene, rng, card, want, n_below, cards, angle=angle):
        scene.tilt = (0.0, 0.0)
        pile(scene, rng, card, min(want, 0.8 * frame[1]), n_below, cards, angle=angle)
    if hands and rng.random() < 0.25:
        p = scene.cards[-1]
        scene.hands.append(random_hand(rng, frame, (p.cx, p.cy, 0.95 * p.height)))
    return scene


def as_dict(scene: Scene) -> dict[str, Any]:
    """What the scene holds, for a bench's or a test's message."""
    return {"deck": scene.deck, "top": str(scene.top), "cards": len(scene.cards),
            "hands": len(scene.hands), "seed": scene.seed, "size": list(scene.size)}
