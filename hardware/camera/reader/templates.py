"""An enrolled deck (``referee camera enroll``): its 52 cards as templates, against which a
warped card is matched (:meth:`EnrolledDeck.look`), which decides between close readings."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy as np
import numpy.typing as npt

from referee.cards import Card

Array = npt.NDArray[Any]

#: A template's size: the whole card, small (its layout of pips or picture names it; a corner
#: index at this size does not, and at full size a warp a pixel or two off spoils it).
TEMPLATE = (40, 60)
#: The width (template pixels) of the slow change of light taken away from a template's grey.
TEMPLATE_LIGHT = 8.0
#: The weight of a template's redness beside its grey (hearts and diamonds from spades and
#: clubs, where the suits' shapes are too small to tell).
TEMPLATE_RED = 0.5
#: What a deck file's templates are: a file made by another version cannot be matched.
TEMPLATE_KIND = "card-light-red-40x60"
#: The lead of a template's best score over any card not alike it that makes it clear (1).
TEMPLATE_LEAD = 0.08
#: A best score below this names nothing (a card covered, or not the deck's).
TEMPLATE_FLOOR = 0.6


def template_vector(card: Array) -> Array:
    """A warped card as a zero-mean unit vector, for matching: its grey without the light's
    slow change across it, and its redness, both small."""
    small = cv2.resize(card, TEMPLATE, interpolation=cv2.INTER_AREA).astype(np.float32)
    b, g, r = cv2.split(small)
    grey = 0.114 * b + 0.587 * g + 0.299 * r
    grey = grey - cv2.GaussianBlur(grey, (0, 0), TEMPLATE_LIGHT)
    v = np.concatenate([grey.ravel(), TEMPLATE_RED * (r - (g + b) / 2).ravel()])
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
                                vectors=self.vectors, kind=np.array(TEMPLATE_KIND))

    @classmethod
    def load(cls, path: str | Path) -> EnrolledDeck:
        """Read a deck file; a file that is not one raises ValueError or OSError."""
        try:
            with np.load(path, allow_pickle=False) as z:
                cards = tuple(Card.parse(str(c)) for c in z["cards"])
                vectors = np.asarray(z["vectors"], np.float32)
                kind = str(z["kind"]) if "kind" in z.files else "an older kind"
        except (KeyError, EOFError) as exc:
            raise ValueError(f"{path} is not a camera deck file ({exc})") from None
        except ValueError as exc:
            raise ValueError(f"{path} is not a camera deck file ({exc})") from None
        if len(cards) != vectors.shape[0]:
            raise ValueError(f"{path} is not a camera deck file (sizes differ)")
        if kind != TEMPLATE_KIND:
            raise ValueError(f"{path} holds templates of {kind}, which this version does not "
                             "match: enroll the deck again (referee camera enroll)")
        return cls(cards, vectors)

    def look(self, card: Array) -> TemplateMatch:
        """How the deck's templates match a warped card (both orientations tried)."""
        a = template_vector(card)
        b = template_vector(cv2.flip(card, -1))
        scores = np.maximum(self.vectors @ a, self.vectors @ b)
        order = np.argsort(-scores)
        best = self.cards[int(order[0])]
        second = float(scores[order[1]]) if len(order) > 1 else -1.0  # a deck of one card
        other = next((float(scores[i]) for i in order[1:]
                      if not alike(self.cards[int(i)], best)), -1.0)
        return TemplateMatch(best, float(scores[order[0]]), second, other)


@dataclass(frozen=True)
class TemplateMatch:
    """The enrolled template likeliest for a card, its score, the runner-up's, and the best
    score of a card not :func:`alike` it."""

    card: Card
    score: float
    second: float
    other: float

    @property
    def clear(self) -> float:
        """How clearly the template names its card (0-1: its lead over the runner-up); none
        below the floor (a card covered, or not the deck's)."""
        return float(np.clip((self.score - self.second) / TEMPLATE_LEAD, 0, 1)) \
            * float(self.score > TEMPLATE_FLOOR)

    @property
    def clear_kind(self) -> float:
        """How clearly it names its card's rank and colour (its lead over any card not alike
        it), as :attr:`clear`."""
        return float(np.clip((self.score - self.other) / TEMPLATE_LEAD, 0, 1)) \
            * float(self.score > TEMPLATE_FLOOR)


def alike(a: Card, b: Card) -> bool:
    """Whether two cards look alike to a template: the same rank and colour (the ace of
    hearts and of diamonds differ only in the small pips' shape, which a template a pixel
    off loses; the corners tell their suits)."""
    return a.rank == b.rank and (a.suit in "HD") == (b.suit in "HD")
