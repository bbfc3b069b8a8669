"""The classifiers that name a corner index's rank and suit: numpy MLPs trained by
``python3 -m training.classifier`` and shipped beside this file as ``model.npz``."""

from __future__ import annotations

from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from referee.cards import Card, full_deck
from referee.errors import RefereeError

Array = npt.NDArray[Any]

RANK_CLASSES = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14)
SUIT_CLASSES = "CDHS"
MODEL_PATH = Path(__file__).with_name("model.npz")


class RecogniserError(RefereeError, RuntimeError):
    """The shipped model is missing: a broken install (a RuntimeError, so ``referee run`` reports
    it as such and does not wait for it). ``python3 -m training.classifier`` writes it."""


class Mlp:
    """One-hidden-layer perceptrons with a softmax output, their probabilities averaged
    (weights from ``model.npz``, stacked along a first axis; a single network's have none).
    The logits are divided by ``temperature`` (below 1: surer)."""

    def __init__(self, mean: Array, std: Array, w1: Array, b1: Array, w2: Array,
                 b2: Array, temperature: float = 1.0) -> None:
        self.mean, self.std, self.temperature = mean, std, temperature
        self.w1, self.b1 = (w1, b1) if w1.ndim == 3 else (w1[None], b1[None])
        self.w2, self.b2 = (w2, b2) if w2.ndim == 3 else (w2[None], b2[None])

    def probabilities(self, x: Array) -> Array:
        """Class probabilities of each row of ``x``."""
        z = (x - self.mean) / self.std
        h = np.maximum(z @ self.w1 + self.b1[:, None], 0)
        o = (h @ self.w2 + self.b2[:, None]) / self.temperature
        o = o - o.max(axis=-1, keepdims=True)
        e = np.exp(o)
        return np.asarray((e / e.sum(axis=-1, keepdims=True)).mean(axis=0))


@lru_cache(maxsize=4)
def load_model(path: Path = MODEL_PATH) -> tuple[Mlp, Mlp]:
    """The rank and suit classifiers that ship with the package."""
    if not path.exists():
        raise RecogniserError(f"the recogniser's model {path} is missing; make it with "
                              "python3 -m training.classifier")
    with np.load(path) as z:
        nets = []
        for name in ("rank", "suit"):
            mean, std, w1, b1, w2, b2 = (z[f"{name}_{k}"]
                                         for k in ("mean", "std", "w1", "b1", "w2", "b2"))
            t = float(z[f"{name}_temperature"]) if f"{name}_temperature" in z else 1.0
            nets.append(Mlp(mean, std, w1, b1, w2, b2, t))
    return nets[0], nets[1]


def all_cards() -> list[Card]:
    """The 52 cards, in the order of the classifiers' tables."""
    return full_deck()
