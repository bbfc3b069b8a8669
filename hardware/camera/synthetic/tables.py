"""The tables the virtual camera films cards on, drawn from a number: felt of many colours, wood,
white and light tables, dark tables, striped and checked cloths, patterned cloths, stone. The same
number, the same table (:func:`table_image`)."""

from __future__ import annotations

import math
import random
from functools import lru_cache
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

Image = npt.NDArray[Any]
#: The kinds of table, and how often each is drawn.
KINDS = {"felt": 26, "wood": 16, "light": 14, "dark": 10, "stripes": 10, "checks": 10,
         "pattern": 8, "stone": 6}

_FELT = ((40, 110, 40), (35, 80, 150), (120, 40, 40), (60, 60, 60), (45, 85, 130),
         (70, 120, 60), (95, 60, 40), (110, 50, 90), (30, 100, 110), (140, 120, 40),
         (50, 50, 140), (80, 40, 30))
_LIGHT = ((250, 250, 250), (240, 244, 246), (226, 232, 236), (215, 225, 232), (245, 240, 232),
          (200, 206, 210), (232, 236, 240))
_DARK = ((20, 20, 22), (34, 30, 28), (40, 26, 18), (48, 40, 36), (30, 34, 48), (16, 16, 16))


def kind_of(number: int) -> str:
    """The kind of table ``number`` is."""
    rng = random.Random(f"table-{number}")
    return rng.choices(list(KINDS), weights=list(KINDS.values()))[0]


def _noise(rng: np.random.Generator, h: int, w: int, cell: float) -> Image:
    """Smooth noise, about -1..1, varying over ``cell`` pixels."""
    small = rng.normal(0, 1, (max(2, int(h / cell) + 2), max(2, int(w / cell) + 2)))
    return np.asarray(cv2.resize(small.astype(np.float32), (w, h),
                                 interpolation=cv2.INTER_CUBIC), np.float32)


def _grain(rng: np.random.Generator, h: int, w: int, sigma: float) -> Image:
    """A cloth's fine grain: grey noise of ``sigma``."""
    return rng.standard_normal((h, w, 1), dtype=np.float32) * np.float32(sigma)


def _colour(rng: random.Random, base: tuple[int, int, int], spread: float) -> Image:
    return np.clip(np.array(base, np.float32) + np.array([rng.uniform(-spread, spread)
                                                          for _ in range(3)], np.float32), 0, 255)


@lru_cache(maxsize=320)
def table_image(number: int, size: tuple[int, int]) -> tuple[Image, int]:
    """Table ``number`` for a frame of ``size``, with a margin all round (the tilted camera sees
    more of the table): the image (BGR) and the margin in pixels. Its cloth's weave and stripes
    are drawn to the frame's scale (a 640-wide frame's), so a small frame shows the same table
    at a smaller size."""
    w, h = size
    k = w / 640  # a table's weave and stripes are the same size on the table at any frame size
    margin = round(0.15 * w)
    W, H = w + 2 * margin, h + 2 * margin
    rng = random.Random(f"table-{number}")
    kind = rng.choices(list(KINDS), weights=list(KINDS.values()))[0]
    # each random field from a generator of its own: the same table at any size
    nrng = np.random.default_rng((number, 0))
    yy = np.arange(H, dtype=np.float32)[:, None]
    xx = np.arange(W, dtype=np.float32)[None, :]
    img: Image
    if kind in ("felt", "light", "dark"):
        palette = {"felt": _FELT, "light": _LIGHT, "dark": _DARK}[kind]
        base = _colour(rng, rng.choice(palette), 12 if kind != "light" else 5)
        img = np.broadcast_to(base, (H, W, 3)).astype(np.float32)
        grain = {"felt": 9.0, "light": 3.0, "dark": 5.0}[kind] * rng.uniform(0.5, 1.5)
        img = img + _grain(nrng, H, W, grain * min(1.0, k))
    elif kind == "wood":
        base = _colour(rng, rng.choice(((40, 80, 130), (30, 60, 100), (60, 110, 160),
                                        (25, 45, 70), (80, 130, 180))), 10)
        turn = math.radians(rng.uniform(0, 180))
        along = xx * math.cos(turn) + yy * math.sin(turn)
        across = -xx * math.sin(turn) + yy * math.cos(turn)
        period = rng.uniform(5, 12) * k
        grain = np.sin(across / period + 3 * np.sin(along / (90 * k) + number)) * 0.5 + 0.5
        img = base * (0.75 + 0.35 * grain[..., None])
        if rng.random() < 0.5:  # planks
            plank = rng.uniform(60, 140) * k
            seams = (np.mod(across, plank) < 1.5 * k).astype(np.float32)
            img = img * (1 - 0.5 * seams[..., None])
    elif kind in ("stripes", "checks"):
        a = _colour(rng, rng.choice(_FELT + _LIGHT + _DARK), 20)
        b = _colour(rng, rng.choice(_LIGHT + _FELT), 20)
        turn = math.radians(rng.choice((0, 90, rng.uniform(0, 180))))
        u = xx * math.cos(turn) + yy * math.sin(turn)
        v = -xx * math.sin(turn) + yy * math.cos(turn)
        period = rng.uniform(12, 70) * k
        su = (np.mod(u, period) < period * rng.uniform(0.3, 0.6)).astype(np.float32)
        if kind == "stripes":
            mix: Image = su
        else:  # gingham: where two stripes cross the colour is deepest
            sv = (np.mod(v, period) < period * 0.5).astype(np.float32)
            mix = 0.5 * (su + sv)
        mix = cv2.GaussianBlur(mix, (0, 0), 0.8 * k)
        img = a * mix[..., None] + b * (1 - mix[..., None])
        img = img + _grain(nrng, H, W, 5 * min(1.0, k))
    elif kind == "pattern":
        img = np.broadcast_to(_colour(rng, rng.choice(_LIGHT + _FELT), 15),
                              (H, W, 3)).astype(np.float32).copy()
        ink = tuple(float(c) for c in _colour(rng, rng.choice(_FELT + _DARK + _LIGHT), 30))
        step = rng.uniform(25, 70) * k
        r = rng.uniform(0.12, 0.35) * step
        canvas = img.copy()
        for y in np.arange(-step, H + step, step):
            for x in np.arange(-step, W + step, step):
                ox = (step / 2) if int(y / step) % 2 else 0.0
                if rng.random() < 0.5:
                    cv2.circle(canvas, (int(x + ox), int(y)), int(r), ink, -1, cv2.LINE_AA)
                else:
                    cv2.ellipse(canvas, (int(x + ox), int(y)), (int(r), int(r * 0.5)),
                                rng.uniform(0, 180), 0, 360, ink, -1, cv2.LINE_AA)
        img = canvas + _grain(nrng, H, W, 4 * min(1.0, k))
    else:  # stone or marble: veins of smooth noise
        base = _colour(rng, rng.choice(_LIGHT + ((120, 120, 120), (90, 100, 110))), 20)
        veins = np.abs(_noise(np.random.default_rng((number, 1)), H, W, 60 * k)
                       + 0.5 * _noise(np.random.default_rng((number, 2)), H, W, 15 * k))
        img = base * (0.8 + 0.25 * np.tanh(veins)[..., None])
    # the light's slow change across the cloth and its fine texture
    img = img * (1 + 0.06 * _noise(np.random.default_rng((number, 3)), H, W, 40 * k))[..., None]
    return np.asarray(np.clip(img, 0, 255), np.uint8), margin
