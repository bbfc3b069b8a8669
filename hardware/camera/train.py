"""Train the recogniser's classifiers from cards rendered here; writes ``model.npz``.

``python3 -m hardware.camera.train [--out PATH] [--per-card N] [--seed S]``

The training decks are ``anglo`` and ``gnomangelo`` (gnome-cards-data) and the decks drawn with
the system's fonts (``font-1`` … ``font-6``); ``touati`` (the npm deck) is held out of training
and tuning, for the out-of-the-box figures. Each card is filmed ``N`` times through a quick
camera model (perspective and corner error, scale, light, blur, noise, JPEG), warped as the
recogniser warps, and both corner indices are taken as samples. Two one-hidden-layer networks
(rank, suit) are fitted with Adam on this CPU in a few minutes; their weights are what ships.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from hardware.camera.artwork import FONT_DECKS
from hardware.camera.recognise import (
    CORNER_H,
    CORNER_W,
    MODEL_PATH,
    RANK_CLASSES,
    SUIT_CLASSES,
    WARP_H,
    WARP_W,
    Array,
    corner_glyphs,
    rank_features,
    suit_features,
)
from hardware.camera.scene import _card_rgba
from referee.cards import Card, full_deck

TRAIN_DECKS = ("anglo", "gnomangelo", *FONT_DECKS)
HELD_OUT = ("touati",)


def filmed(deck: str, card: Card, rng: random.Random) -> Array:
    """A card as the recogniser gets it after a quick camera model: warped to 200x300."""
    im = _card_rgba(deck, card)
    ch, cw = im.shape[:2]
    h = rng.uniform(150, 270)
    w = h * cw / ch
    pad = 20
    W, H = round(w + 2 * pad), round(h + 2 * pad)
    j = 0.03 * h
    src = np.array([[0, 0], [cw, 0], [cw, ch], [0, ch]], np.float32)
    quad = np.array([[pad, pad], [pad + w, pad], [pad + w, pad + h], [pad, pad + h]],
                    np.float32)
    dst = quad + np.array([[rng.uniform(-j, j), rng.uniform(-j, j)] for _ in range(4)],
                          np.float32)
    M = cv2.getPerspectiveTransform(src, dst)
    bg = np.full((H, W, 3), [rng.uniform(20, 150) for _ in range(3)], np.float32)
    warped = cv2.warpPerspective(im, M, (W, H), flags=cv2.INTER_AREA).astype(np.float32)
    a = warped[..., 3:4] / 255.0
    frame = bg * (1 - a) + warped[..., :3] * a
    yy, xx = np.mgrid[0:H, 0:W].astype(np.float32)
    gain = rng.uniform(0.55, 1.15) * (1 + rng.uniform(-0.5, 0.5) * (xx / W - 0.5)
                                      + rng.uniform(-0.5, 0.5) * (yy / H - 0.5))
    frame = frame * gain[..., None]
    if rng.random() < 0.25:
        gx, gy = rng.uniform(0, W), rng.uniform(0, H)
        frame = frame + rng.uniform(20, 70) * np.exp(
            -((xx - gx) ** 2 + (yy - gy) ** 2) / (2 * 50.0 ** 2))[..., None]
    sigma = rng.choice((0.0, 0.5, 0.9, 1.3, 1.7))
    if sigma:
        frame = cv2.GaussianBlur(frame, (0, 0), sigma)
    frame = frame + np.random.default_rng(rng.getrandbits(32)).normal(
        0, rng.uniform(0, 8), frame.shape)
    out = np.clip(frame, 0, 255).astype(np.uint8)
    q = rng.choice((0, 40, 60, 80, 95))
    if q:
        out = cv2.imdecode(cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, q])[1],
                           cv2.IMREAD_COLOR)
    # the recogniser's estimate of the corners is off by a few pixels (or read a little wider)
    e = 4.0
    seen = dst + np.array([[rng.uniform(-e, e), rng.uniform(-e, e)] for _ in range(4)],
                           np.float32)
    if rng.random() < 0.5:
        seen = np.roll(seen, 2, axis=0)
    target = np.array([[0, 0], [WARP_W - 1, 0], [WARP_W - 1, WARP_H - 1], [0, WARP_H - 1]],
                      np.float32)
    return np.asarray(cv2.warpPerspective(out, cv2.getPerspectiveTransform(seen, target),
                                          (WARP_W, WARP_H), flags=cv2.INTER_AREA))


#: Indices are printed narrower or wider than any font here (condensed faces are common on
#: cards): this share of the ranks is squeezed or stretched sideways by a factor in SQUEEZE.
SQUEEZE_SHARE, SQUEEZE = 0.6, (0.5, 1.2)


def squeezed(card: Array, factor: float) -> Array:
    """A warped card whose top-left corner index is ``factor`` times as wide."""
    cw, ch = round(CORNER_W * WARP_W), round(CORNER_H * WARP_H)
    src_w = min(WARP_W, round(cw / factor))
    out = card.copy()
    out[:ch, :cw] = cv2.resize(card[:ch, :src_w], (cw, ch), interpolation=cv2.INTER_AREA)
    return out


def samples(decks: tuple[str, ...], per_card: int, seed: int
            ) -> tuple[Array, Array, Array, Array]:
    """Rank and suit features with their labels, from filmed cards of ``decks``."""
    rng = random.Random(seed)
    rx: list[Array] = []
    ry: list[int] = []
    sx: list[Array] = []
    sy: list[int] = []
    for deck in decks:
        for card in full_deck():
            for _ in range(per_card):
                img = filmed(deck, card, rng)
                for view in (img, np.ascontiguousarray(img[::-1, ::-1])):
                    g = corner_glyphs(view)
                    if g is None:
                        continue
                    rank_g = g  # the rank from a squeezed corner, the suit as printed
                    if rng.random() < SQUEEZE_SHARE:
                        rank_g = corner_glyphs(squeezed(view, rng.uniform(*SQUEEZE))) or g
                    rx.append(rank_features(rank_g))
                    ry.append(RANK_CLASSES.index(card.rank))
                    sx.append(suit_features(g))
                    sy.append(SUIT_CLASSES.index(card.suit))
    return np.stack(rx), np.array(ry), np.stack(sx), np.array(sy)


def fit(x: Array, y: Array, classes: int, *, hidden: int = 96, epochs: int = 40,
        seed: int = 0) -> dict[str, Array]:
    """A one-hidden-layer softmax network fitted with Adam (weight decay, label smoothing)."""
    rng = np.random.default_rng(seed)
    mean = x.mean(axis=0)
    std = x.std(axis=0) + 1e-3
    z = ((x - mean) / std).astype(np.float32)
    n, d = z.shape
    params = {"w1": rng.normal(0, (2 / d) ** 0.5, (d, hidden)).astype(np.float32),
              "b1": np.zeros(hidden, np.float32),
              "w2": rng.normal(0, (2 / hidden) ** 0.5, (hidden, classes)).astype(np.float32),
              "b2": np.zeros(classes, np.float32)}
    m = {k: np.zeros_like(v) for k, v in params.items()}
    v2 = {k: np.zeros_like(v) for k, v in params.items()}
    target = np.full((n, classes), 0.02 / classes, np.float32)
    target[np.arange(n), y] += 0.98
    step, lr, b1, b2, decay = 0, 2e-3, 0.9, 0.999, 1e-4
    for _ in range(epochs):
        order = rng.permutation(n)
        for i in range(0, n, 128):
            idx = order[i:i + 128]
            xb, tb = z[idx], target[idx]
            if rng.random() < 0.5:  # a little input noise
                xb = xb + rng.normal(0, 0.3, xb.shape).astype(np.float32)
            h = np.maximum(xb @ params["w1"] + params["b1"], 0)
            o = h @ params["w2"] + params["b2"]
            o -= o.max(axis=1, keepdims=True)
            p = np.exp(o)
            p /= p.sum(axis=1, keepdims=True)
            go = (p - tb) / len(idx)
            grads = {"w2": h.T @ go + decay * params["w2"], "b2": go.sum(0)}
            gh = go @ params["w2"].T * (h > 0)
            grads["w1"] = xb.T @ gh + decay * params["w1"]
            grads["b1"] = gh.sum(0)
            step += 1
            for k in params:
                m[k] = b1 * m[k] + (1 - b1) * grads[k]
                v2[k] = b2 * v2[k] + (1 - b2) * grads[k] ** 2
                mh = m[k] / (1 - b1 ** step)
                vh = v2[k] / (1 - b2 ** step)
                params[k] -= lr * mh / (np.sqrt(vh) + 1e-8)
    return {"mean": mean.astype(np.float32), "std": std.astype(np.float32), **params}


def accuracy(net: dict[str, Array], x: Array, y: Array) -> float:
    """The share of rows the fitted network names right."""
    z = (x - net["mean"]) / net["std"]
    o = np.maximum(z @ net["w1"] + net["b1"], 0) @ net["w2"] + net["b2"]
    return float((o.argmax(1) == y).mean())


def main(argv: list[str] | None = None) -> int:
    """Train and write the model."""
    ap = argparse.ArgumentParser(prog="python3 -m hardware.camera.train",
                                 description="Train the camera recogniser's classifiers from "
                                 "rendered cards of the training decks (touati is held out).")
    ap.add_argument("--out", type=Path, default=MODEL_PATH, help="where to write the model "
                    "(default: the package's model.npz, which ships)")
    ap.add_argument("--per-card", type=int, default=10,
                    help="filmed copies of each card of each training deck (default 10)")
    ap.add_argument("--seed", type=int, default=1, help="the seed of the data (default 1)")
    args = ap.parse_args(argv)
    t0 = time.monotonic()
    rx, ry, sx, sy = samples(TRAIN_DECKS, args.per_card, args.seed)
    print(f"{len(ry)} corner samples from {len(TRAIN_DECKS)} decks in "
          f"{time.monotonic() - t0:.0f} s", file=sys.stderr)
    rank = fit(rx, ry, len(RANK_CLASSES), seed=args.seed)
    suit = fit(sx, sy, len(SUIT_CLASSES), hidden=48, seed=args.seed)
    hx, hy, hsx, hsy = samples(HELD_OUT, 2, args.seed + 1)
    print(f"trained in {time.monotonic() - t0:.0f} s; corner accuracy on the training decks "
          f"rank {accuracy(rank, rx, ry):.4f} suit {accuracy(suit, sx, sy):.4f}; held-out "
          f"touati (not used to fit) rank {accuracy(rank, hx, hy):.4f} "
          f"suit {accuracy(suit, hsx, hsy):.4f}", file=sys.stderr)
    out: dict[str, Any] = {f"rank_{k}": v for k, v in rank.items()}
    out.update({f"suit_{k}": v for k, v in suit.items()})
    with open(args.out, "wb") as fh:
        np.savez_compressed(fh, **out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
