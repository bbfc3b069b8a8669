"""Card identity: deck files mapping tag ids to cards, and enrolling a deck card by card.

A deck file is JSON (or TOML, by its ``.toml`` extension), one physical deck::

    {"deck": 1, "name": "red deck", "cards": {"04A1B2C3D4E5F6": "QH", ...}}

    deck = 1
    name = "red deck"
    [cards]
    "04A1B2C3D4E5F6" = "QH"

Tag ids are hex (``04:a1:b2`` and ``04 A1 B2`` are read too); each tag names one card and each
card has at most one tag.

``referee deck enroll FILE --port PORT`` walks a person through reading all 52 cards on the
board's reader (:class:`Enrollment` is the logic, :func:`run_enroll` the session): it names the
card to read next, saves after every change (so a session can stop and resume), refuses a
card read twice or an unknown tag with a clear message and no change, and lets the operator
correct a misread card (``undo``, ``fix QH``, ``swap QH QD``, ``as QH``, ``skip``, ``check``).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import secrets
import stat
import tomllib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from referee.cards import Card, full_deck, parse_card
from referee.errors import CardError, RefereeError

DECK_FORMAT = 1


class DeckError(RefereeError, ValueError):
    """A deck file or a change that breaks the deck's rules."""


class DeckPathError(DeckError, OSError):
    """A path a deck file cannot be saved at (a device node, a FIFO, a folder)."""


def parse_tag(text: str) -> bytes:
    """A tag id from hex text (``04A1B2``, ``04:a1:b2``, ``04 a1 b2``)."""
    clean = re.sub(r"[\s:\-]", "", str(text))
    try:
        tag = bytes.fromhex(clean)
    except ValueError:
        raise DeckError(f"tag id {text!r} is not hex") from None
    if not 1 <= len(tag) <= 16:
        raise DeckError(f"tag id {text!r} must be 1..16 bytes")
    return tag


def tag_text(tag: bytes) -> str:
    """The canonical text of a tag id: upper-case hex."""
    return tag.hex().upper()


