"""The virtual camera: seeded, deterministic photographs of a pile of cards on a table.

A :class:`Scene` is the table (a felt, wood or cloth texture), the cards lying on it (the top one
last, those beneath offset and partly covered) and maybe a hand; :func:`render` films it as a
640x480 BGR frame through a camera with perspective, uneven light, glare, blur, noise and JPEG
artefacts. :func:`random_scene` draws one at random from a seed: the same seed, the same image.
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
from referee.cards import Card, full_deck

#: An image or any array (numpy's dtypes are not worth spelling out at this edge).
Image = npt.NDArray[Any]
FRAME_W, FRAME_H = 640, 480
#: The scale (``render(scene, FILM_SCALE)``) at which the locator's training films the scenes it
#: does not film whole, before shrinking them to the network's input.
FILM_SCALE = 0.5


@dataclass(frozen=True)
class Placed:
    """A card lying on the table: its centre and size in pixels of the frame, its turn."""

    card: Card
    cx: float
    cy: float
    height: float
    angle: float  # degrees


@dataclass(frozen=True)
class Hand:
    """A hand over the table: where the palm is, which way the fingers point, how big."""

    x: float
    y: float
    angle: float
    size: float
    tone: tuple[int, int, int]


@dataclass
class Scene:
    """What the camera sees, and how it sees it."""

    deck: str
    background: int
    cards: list[Placed] = field(default_factory=list)
    hands: list[Hand] = field(default_factory=list)
    seed: int = 0
    tilt: tuple[float, float] = (0.0, 0.0)
    light: tuple[float, float, float] = (1.0, 0.0, 0.0)
    glare: tuple[float, float, float] | None = None
    blur: float = 0.0
    motion: float = 0.0
    noise: float = 0.0
    jpeg: int = 0

    @property
    def top(self) -> Card | None:
        """The card on top of the pile, or None for an empty table."""
        return self.cards[-1].card if self.cards else None


#: A deck named ``NAME+plain`` is deck NAME with its border line painted white: a borderless
#: card, as most real decks print theirs (every training deck has a border line).
PLAIN = "+plain"


@lru_cache(maxsize=256)
def card_rgba(deck: str, card: Card) -> Image:
    """A card's artwork as BGRA (``deck`` may end in :data:`PLAIN`), rendered once and cached."""
    base = deck.removesuffix(PLAIN)
    im = cv2.imread(str(card_png(base, card)), cv2.IMREAD_UNCHANGED)
    if im is None:
        raise OSError(f"cannot read the artwork of {card} in {base}")
    if im.shape[2] == 3:
        im = np.dstack([im, np.full(im.shape[:2], 255, np.uint8)])
    if deck != base:  # the ring 3 px in from the card's edge, white
        alpha = im[..., 3]
        inner = cv2.erode((alpha > 250).astype(np.uint8), np.ones((7, 7), np.uint8),
                          borderType=cv2.BORDER_CONSTANT, borderValue=0)
        im[(alpha > 0) & (inner == 0), :3] = 254
    return np.asarray(im, np.uint8)


@lru_cache(maxsize=8192)
def _art_size(deck: str, card: Card) -> tuple[int, int]:
    """A card's artwork's height and width, in pixels."""
    h, w = card_rgba(deck, card).shape[:2]
    return h, w


def _aspect(deck: str, card: Card) -> float:
    """A card's height over its width in its artwork."""
    h, w = _art_size(deck, card)
    return h / w


