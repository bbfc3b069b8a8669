"""The table clock: the time every input at a running table is stamped with, in ns.

GPIO edges and synced board ticks arrive on CLOCK_MONOTONIC and are put on the table clock; a
resumed game's clock starts where the journal left off, so its time keeps growing across a
reboot.
"""

from __future__ import annotations

import time
from collections.abc import Callable


class TableClock:
    """The table clock in ns: CLOCK_MONOTONIC plus an offset (so a resumed game's time grows)."""

    def __init__(self, offset_ns: int = 0, source: Callable[[], int] = time.monotonic_ns) -> None:
        self.offset_ns = offset_ns
        self.source = source

    def now(self) -> int:
        """The table time now."""
        return self.source() + self.offset_ns

    def from_monotonic(self, mono_ns: int) -> int:
        """A CLOCK_MONOTONIC timestamp (a GPIO edge, a synced board tick) on the table clock."""
        return mono_ns + self.offset_ns
