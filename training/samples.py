"""What the classifier learns from: a card filmed by the virtual camera and read as the recogniser
reads it (its outline found a little off, warped upright, its four corner views), with what each
view shows: the rank glyph printed upright in it, or none, and the card's suit.

``card_sample`` films one card alone in a small frame around it (the scene's table, light,
tilt, blur, noise and JPEG, cards beneath it at any offset), so that thousands of samples a
deck are quick to make; ``deck_samples`` makes a deck's set once and keeps it in the cache
(``.cache/camera/samples``), under :data:`SAMPLES_KIND`.
"""

from __future__ import annotations

import math
import random
from typing import Any

import numpy as np

from hardware.camera.config import INDEX_SETS
from hardware.camera.reader.classify import GLYPHS, NO_GLYPH
from hardware.camera.reader.warp import VIEW_H, VIEW_W, views, warp
from hardware.camera.synthetic.artwork import DECKS, cache_dir
from hardware.camera.synthetic.drawn import letters_of, rank_glyphs
from hardware.camera.synthetic.scene import (
    PLAIN,
    Placed,
    Scene,
    corners_in_frame,
    in_frame,
    random_look,
    render,
)
from referee.cards import Card, full_deck

Array = Any
SUITS = "CDHS"
#: The corner views (:func:`~hardware.camera.reader.warp.views`) by the corner of the card
#: they show: top-left, top-right, bottom-right turned, bottom-left turned.
VIEW_NAMES = ("tl", "tr", "br", "bl")
#: The frame sizes a card is filmed in (the card 1.5 to 1.9 times smaller), and how many
#: tables (:mod:`hardware.camera.synthetic.tables`) are drawn from.
SIDES = (176, 256, 352, 480, 640, 800)
TABLES = 48
#: The kind of samples the cache holds: change it when the filming, the decks or the reading
#: change, or the cache gives the samples of before.
SAMPLES_KIND = "s1"


def glyph_of(deck: str, card: Card) -> str | None:
    """The glyph the deck prints for the card's rank (None: its courts print none)."""
    d = DECKS[deck.removesuffix(PLAIN)]
    if d.source == "drawn":
        letters, ace = letters_of(int(d.name.removeprefix("drawn-")))
    else:
        letters, ace = d.letters, d.ace
    if card.rank in (11, 12, 13) and not d.courts:
        return None
    glyphs = rank_glyphs(letters)
    glyphs[14] = ace
    glyph = glyphs[card.rank]
    assert INDEX_SETS[letters].get(glyph, card.rank) == card.rank
    return glyph


def ranked_views(deck: str) -> tuple[str, ...]:
    """The views of a card of the deck that show its rank glyph upright."""
    d = DECKS[deck.removesuffix(PLAIN)]
    if d.source == "drawn":
        from hardware.camera.synthetic.drawn import _Style

        layout = _Style(int(d.name.removeprefix("drawn-"))).layout
        return {"four": ("tl", "tr", "br", "bl"), "split": ("tr",)}.get(layout, ("tl", "br"))
    return d.views


def card_sample(deck: str, card: Card, seed: int, *, flip: bool | None = None,
                jitter: float = 0.02) -> tuple[Array, Array, int]:
    """One card filmed and read: its four views (4 x VIEW_H x VIEW_W x 3, uint8), the glyph
    class each shows upright (:data:`NO_GLYPH` for none) and its suit's index."""
    rng = random.Random(f"sample-{deck}-{card}-{seed}")
    # frames of a few sizes and tables of a few dozen, so that the tables are drawn once
    side = rng.choice(SIDES)
    length = side / rng.uniform(1.5, 1.9)
    s = Scene(deck=deck, background=rng.randrange(TABLES), seed=seed, size=(side, side))
    random_look(s, rng)
    s.glare = None if rng.random() < 0.6 else s.glare
    angle = rng.uniform(-180, 180)
    cx, cy = side / 2 + rng.uniform(-0.05, 0.05) * side, side / 2 + rng.uniform(-0.05, 0.05) * side
    top = Placed(card, cx, cy, length, angle)
    others = [c for c in full_deck() if c != card]
    for _ in range(rng.choice((0, 0, 1, 1, 2, 3))):
        d = rng.uniform(0.05, 0.6) * length
        b = rng.uniform(0, 2 * math.pi)
        s.cards.append(Placed(rng.choice(others), cx + d * math.cos(b), cy + d * math.sin(b),
                              length, angle + rng.choice((rng.uniform(-8, 8),
                                                          rng.uniform(-180, 180)))))
    s.cards.append(top)
    if not in_frame(s, top):
        s.tilt = (0.0, 0.0)
    frame = render(s)
    quad = corners_in_frame(s, top).astype(np.float64)  # artwork's top-left first, clockwise
    # the outline as the locator finds it: each corner a little off, now and then a side far off
    size = float(np.linalg.norm(quad[0] - quad[3]))
    quad += np.array([[rng.gauss(0, jitter * size) for _ in range(2)] for _ in range(4)])
    if rng.random() < 0.15:
        k = rng.randrange(4)
        move = (quad[k] + quad[(k + 1) % 4]) / 2 - quad.mean(axis=0)
        shift = move / max(float(np.linalg.norm(move)), 1e-6) * rng.uniform(-0.05, 0.05) * size
        quad[k] += shift
        quad[(k + 1) % 4] += shift
    turned = rng.random() < 0.5 if flip is None else flip
    if turned:
        quad = np.roll(quad, 2, axis=0)
    v = views(warp(frame, quad.astype(np.float32)))
    # the four views show the card's corners tl, tr, br, bl; turned, br, bl, tl, tr
    shown = VIEW_NAMES[2:] + VIEW_NAMES[:2] if turned else VIEW_NAMES
    glyph = glyph_of(deck, card)
    ranked = ranked_views(deck)
    labels = np.array([GLYPHS.index(glyph) if glyph is not None and name in ranked
                       else NO_GLYPH for name in shown], np.int64)
    return v, labels, SUITS.index(card.suit)


def deck_samples(deck: str, per_card: int, first_seed: int = 0) -> tuple[Array, Array, Array]:
    """``per_card`` samples of each of a deck's 52 cards (the deck's border painted white in a
    third of them): views (N x 4 x VIEW_H x VIEW_W x 3), glyph labels (N x 4), suits (N),
    from the cache or made and cached."""
    path = cache_dir() / "samples" / f"{deck}-{per_card}-{first_seed}-{SAMPLES_KIND}.npz"
    if path.exists():
        with np.load(path) as z:
            return z["views"], z["glyphs"], z["suits"]
    out_v = np.empty((52 * per_card, 4, VIEW_H, VIEW_W, 3), np.uint8)
    out_g = np.empty((52 * per_card, 4), np.int64)
    out_s = np.empty(52 * per_card, np.int64)
    i = 0
    for seed in range(first_seed, first_seed + per_card):
        for card in full_deck():
            name = deck + PLAIN if seed % 3 == 2 else deck
            out_v[i], out_g[i], out_s[i] = card_sample(name, card, seed)
            i += 1
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp.npz")
    np.savez(tmp, views=out_v, glyphs=out_g, suits=out_s)
    tmp.replace(path)
    return out_v, out_g, out_s