@lru_cache(maxsize=16)
def _background(kind: int) -> Image:
    rng = np.random.default_rng(kind)
    h, w = FRAME_H + 80, FRAME_W + 80
    palettes = [(40, 110, 40), (35, 80, 150), (120, 40, 40), (60, 60, 60), (30, 30, 35),
                (45, 85, 130), (70, 120, 60), (95, 60, 40)]
    base = np.array(palettes[kind % len(palettes)], np.float32)  # BGR
    img: Image
    if kind % 4 == 3:  # wood: grain along x
        y = np.arange(h, dtype=np.float32)[:, None]
        x = np.arange(w, dtype=np.float32)[None, :]
        grain = np.sin(y / 7.0 + 3 * np.sin(x / 90.0 + kind)) * 0.5 + 0.5
        wood = np.array([40, 80, 130], np.float32)
        img = wood * (0.75 + 0.35 * grain[..., None])
    else:
        img = np.broadcast_to(base, (h, w, 3)).astype(np.float32)
    fine = rng.normal(0, 9, (h, w, 1)).astype(np.float32)
    coarse = cv2.resize(rng.normal(0, 12, (h // 40, w // 40)).astype(np.float32), (w, h))
    img = img + fine + coarse[..., None]
    return np.asarray(np.clip(img, 0, 255), np.uint8)


def _camera(scene: Scene) -> npt.NDArray[np.float64]:
    """The homography from the table plane (frame pixels seen from straight above) to the
    frame: a camera a little off vertical."""
    tx, ty = scene.tilt
    src = np.array([[0, 0], [FRAME_W, 0], [FRAME_W, FRAME_H], [0, FRAME_H]], np.float32)
    dx, dy = tx * FRAME_W, ty * FRAME_H
    dst = np.array([[dx, dy], [FRAME_W - dx, -dy], [FRAME_W + dx, FRAME_H + dy],
                    [-dx, FRAME_H - dy]], np.float32)
    return np.asarray(cv2.getPerspectiveTransform(src, dst), np.float64)


def card_corners(p: Placed, aspect: float) -> npt.NDArray[np.float32]:
    """The four corners of a placed card on the table plane (top-left first, clockwise)."""
    h = p.height
    w = h / aspect
    a = math.radians(p.angle)
    ca, sa = math.cos(a), math.sin(a)
    pts = [(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)]
    return np.array([(p.cx + x * ca - y * sa, p.cy + x * sa + y * ca) for x, y in pts],
                    np.float32)


def corners_in_frame(scene: Scene, p: Placed) -> npt.NDArray[np.float32]:
    """A placed card's corners as the camera sees them."""
    pts = card_corners(p, _aspect(scene.deck, p.card)).reshape(-1, 1, 2)
    return np.asarray(cv2.perspectiveTransform(pts, _camera(scene)).reshape(-1, 2), np.float32)


def _hand_mask(hand: Hand) -> npt.NDArray[np.float32]:
    mask = np.zeros((FRAME_H, FRAME_W), np.uint8)
    a = math.radians(hand.angle)
    ux, uy = math.cos(a), math.sin(a)
    s = hand.size
    cv2.ellipse(mask, (round(hand.x), round(hand.y)), (round(0.55 * s), round(0.45 * s)),
                hand.angle, 0, 360, 255, -1)
    # the arm, back towards the edge of the frame
    ax, ay = hand.x - ux * 3 * s, hand.y - uy * 3 * s
    cv2.line(mask, (round(hand.x), round(hand.y)), (round(ax), round(ay)), 255, round(0.7 * s))
    for i, (off, length) in enumerate(((-0.33, 0.85), (-0.11, 1.0), (0.11, 0.95),
                                       (0.31, 0.75))):
        bx = hand.x + ux * 0.35 * s - uy * off * s
        by = hand.y + uy * 0.35 * s + ux * off * s
        ex, ey = bx + ux * length * s, by + uy * length * s
        cv2.line(mask, (round(bx), round(by)), (round(ex), round(ey)), 255,
                 max(3, round((0.2 - 0.01 * i) * s)))
    thumb = a - 1.1
    tx, ty = hand.x + math.cos(thumb) * 0.9 * s, hand.y + math.sin(thumb) * 0.9 * s
    cv2.line(mask, (round(hand.x), round(hand.y)), (round(tx), round(ty)), 255,
             max(3, round(0.22 * s)))
    return cv2.GaussianBlur(mask, (5, 5), 0).astype(np.float32) / 255.0


#: Pixels round a card's box that its shadow (a blur of radius 10, shifted 2) may darken.
_MARGIN = 16


def _compose(frame: npt.NDArray[np.float32], warped: Image) -> npt.NDArray[np.float32]:
    """``frame`` with the card ``warped`` (BGRA, the same size) laid on it."""
    alpha = warped[..., 3:4].astype(np.float32) / 255.0
    # a soft shadow where the card's edge stands off the table or the card beneath
    shadow = cv2.GaussianBlur(alpha[..., 0], (0, 0), 2.5)
    shadow = np.roll(shadow, (2, 2), axis=(0, 1))[..., None]
    frame = frame * (1 - 0.45 * shadow)
    face = warped[..., :3].astype(np.float32)
    # the card's cut edge: a thin grey line all round (paper seen edge-on, dust, wear)
    rim = alpha[..., 0] - cv2.erode(alpha[..., 0], np.ones((3, 3), np.uint8))
    face = face * (1 - 0.35 * rim[..., None])
    return np.asarray(frame * (1 - alpha) + face * alpha, np.float32)


def render(scene: Scene, scale: float = 1.0) -> Image:
    """Film the scene: a 640x480 BGR frame; with ``scale`` below 1, the frame at that share of
    the size (see :func:`_render_small`)."""
    if scale != 1.0:
        return _render_small(scene, scale)
    rng = np.random.default_rng(scene.seed)
    H = _camera(scene)
    bg = _background(scene.background)
    ox, oy = 40, 40
    shift = np.array([[1, 0, ox], [0, 1, oy], [0, 0, 1]], np.float64)
    frame: Image = cv2.warpPerspective(bg, H @ shift, (FRAME_W, FRAME_H),
                                       borderMode=cv2.BORDER_REFLECT).astype(np.float32)
    for p in scene.cards:
        im = card_rgba(scene.deck, p.card)
        ch, cw = im.shape[:2]
        src = np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], np.float32)
        dst = corners_in_frame(scene, p)
        M = cv2.getPerspectiveTransform(src, dst)
        warped = cv2.warpPerspective(im, M, (FRAME_W, FRAME_H), flags=cv2.INTER_AREA)
        x, y, w, h = cv2.boundingRect(warped[..., 3])
        if w == 0:
            continue  # wholly out of the frame
        # Only the card's box and a margin wider than its shadow change: compose there. Near
        # the frame's edges the whole frame is composed (the shadow's shift wraps round).
        x0, y0, x1, y1 = x - _MARGIN, y - _MARGIN, x + w + _MARGIN, y + h + _MARGIN
        if x0 < 0 or y0 < 0 or x1 > FRAME_W or y1 > FRAME_H:
            x0, y0, x1, y1 = 0, 0, FRAME_W, FRAME_H
        frame[y0:y1, x0:x1] = _compose(frame[y0:y1, x0:x1], warped[y0:y1, x0:x1])
    for hand in scene.hands:
        m = _hand_mask(hand)[..., None]
        tone = np.array(hand.tone, np.float32)
        shade = 0.8 + 0.25 * cv2.GaussianBlur(rng.random((FRAME_H, FRAME_W), np.float32),
                                              (0, 0), 9)[..., None] * 2
        frame = frame * (1 - m) + tone * shade * m
    yy, xx = np.mgrid[0:FRAME_H, 0:FRAME_W].astype(np.float32)
    return _film(scene, frame, xx, yy, rng, 1.0)


def _film(scene: Scene, frame: Image, xx: Image, yy: Image, rng: np.random.Generator,
          scale: float) -> Image:
    """The camera's faults on a composed frame: uneven light and glare (``xx``, ``yy``: each
    pixel's place in the 640x480 frame), motion, blur and noise (in pixels of the frame, times
    ``scale``), then JPEG (at full size only)."""
    gain, gx, gy = scene.light
    field_ = gain * (1 + gx * (xx / FRAME_W - 0.5) + gy * (yy / FRAME_H - 0.5))
    frame = frame * field_[..., None]
    if scene.glare is not None:
        gx_, gy_, strength = scene.glare
        d2 = ((xx - gx_) ** 2 + (yy - gy_) ** 2) / (2 * 60.0 ** 2)
        frame = frame + strength * np.exp(-d2)[..., None]
    if scene.motion > 0:
        k = max(1, round(scene.motion * scale))
        kernel = np.zeros((k, k), np.float32)
        kernel[k // 2, :] = 1.0 / k
        frame = cv2.filter2D(frame, -1, kernel)
    if scene.blur > 0:
        frame = cv2.GaussianBlur(frame, (0, 0), scene.blur * scale)
    if scene.noise > 0:
        frame = frame + rng.normal(0, scene.noise * scale, frame.shape).astype(np.float32)
    out: Image = np.asarray(np.clip(frame, 0, 255), np.uint8)
    if scene.jpeg and scale == 1.0:
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, scene.jpeg])
        if ok:
            out = np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR), np.uint8)
    return out


