"""What the link hands to the referee: board events on the table clock, and link status.

A :class:`BoardEvent` is a card read or a button edge with ``t`` in nanoseconds on the table
clock (``time.monotonic_ns()`` of the Pi), mapped from the board's own microsecond ticks by the
clock sync. The service turns it into a journal :class:`~referee.model.Input` (it knows which
reader and which button belong to which seat): :meth:`BoardEvent.to_input` helps.

:class:`LinkStatus` says the board went away (``board_offline``: the referee pauses, the feed
says so) or came back (``board_online``); :class:`LinkHealth` says the serial line is too
damaged to use (``board_link_unusable``, which also takes the board offline) or usable again
(``board_link_usable``); :class:`BoardError` carries an ERROR from the board, or a frame the
host refused on its content.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from referee.cards import Card
from referee.model import Act, Input


@dataclass(frozen=True, slots=True)
class BoardInfo:
    """What the board said about itself in its HELLO."""

    boot_id: int
    version: int
    readers: int
    buttons: int
    seats: int
    name: str


@dataclass(frozen=True, slots=True)
class BoardEvent:
    """A card read (``kind == "card"``) or a button edge (``kind == "button"``).

    ``t``: table-clock nanoseconds of the event; ``error_ns``: the clock sync's error bound at
    that instant; ``ticks``: the board's raw 32-bit microsecond count; ``seq``: the board's
    sequence number of the frame (each one is delivered exactly once). A card read carries
    ``reader``, ``tag`` and ``card`` (``None`` when the tag is not in the deck); a button edge
    carries ``button`` and ``pressed`` (``True`` for the press, ``False`` for the release).
    """

    kind: Literal["card", "button"]
    t: int
    ticks: int
    error_ns: int = 0
    seq: int = 0
    reader: int | None = None
    tag: bytes | None = None
    card: Card | None = None
    button: int | None = None
    pressed: bool | None = None

    def to_input(self, seat: int, act: Act | None = None) -> Input:
        """The journal input for this event at ``seat``: by default a card read is a ``lay``
        of its card and a button press a ``slap``. Raises ``ValueError`` for a card read whose
        tag is not in the deck with an act that needs the card (``play``)."""
        if self.kind == "card":
            act = act or "lay"
            if act == "play":
                if self.card is None:
                    raise ValueError(f"tag {self.tag_hex} is not in the deck")
                return Input(t=self.t, seat=seat, act=act, cards=(self.card,))
            return Input(t=self.t, seat=seat, act=act, card=self.card)
        return Input(t=self.t, seat=seat, act=act or "slap")

    @property
    def tag_hex(self) -> str:
        """The tag id in upper-case hex (empty for a button)."""
        return self.tag.hex().upper() if self.tag else ""

    def describe(self) -> str:
        """One line for a person."""
        if self.kind == "card":
            what = str(self.card) if self.card is not None else "unknown tag"
            return f"reader {self.reader}: {what} ({self.tag_hex}) at t={self.t}"
        edge = "pressed" if self.pressed else "released"
        return f"button {self.button} {edge} at t={self.t}"


@dataclass(frozen=True, slots=True)
class LinkStatus:
    """``board_online`` or ``board_offline``, detected at host time ``t``, and why."""

    kind: Literal["board_online", "board_offline"]
    t: int
    reason: str
    board: BoardInfo | None = None


@dataclass(frozen=True, slots=True)
class LinkHealth:
    """The serial line became unusable (``board_link_unusable``: most of what arrived over the
    last seconds was damaged; the board goes offline until it is better) or usable again
    (``board_link_usable``), at host time ``t``. ``damaged`` of ``frames`` over the window the
    rule looks at (docs/protocol.md §5); ``reason`` says it in words."""

    kind: Literal["board_link_unusable", "board_link_usable"]
    t: int
    reason: str
    damaged: int
    frames: int


@dataclass(frozen=True, slots=True)
class BoardError:
    """An ERROR the board sent (``code`` from :class:`~firmware_bridge.protocol.ErrorCode`),
    or a problem found by the host: a version mismatch, or a frame with a good CRC that it
    refused on its content (an unknown type, a payload that does not fit, a reader or button
    the board does not have)."""

    code: int
    text: str
    t: int


LinkEvent = BoardEvent | LinkStatus | LinkHealth | BoardError
