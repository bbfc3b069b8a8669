"""The table program's errors, members of the one family (:class:`referee.errors.RefereeError`),
and the one classification of what stops ``referee run`` from starting (:func:`startup_failure`).
"""

from __future__ import annotations

import errno

from cardtable.i18n import Words
from referee.errors import ConfigError, RefereeError

__all__ = ["CommandError", "ConfigError", "EdgeError", "NotWritten", "PERMANENT_ERRNOS", "Refused",
           "TableBusyError", "TemporaryFailure", "startup_failure"]


class CommandError(RefereeError, RuntimeError):
    """An error meant for the person at the terminal: printed without a traceback; the command
    exits with :attr:`exit_status` (2: fix the command line or the configuration). A
    :class:`RuntimeError`: the command could not do what was asked; what stopped it (a bad
    value, a file, a missing package) is told in its words, not its type (a
    :class:`TemporaryFailure` is one too)."""

    exit_status = 2


class TemporaryFailure(CommandError):
    """A failure that may pass by itself (the journal folder is busy or not writable yet, a
    device not ready): exit status 75 (EX_TEMPFAIL), which systemd's ``Restart=`` retries."""

    exit_status = 75


class EdgeError(RefereeError, RuntimeError):
    """An edge (GPIO pads, the board, the console, the feed) could not start; its
    ``__cause__`` is what stopped it."""


class OtherGameError(RefereeError, ValueError):
    """The journal folder holds an unfinished game that is not the configured one, and the
    table cannot go on with it as configured (another number of seats wired)."""


class PairingRefused(RefereeError, PermissionError):
    """A phone that may not pair (a wrong code, too many tries, an old pairing link), or an
    operator page request without a paired session: the message says why, in words (of any
    language, :attr:`words`, when it is given :class:`~cardtable.i18n.Words`)."""

    def __init__(self, words: Words | str) -> None:
        super().__init__(str(words))
        self.words = words if isinstance(words, Words) else None


class Refused(RefereeError, ValueError):
    """The table refuses what an operator asked (the next round while one is played, a line
    that is not a card): :attr:`words` say why in any language
    (:class:`cardtable.i18n.Words`); the message is their English."""

    def __init__(self, words: Words) -> None:
        super().__init__(str(words))
        self.words = words


class NotWritten(RefereeError, OSError):
    """A file the table could not write: :attr:`words` say which and why in any language
    (the message is their English), :attr:`errno` is the system's."""

    def __init__(self, words: Words, number: int | None = None) -> None:
        super().__init__(str(words))
        self.words = words
        self.errno = number


class TableBusyError(RefereeError, RuntimeError):
    """Another referee holds the journal folder: a temporary failure, worth a retry later."""


#: The ``errno`` values of an :class:`OSError` at start that no waiting can mend: a path that
#: names a file where a folder must be (or the other way round), or cannot be a path at all.
#: Every other one (permission denied, busy, no such device or file yet, a full, read-only or
#: failing disk) may be the boot still going on: udev has not yet given ``/dev/gpiochip*`` to
#: the group ``gpio``, a drive is not mounted yet, another program still holds a GPIO line.
PERMANENT_ERRNOS = frozenset({errno.ENOTDIR, errno.EISDIR, errno.EEXIST, errno.ENAMETOOLONG,
                              errno.ELOOP, errno.EINVAL})


#: The ``errno`` values of a write a disk refused that may pass (a full, read-only or failing
#: disk): a command that meets one says so with 75; any other refusal is a mistake to fix (2).
DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EIO, errno.EROFS})


def refused_write(text: str, exc: OSError) -> CommandError:
    """``text`` (what could not be written, and why) as the failure ``exc`` makes it: one that
    may pass where the disk is full, read-only or failing (:data:`DISK_ERRNOS`), else one to
    fix."""
    return TemporaryFailure(text) if exc.errno in DISK_ERRNOS else CommandError(text)


def startup_failure(exc: BaseException, where: str = "") -> CommandError:
    """What an exception that stopped ``referee run`` from starting means for its exit status:
    a :class:`CommandError` (2, which the systemd unit never restarts) for what only a person
    can fix — the configuration, a missing package, a path that cannot be a folder — or a
    :class:`TemporaryFailure` (75, restarted a second later) for what may pass by itself.

    ======================================================  ======
    the failure                                              status
    ======================================================  ======
    a configuration error (:class:`ConfigError`, a bad value)  2
    a package that is not installed (``ImportError``)          2
    an ``OSError`` whose errno is in :data:`PERMANENT_ERRNOS`  2
    any other ``OSError``: the GPIO chip cannot be opened,     75
    permission denied, GPIO busy, lgpio's ``.lgd-nfy`` FIFO
    missing, the journal folder cannot be made, a full or
    read-only disk
    another referee holds the journal folder                   75
    an edge that could not start: what its cause is            —
    ======================================================  ======

    ``where`` (e.g. ``"table.toml: table.journal_dir: cannot use /x"``) is put before the
    reason of an ``OSError``. Anything else is a bug and is raised again, for the command line
    to report as one (exit 70, which the unit restarts too).
    """
    if isinstance(exc, CommandError):
        return exc
    if isinstance(exc, EdgeError) and exc.__cause__ is not None:
        try:
            inner = startup_failure(exc.__cause__)
        except Exception:
            raise exc from exc.__cause__
        return type(inner)(str(exc))
    if isinstance(exc, TableBusyError):
        return TemporaryFailure(str(exc))
    if isinstance(exc, OSError):
        reason = exc.strerror or str(exc)
        if isinstance(exc, RefereeError):  # an edge's own words (hardware.pins.GpioUnavailable)
            reason = str(exc)
        elif exc.filename and where and str(exc.filename) not in where:
            reason = f"{exc.filename}: {reason}"  # the file in the folder that is wrong
        text = f"{where}: {reason}" if where else reason
        if exc.errno in PERMANENT_ERRNOS:
            return CommandError(text)
        return TemporaryFailure(text)
    if isinstance(exc, ImportError):
        return CommandError(f"{exc} (a package is missing: see docs/install.md)")
    if isinstance(exc, (ConfigError, ValueError)):
        return CommandError(str(exc))
    raise exc