#: The least height (pixels) of the card artwork kept for small frames: at a quarter of the
#: frame a card is at most 75 pixels long; a longer card gets artwork twice, four times …
#: as tall, never less than its own length (a warp that enlarges artwork blurs it).
_SMALL_CARD = 96


def _small_height(length: float) -> int:
    """The height of the kept artwork for a card ``length`` pixels long in a small frame."""
    return int(_SMALL_CARD * 2 ** max(0, math.ceil(math.log2(length / _SMALL_CARD))))


@lru_cache(maxsize=8192)
def _card_small(deck: str, card: Card, height: int) -> Image:
    im = card_rgba(deck, card)
    h, w = im.shape[:2]
    size = (max(1, round(w * height / h)), height)
    return np.asarray(cv2.resize(im, size, interpolation=cv2.INTER_AREA), np.uint8)


@lru_cache(maxsize=256)
def _background_small(kind: int, scale: float) -> Image:
    bg = _background(kind)
    size = (round(bg.shape[1] * scale), round(bg.shape[0] * scale))
    return np.asarray(cv2.resize(bg, size, interpolation=cv2.INTER_AREA), np.uint8)


def _to_small(scale: float) -> npt.NDArray[np.float64]:
    """Pixels of the frame (or of any image) to pixels of that image shrunk by ``scale``,
    pixel centres as ``cv2.resize`` puts them."""
    c = 0.5 * scale - 0.5
    return np.array([[scale, 0, c], [0, scale, c], [0, 0, 1]], np.float64)


