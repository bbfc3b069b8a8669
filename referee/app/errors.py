"""The table program's errors, members of the one family (:class:`referee.errors.RefereeError`)."""

from __future__ import annotations

from referee.errors import ConfigError, RefereeError

__all__ = ["CommandError", "ConfigError", "EdgeError"]


class CommandError(RefereeError):
    """An error meant for the person at the terminal: printed without a traceback, exit 2."""


class EdgeError(RefereeError, RuntimeError):
    """An edge (GPIO pads, the board, the console, the feed) could not start."""
