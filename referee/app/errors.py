"""The table program's errors, members of the one family (:class:`referee.errors.RefereeError`)."""

from __future__ import annotations

from referee.errors import ConfigError, RefereeError

__all__ = ["CommandError", "ConfigError", "EdgeError", "TableBusyError", "TemporaryFailure"]


class CommandError(RefereeError):
    """An error meant for the person at the terminal: printed without a traceback; the command
    exits with :attr:`exit_status` (2: fix the command line or the configuration)."""

    exit_status = 2


class TemporaryFailure(CommandError):
    """A failure that may pass by itself (the journal folder is busy or not writable yet, a
    device not ready): exit status 75 (EX_TEMPFAIL), which systemd's ``Restart=`` retries."""

    exit_status = 75


class EdgeError(RefereeError, RuntimeError):
    """An edge (GPIO pads, the board, the console, the feed) could not start."""


class TableBusyError(RefereeError, RuntimeError):
    """Another referee holds the journal folder: a temporary failure, worth a retry later."""