def _render_small(scene: Scene, scale: float) -> Image:
    """The scene filmed straight at ``scale`` of the frame's size: close to the 640x480 frame
    shrunk with ``cv2.INTER_AREA`` (the locator's input), at a small share of the cost. Blur,
    motion and noise are scaled as the shrinking scales them; JPEG is left out (its 8-pixel
    blocks mostly average away). For training the locator, where thousands of frames are
    needed."""
    rng = np.random.default_rng(scene.seed)
    w, h = round(FRAME_W * scale), round(FRAME_H * scale)
    S = _to_small(scale)
    bg = _background_small(scene.background, scale)
    shift = np.array([[1, 0, 40], [0, 1, 40], [0, 0, 1]], np.float64)
    M = S @ _camera(scene) @ shift @ np.linalg.inv(S)
    frame: Image = cv2.warpPerspective(bg, M, (w, h),
                                       borderMode=cv2.BORDER_REFLECT).astype(np.float32)
    for p in scene.cards:
        target = p.height * scale
        kept = _small_height(target)
        im = _card_small(scene.deck, p.card, kept)
        if target < 0.8 * kept:  # shrink by area first: a warp only samples
            k = target / kept
            im = cv2.resize(im, (max(1, round(im.shape[1] * k)), max(1, round(target))),
                            interpolation=cv2.INTER_AREA)
        # the artwork's corners (as the full frame warps them) in the shrunk artwork
        full_h, full_w = _art_size(scene.deck, p.card)
        kx, ky = im.shape[1] / full_w, im.shape[0] / full_h
        src = np.array([[0, 0], [full_w, 0], [full_w, full_h], [0, full_h]], np.float32)
        src = (src + 0.5) * np.array([kx, ky], np.float32) - 0.5
        dst = cv2.perspectiveTransform(corners_in_frame(scene, p).reshape(-1, 1, 2), S)
        warped = cv2.warpPerspective(im, cv2.getPerspectiveTransform(src, dst), (w, h),
                                     flags=cv2.INTER_LINEAR)
        alpha = warped[..., 3:4].astype(np.float32) / 255.0
        shadow = cv2.GaussianBlur(alpha[..., 0], (0, 0), max(0.5, 2.5 * scale))
        move = np.array([[1, 0, 2 * scale], [0, 1, 2 * scale]], np.float32)
        shadow = cv2.warpAffine(shadow, move, (w, h))[..., None]
        frame = frame * (1 - 0.45 * shadow)
        rim = alpha[..., 0] - cv2.erode(alpha[..., 0], np.ones((3, 3), np.uint8))
        face = warped[..., :3].astype(np.float32) * (1 - 0.35 * scale * rim[..., None])
        frame = frame * (1 - alpha) + face * alpha
    for hand in scene.hands:
        m = cv2.resize(_hand_mask(hand), (w, h), interpolation=cv2.INTER_AREA)[..., None]
        tone = np.array(hand.tone, np.float32)
        shade = 0.8 + 0.25 * cv2.GaussianBlur(rng.random((h, w), np.float32),
                                              (0, 0), 9 * scale)[..., None] * 2
        frame = frame * (1 - m) + tone * shade * m
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    return _film(scene, frame, (xx + 0.5) / scale - 0.5, (yy + 0.5) / scale - 0.5, rng, scale)


