"""Step 3 of a read: the classifier, a small convolutional network (``classifier.onnx``, trained by
``python3 -m training.classifier``, run on one thread by :mod:`hardware.camera.reader.network`) that
looks at each of a warped card's four corner views (:func:`hardware.camera.reader.warp.views`) and
says which rank glyph it shows upright (one of :data:`GLYPHS`, or none: a corner without an index,
or the index upside down), which suit the card is, and a feature vector (what an enrolled deck is
matched on, :mod:`hardware.camera.reader.templates`).

What a glyph means is the table's index sets (``[camera] index_letters``,
:data:`hardware.camera.config.INDEX_SETS`): :func:`rank_chances` folds the glyphs into ranks.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from hardware.camera.config import DEFAULT_INDEX_LETTERS, INDEX_SETS
from hardware.camera.reader.network import Network, load
from referee.errors import RefereeError

Array = npt.NDArray[Any]

#: The glyphs a corner index may print for its rank: the numbers, and the letters of the index
#: sets (the Russian В and К are drawn as B and K, which they look like; ``1`` is an ace).
GLYPHS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K",
          "B", "D", "V", "R", "Kn", "F", "H", "Д", "Т", "1")
#: The classifier's class for "no rank glyph upright in this view".
NO_GLYPH = len(GLYPHS)
SUITS = "CDHS"
RANKS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)
#: The length of the classifier's feature vector for one view (training.classifier builds its
#: network with it; an enrolled deck file holds four a card).
FEATURES = 96
CLASSIFIER_PATH = Path(__file__).with_name("classifier.onnx")


class RecogniserError(RefereeError, RuntimeError):
    """The shipped classifier is missing: a broken install (a RuntimeError, so ``referee run``
    reports it as such). ``python3 -m training.classifier`` writes it."""


@dataclass(frozen=True)
class Look:
    """What the classifier made of a card's four views: each view's glyph chances
    (4 x ``len(GLYPHS) + 1``, the last: none), suit chances (4 x 4) and features."""

    glyphs: Array
    suits: Array
    features: Array


def _network(path: Path) -> Network:
    if not path.exists():
        raise RecogniserError(f"the recogniser's classifier {path} is missing; make it with "
                              "python3 -m training.classifier")
    return load(path)


def _softmax(z: Array) -> Array:
    z = z - z.max(axis=-1, keepdims=True)
    e = np.exp(z)
    return np.asarray(e / e.sum(axis=-1, keepdims=True), np.float32)


class Classifier:
    """Reads corner views with the shipped network."""

    def __init__(self, path: Path = CLASSIFIER_PATH) -> None:
        self.net = _network(path)

    def look(self, views: Array) -> Look:
        """The network's reading of a card's four views (4 x H x W x 3, BGR uint8)."""
        blob = (views.astype(np.float32) * (1 / 255.0) - 0.5).transpose(0, 3, 1, 2)
        glyphs, suits, features = self.net.run(blob, ["glyph", "suit", "features"])
        return Look(_softmax(glyphs), _softmax(suits), features)


def glyph_ranks(letters: tuple[str, ...] = DEFAULT_INDEX_LETTERS) -> Array:
    """A glyphs-by-ranks matrix (``len(GLYPHS) + 1`` x 13) of 0 and 1: which rank each glyph
    names in the index sets ``letters`` (a glyph of no set, and none, name no rank)."""
    m = np.zeros((len(GLYPHS) + 1, len(RANKS)), np.float32)
    for r in range(2, 11):
        m[GLYPHS.index(str(r)), RANKS.index(r)] = 1
    for name in letters:
        for glyph, rank in INDEX_SETS[name].items():
            m[GLYPHS.index(glyph), RANKS.index(rank)] = 1
    return m


def rank_chances(look: Look, meaning: Array) -> tuple[Array, float]:
    """The chance of each rank (13) by the views that show an index, and how much of the
    views' belief went to an index at all (0: no view shows a glyph). ``meaning``:
    :func:`glyph_ranks`. Glyphs that name no rank of the table's sets count against every
    rank."""
    index = 1 - look.glyphs[:, NO_GLYPH]
    if float(index.sum()) < 1e-6:
        return np.zeros(len(RANKS), np.float32), 0.0
    per_view = look.glyphs @ meaning  # each view's chance of each rank
    per_view = per_view / np.maximum(index[:, None], 1e-6)
    weights = index / index.sum()
    return np.asarray(weights @ per_view, np.float32), float(index.max())


def suit_chances(look: Look) -> Array:
    """The chance of each suit, all four views together (each a witness of its own: a view
    that sees no suit is near even and moves nothing)."""
    logp = np.log(np.clip(look.suits, 1e-6, 1.0)).sum(axis=0)
    return np.asarray(_softmax(logp[None])[0], np.float32)
