"""The ``[camera]`` section of a table configuration (``card_source = "camera"``).

``source``: ``/dev/video0`` (default), a device number, ``picamera`` (the Pi camera) or a
video file or URL; ``deck``: a deck file from ``referee camera enroll`` (relative to the
configuration's folder); ``frames``: reads of the same new card that make a lay (default 3);
``index_letters``: the index sets the table's decks print (:data:`INDEX_SETS`; default
:data:`DEFAULT_INDEX_LETTERS`: every common set whose letters agree). Standard library only, so
a configuration is checked without OpenCV installed.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from referee.errors import ConfigError, shown

#: The settle window a camera table gets unless it sets ``settle_ms``: a lay reaches the
#: referee only after ``frames`` reads of its card and any unclear frames between them, so the
#: window covers the slowest lay ``bench/camera_latency.py`` measures, on a Pi reading a frame
#: in about twice the time (docs/camera.md, "Capture times and latency").
CAMERA_SETTLE_MS = 1000.0
KEYS = ("source", "deck", "frames", "index_letters")
#: The index sets a deck's court cards and aces may print, each glyph with the rank it names
#: (the numbers print as themselves). A glyph is named by the Latin letter it looks like: the
#: Russian В and К are ``B`` and ``K``; Д and Т are themselves.
INDEX_SETS: dict[str, dict[str, int]] = {
    "english": {"A": 14, "K": 13, "Q": 12, "J": 11},
    "german": {"A": 14, "K": 13, "D": 12, "B": 11},
    "french": {"A": 14, "1": 14, "R": 13, "D": 12, "V": 11},
    "russian": {"Т": 14, "K": 13, "Д": 12, "B": 11},
    "swedish": {"A": 14, "K": 13, "D": 12, "Kn": 11},
    "italian": {"A": 14, "R": 13, "D": 12, "F": 11},
    "dutch": {"A": 14, "H": 13, "V": 12, "B": 11},
}
#: The sets read out of the box: every common set whose letters agree (a glyph names one rank
#: in all of them). Dutch's V (a queen) is the French jack: a Dutch table names its set.
DEFAULT_INDEX_LETTERS = ("english", "german", "french", "russian", "swedish", "italian")


@dataclass(frozen=True)
class CameraConfig:
    """Where the frames come from and how they are read."""

    source: str = "/dev/video0"
    deck: Path | None = None
    frames: int = 3
    index_letters: tuple[str, ...] = DEFAULT_INDEX_LETTERS


def parse_camera(raw: dict[str, Any], path: str = "<config>",
                 base: Path | None = None) -> CameraConfig:
    """The ``[camera]`` section (defaults when it is absent); errors name file and key."""
    section = raw.get("camera", {})
    if not isinstance(section, dict):
        raise ConfigError(path, "camera", "must be a section")
    for key in section:
        if key not in KEYS:
            raise ConfigError(path, f"camera.{key}",
                              f"unknown key (known: {', '.join(sorted(KEYS))})")
    source = section.get("source", "/dev/video0")
    if not isinstance(source, str) or not source:
        raise ConfigError(path, "camera.source", f"must be text, got {shown(source)}")
    deck = section.get("deck")
    if deck is not None and not isinstance(deck, str):
        raise ConfigError(path, "camera.deck", f"must be text, got {shown(deck)}")
    frames = section.get("frames", 3)
    if isinstance(frames, bool) or not isinstance(frames, int) or not 1 <= frames <= 30:
        raise ConfigError(path, "camera.frames", f"must be a whole number 1..30, "
                          f"got {shown(frames)}")
    letters = section.get("index_letters", list(DEFAULT_INDEX_LETTERS))
    if isinstance(letters, str):
        letters = [letters]
    if not isinstance(letters, list) or not letters or not all(
            isinstance(n, str) for n in letters):
        raise ConfigError(path, "camera.index_letters", "must be a list of index sets, "
                          f"got {shown(letters)}")
    try:
        checked = index_sets(letters)
    except ValueError as exc:
        raise ConfigError(path, "camera.index_letters", str(exc)) from None
    root = base if base is not None else Path(".")
    return CameraConfig(source, None if deck is None else root / deck, frames, checked)


def index_sets(names: list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Index sets by name (:data:`INDEX_SETS`), checked: each known, and no glyph naming two
    ranks (Dutch's V is a queen, French's a jack: a table reads one of them). ValueError
    otherwise."""
    out: list[str] = []
    meaning: dict[str, tuple[int, str]] = {}
    for name in names:
        if name not in INDEX_SETS:
            raise ValueError(f"unknown index set {name!r} (known: {', '.join(INDEX_SETS)})")
        for glyph, rank in INDEX_SETS[name].items():
            if glyph in meaning and meaning[glyph][0] != rank:
                raise ValueError(f"{glyph} means another card in {name} than in "
                                 f"{meaning[glyph][1]}: name one of the two")
            meaning.setdefault(glyph, (rank, name))
        if name not in out:
            out.append(name)
    return tuple(out)
