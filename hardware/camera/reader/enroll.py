"""Enrollment of a particular deck for the camera: its 52 cards shown once each, from photos
named by card (``QH.png``, ``10S.jpg``) or live from a camera, kept as templates in a deck
file (npz) that ``--deck`` gives to the recogniser."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

from hardware.camera.reader.find import find_cards
from hardware.camera.reader.sources import Frame, read_image
from hardware.camera.reader.templates import EnrolledDeck, template_vector
from hardware.camera.reader.warp import Array, warp
from referee.cards import Card, full_deck, parse_card
from referee.errors import CardError, RefereeError

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".webp")


class EnrollError(RefereeError, ValueError):
    """A folder or a camera that does not give the 52 cards."""


def card_of(path: Path) -> Card | None:
    """The card a photo is named after (``QH.png`` → QH), or None."""
    if path.suffix.lower() not in IMAGE_SUFFIXES:
        return None
    try:
        return parse_card(path.stem)
    except (CardError, ValueError):
        return None


def vector_of(image: Array) -> Array | None:
    """The template of the card in a photo (the largest whole card), or None."""
    quads = find_cards(image)
    if not quads:
        return None
    return template_vector(warp(image, quads[0]))


def enroll_images(folder: str | Path) -> tuple[EnrolledDeck, list[str]]:
    """The deck from a folder of photos named by card; also what could not be used."""
    root = Path(folder)
    if not root.is_dir():
        raise EnrollError(f"{root}: not a folder")
    vectors: dict[Card, Array] = {}
    problems: list[str] = []
    for path in sorted(root.iterdir()):
        card = card_of(path)
        if card is None:
            continue
        try:
            image = read_image(path)
        except OSError as exc:
            problems.append(str(exc))
            continue
        vec = vector_of(image)
        if vec is None:
            problems.append(f"{path.name}: no whole card found in the photo")
            continue
        vectors[card] = vec
    missing = [c for c in full_deck() if c not in vectors]
    if missing:
        raise EnrollError(f"{root}: {len(missing)} of the 52 cards are missing or unusable "
                         f"({' '.join(map(str, missing[:13]))}{' …' if len(missing) > 13 else ''})"
                         + (f"; {problems[0]}" if problems else ""))
    cards = tuple(full_deck())
    return EnrolledDeck(cards, np.stack([vectors[c] for c in cards])), problems


def enroll_live(frames: Iterator[Frame], show: Callable[[Card, str], None], *,
               steady: int = 8) -> EnrolledDeck:
    """The deck from a live camera: each card in turn is asked for (``show``) and taken once
    a whole card has lain still for ``steady`` frames and differs from the card before."""
    cards = tuple(full_deck())
    vectors: list[Array] = []
    for card in cards:
        show(card, "lay it alone under the camera")
        run: list[Array] = []
        for frame in frames:
            vec = vector_of(frame.image)
            if vec is None or (vectors and float(vec @ vectors[-1]) > 0.97):
                run = []
                continue
            if run and float(vec @ run[-1]) < 0.9:
                run = []
            run.append(vec)
            if len(run) >= steady:
                mean = np.mean(run, axis=0)
                vectors.append(np.asarray(mean / (np.linalg.norm(mean) + 1e-6), np.float32))
                show(card, "taken")
                break
        else:
            raise EnrollError(f"the camera stopped before {card} was taken")
    return EnrolledDeck(cards, np.stack(vectors))