def random_look(scene: Scene, rng: random.Random) -> None:
    """Draw the camera's tilt, the light and the picture's faults."""
    scene.tilt = (rng.uniform(-0.06, 0.06), rng.uniform(-0.06, 0.06))
    scene.light = (rng.uniform(0.7, 1.15), rng.uniform(-0.5, 0.5), rng.uniform(-0.5, 0.5))
    if rng.random() < 0.3:
        scene.glare = (rng.uniform(0, FRAME_W), rng.uniform(0, FRAME_H), rng.uniform(20, 70))
    scene.blur = rng.choice((0.0, 0.0, 0.6, 1.0, 1.4))
    scene.motion = rng.choice((0.0, 0.0, 0.0, 3.0))
    scene.noise = rng.uniform(0, 7)
    scene.jpeg = rng.choice((0, 50, 70, 85, 95))


def random_hand(rng: random.Random, avoid: tuple[float, float, float] | None = None) -> Hand:
    """A hand reaching in from an edge of the frame (away from ``avoid`` = x, y, radius)."""
    for _ in range(20):
        x, y = rng.uniform(0, FRAME_W), rng.uniform(0, FRAME_H)
        if avoid is None or math.hypot(x - avoid[0], y - avoid[1]) > avoid[2]:
            break
    angle = math.degrees(math.atan2(y - FRAME_H / 2, x - FRAME_W / 2)) + 180
    angle += rng.uniform(-30, 30)
    tone = rng.choice(((120, 150, 205), (90, 120, 170), (60, 80, 120), (140, 170, 225)))
    return Hand(x, y, angle, rng.uniform(45, 75), tone)


def half_extent(height: float, angle: float) -> tuple[float, float]:
    """Half the width and height of the frame a card of ``height`` pixels turned ``angle``
    degrees takes, with room for the camera's tilt."""
    a = math.radians(angle)
    width = height / 1.45
    return (0.5 * (width * abs(math.cos(a)) + height * abs(math.sin(a))) * 1.08 + 4,
            0.5 * (width * abs(math.sin(a)) + height * abs(math.cos(a))) * 1.08 + 4)


def random_scene(seed: int, deck: str, *, top: Card | None = None, beneath: int | None = None,
                 hands: bool = True) -> Scene:
    """A random pile photograph: a top card (``top`` or random) wholly in view, up to 3 cards
    beneath it, sometimes a hand beside the top card's corners. The same arguments, the same
    scene."""
    rng = random.Random(f"scene-{deck}-{seed}")
    scene = Scene(deck=deck, background=rng.randrange(8), seed=seed)
    cards = full_deck()
    rng.shuffle(cards)
    if top is not None:
        cards.remove(top)
        cards.append(top)
    n_below = rng.choice((0, 1, 1, 2, 3)) if beneath is None else beneath
    height = rng.uniform(170, 260)
    angle = rng.uniform(-180, 180)
    # The camera is mounted over the pile: the top card lies wholly in view (the cards
    # beneath may run out of it), with room for the camera's tilt.
    half_w, half_h = half_extent(height, angle)
    cx = rng.uniform(half_w, FRAME_W - half_w)
    cy = rng.uniform(half_h, FRAME_H - half_h)
    random_look(scene, rng)
    for _ in range(20):  # the camera's tilt may still take a corner out
        corners = corners_in_frame(scene, Placed(cards[-1], cx, cy, height, angle))
        if (corners.min(axis=0) >= 2).all() and (corners[:, 0] <= FRAME_W - 3).all() \
                and (corners[:, 1] <= FRAME_H - 3).all():
            break
        cx = rng.uniform(half_w, FRAME_W - half_w)
        cy = rng.uniform(half_h, FRAME_H - half_h)
    for i in range(n_below):
        d = rng.uniform(0.15, 0.45) * height
        a = rng.uniform(0, 2 * math.pi)
        scene.cards.append(Placed(cards[i], cx + d * math.cos(a), cy + d * math.sin(a), height,
                                  angle + rng.uniform(-40, 40)))
    scene.cards.append(Placed(cards[-1], cx, cy, height, angle))
    if hands and rng.random() < 0.25:
        scene.hands.append(random_hand(rng, (cx, cy, 0.95 * height)))
    return scene


def as_dict(scene: Scene) -> dict[str, Any]:
    """What the scene holds, for a bench's or a test's message."""
    return {"deck": scene.deck, "top": str(scene.top), "cards": len(scene.cards),
            "hands": len(scene.hands), "seed": scene.seed}
