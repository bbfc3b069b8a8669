"""Lays from a stream of reads: a new top card seen over a few frames becomes a lay.

:class:`LayTracker` takes one :class:`~hardware.camera.reader.recognise.Read` per frame with the
frame's capture time. A card becomes a lay once it was read in ``frames`` frames (unclear frames
in between do not break the run, another card does), stamped with the capture time of the first
frame that showed it. The card on top stays on top while a hand covers it or the picture is
unclear; reading it again is not a new lay, nor is the card that was on top before it (a card
sliding off the top for a frame, or a misread).
"""

from __future__ import annotations

from dataclasses import dataclass

from referee.cards import Card

#: Reads of the same card it takes to call a lay.
FRAMES = 3
#: Unclear frames a run may hold before it starts again.
GAP = 6


@dataclass(frozen=True)
class Lay:
    """A card that landed on the pile at ``t`` (ns, the first frame that showed it)."""

    t: int
    card: Card


class LayTracker:
    """Turns per-frame reads into lays."""

    def __init__(self, frames: int = FRAMES, gap: int = GAP) -> None:
        self.frames = frames
        self.gap = gap
        self.top: Card | None = None
        self.under: Card | None = None
        self._card: Card | None = None
        self._first_t = 0
        self._count = 0
        self._unclear = 0

    def reset(self) -> None:
        """Forget the pile (it was taken away: a new game, a collected pile)."""
        self.top = self.under = self._card = None
        self._count = self._unclear = 0

    @property
    def pending_since(self) -> int | None:
        """The first frame of a run that may still become a lay, or None."""
        return self._first_t if self._card is not None else None

    def feed(self, t: int, card: Card | None) -> Lay | None:
        """One frame's read (None: unclear or no card); the lay it completes, if any."""
        if card is None:
            self._unclear += 1
            if self._unclear > self.gap:
                self._card, self._count = None, 0
            return None
        self._unclear = 0
        if card in (self.top, self.under):
            self._card, self._count = None, 0
            return None
        if card != self._card:
            self._card, self._first_t, self._count = card, t, 0
        self._count += 1
        if self._count < self.frames:
            return None
        self.under, self.top = self.top, card
        self._card, self._count = None, 0
        return Lay(self._first_t, card)