class Deck:
    """One physical deck: which tag is which card."""

    def __init__(self, name: str = "", tags: dict[bytes, Card] | None = None) -> None:
        self.name = name
        self._by_tag: dict[bytes, Card] = {}
        self._by_card: dict[Card, bytes] = {}
        for tag, card in (tags or {}).items():
            self.add(tag, card)

    def __len__(self) -> int:
        return len(self._by_tag)

    def __contains__(self, tag: object) -> bool:
        return tag in self._by_tag

    def card_for(self, tag: bytes) -> Card | None:
        """The card with this tag, or ``None`` for an unknown tag."""
        return self._by_tag.get(bytes(tag))

    def tag_for(self, card: Card) -> bytes | None:
        """The tag of this card, or ``None`` if it is not enrolled."""
        return self._by_card.get(card)

    def add(self, tag: bytes, card: Card) -> None:
        """Enroll ``card`` with ``tag``; :class:`DeckError` if either is taken already."""
        tag = bytes(tag)
        if tag in self._by_tag:
            raise DeckError(f"tag {tag_text(tag)} is already the {self._by_tag[tag].name()}")
        if card in self._by_card:
            raise DeckError(f"the {card.name()} already has tag {tag_text(self._by_card[card])}")
        self._by_tag[tag] = card
        self._by_card[card] = tag

    def remove(self, card: Card) -> bytes | None:
        """Forget ``card``'s tag; returns it (``None`` if it had none)."""
        tag = self._by_card.pop(card, None)
        if tag is not None:
            del self._by_tag[tag]
        return tag

    def items(self) -> list[tuple[bytes, Card]]:
        """(tag, card) pairs in deck order (clubs 2..A, diamonds, hearts, spades)."""
        return [(self._by_card[c], c) for c in full_deck() if c in self._by_card]

    def missing(self) -> list[Card]:
        """Cards without a tag, in deck order."""
        return [c for c in full_deck() if c not in self._by_card]

    @property
    def complete(self) -> bool:
        """All 52 cards have a tag."""
        return len(self._by_card) == 52

    # -- files -------------------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The file contents as a JSON-ready dict."""
        return {"deck": DECK_FORMAT, "name": self.name,
                "cards": {tag_text(t): str(c) for t, c in self.items()}}

    @classmethod
    def from_json(cls, obj: Any, source: str = "deck") -> Deck:
        """Read a deck; :class:`DeckError` names what is wrong."""
        if not isinstance(obj, dict):
            raise DeckError(f"{source}: a deck is an object with 'cards'")
        if "cards" not in obj:  # e.g. the table's configuration given for its deck file
            what = " (it looks like a table configuration)" if "table" in obj else ""
            raise DeckError(f"{source}: not a deck file{what}: a deck file has 'cards', the "
                            "tag of each card (referee deck enroll writes one)")
        if obj.get("deck", DECK_FORMAT) != DECK_FORMAT:
            raise DeckError(f"{source}: deck format {obj.get('deck')!r} is not {DECK_FORMAT}")
        cards = obj["cards"]
        if not isinstance(cards, dict):
            raise DeckError(f"{source}: 'cards' maps tag ids to cards")
        deck = cls(str(obj.get("name", "")))
        for key, value in cards.items():
            try:
                deck.add(parse_tag(key), parse_card(value))
            except (DeckError, CardError) as exc:
                raise DeckError(f"{source}: {key!r}: {exc}") from None
        return deck

    @classmethod
    def load(cls, path: str | Path) -> Deck:
        """Read a deck file (``.toml`` as TOML, anything else as JSON)."""
        path = Path(path)
        if path.exists() and not (path.is_file() or path.is_dir()):  # open() of a FIFO waits
            raise DeckPathError(f"{path}: not a regular file (a device or a pipe), not a deck "
                                "file")
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise DeckError(f"{path}: {exc.strerror}") from None
        except UnicodeDecodeError:
            raise DeckError(f"{path}: not a deck file (not UTF-8 text)") from None
        try:
            obj = tomllib.loads(text) if path.suffix == ".toml" else json.loads(text)
        except (tomllib.TOMLDecodeError, json.JSONDecodeError) as exc:
            kind = "TOML" if path.suffix == ".toml" else "JSON"
            raise DeckError(f"{path}: not a deck file (not {kind}: {exc})") from None
        return cls.from_json(obj, str(path))

    def dumps(self, toml: bool = False) -> str:
        """The file text, JSON or TOML."""
        if not toml:
            return json.dumps(self.to_json(), indent=1, ensure_ascii=False) + "\n"
        lines = [f"deck = {DECK_FORMAT}", f"name = {json.dumps(self.name, ensure_ascii=False)}",
                 "", "[cards]"]
        lines += [f'"{tag_text(t)}" = "{c}"' for t, c in self.items()]
        return "\n".join(lines) + "\n"

    def save(self, path: str | Path) -> None:
        """Write the file atomically (a crash leaves the old file or the new one).

        :class:`DeckPathError` (also an ``OSError``) when something other than a regular
        file is at ``path``: a device node or a FIFO is never replaced by a deck file."""
        path = Path(path)
        try:
            mode = path.stat().st_mode  # through a symlink: what it points at is what counts
        except FileNotFoundError:
            mode = None
        except OSError as exc:
            raise DeckPathError(f"{path}: {exc.strerror}") from None
        if mode is not None and not stat.S_ISREG(mode):
            why = "not a regular file (a device, a FIFO or a folder); nothing is written over it"
            err = DeckPathError(f"{path}: {why}")
            err.strerror = why  # what callers that say the path themselves print
            raise err
        # A fresh name opened exclusively: never a node or a file that was there already.
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
        except OSError as exc:  # the folder's fault, not the file's (/proc, a missing folder)
            why = f"no file can be made in {path.parent} ({exc.strerror})"
            err = DeckPathError(f"{path}: {why}")
            err.errno, err.strerror = exc.errno, why
            raise err from None
        try:
            with open(fd, "w", encoding="utf-8") as f:
                f.write(self.dumps(toml=path.suffix == ".toml"))
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise


def synthetic_deck(seed: int = 0, name: str = "synthetic") -> Deck:
    """A complete deck with made-up 7-byte NFC-style tag ids (for the emulator and tests)."""
    deck = Deck(name)
    for card in full_deck():
        digest = hashlib.sha256(f"{seed}:{card}".encode()).digest()
        deck.add(b"\x04" + digest[:6], card)
    return deck


# --------------------------------------------------------------------------------------------
# Enrollment








# --------------------------------------------------------------------------------------------
# The session on a board














# --------------------------------------------------------------------------------------------
# CLI












def iter_tags(deck: Deck, cards: Iterable[Card]) -> list[bytes]:
    """The tags of ``cards`` (``KeyError`` for one not enrolled)."""
    out = []
    for card in cards:
        tag = deck.tag_for(card)
        if tag is None:
            raise KeyError(f"{card} has no tag in the deck")
        out.append(tag)
    return out
