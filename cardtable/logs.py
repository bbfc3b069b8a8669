"""Where ``referee run`` logs, and how: a terminal, a log file, or systemd's journal.

Under systemd, standard error is a stream to journald, which stamps each line with the time
and files it at the priority of a ``<N>`` prefix (``sd-daemon(3)``: 3 error, 4 warning,
6 info, 7 debug), or at ``info`` without one. So when ``JOURNAL_STREAM`` names the stream that
standard error is (``systemd.exec(5)``: compare its device and inode), every line is written
as ``<N>logger LEVEL message`` without a time of its own, and ``journalctl -p warning`` finds
the warnings. On a terminal or in a file nothing changes.
"""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import TextIO

#: The syslog priority of each logging level (the highest level at or below a record's).
SYSLOG_PRIORITY = ((logging.CRITICAL, 2), (logging.ERROR, 3), (logging.WARNING, 4),
                   (logging.INFO, 6))


def syslog_priority(levelno: int) -> int:
    """The ``sd-daemon`` priority of a logging level: 2 critical, 3 error, 4 warning, 6 info,
    7 debug."""
    return next((prio for level, prio in SYSLOG_PRIORITY if levelno >= level), 7)


def to_journal(stream: TextIO | None = None) -> bool:
    """True when ``stream`` (standard error by default) is systemd's journal stream, as
    ``JOURNAL_STREAM`` (``<device>:<inode>``) says."""
    value = os.environ.get("JOURNAL_STREAM", "")
    device, _, inode = value.partition(":")
    if not (device.isdecimal() and inode.isdecimal()):
        return False
    try:
        info = os.fstat((stream or sys.stderr).fileno())
    except (OSError, ValueError, AttributeError):
        return False
    return (info.st_dev, info.st_ino) == (int(device), int(inode))


class JournalFormatter(logging.Formatter):
    """``<N>`` before every line of a record (a traceback too), and no time: journald has it."""

    def __init__(self) -> None:
        super().__init__("%(name)s %(levelname)s %(message)s")

    def format(self, record: logging.LogRecord) -> str:
        """The record, each of its lines at the record's priority."""
        prefix = f"<{syslog_priority(record.levelno)}>"
        return "\n".join(prefix + line for line in super().format(record).splitlines())


def error_line(text: str, stream: TextIO | None = None) -> str:
    """``text`` as the command line prints an error on standard error: with ``<3>`` before
    each line under systemd, as it is otherwise."""
    if not to_journal(stream):
        return text
    return "\n".join(f"<3>{line}" for line in text.splitlines())


def setup_logging(journal_dir: Path, verbose: bool, *, terminal: bool) -> None:
    """Log records to standard error (journald under systemd, with priorities); with the console
    on a terminal, the person there reads verdicts in plain words instead, so the records go to
    ``<journal_dir>/referee.log`` and only warnings reach the terminal, as one short line."""
    level = logging.DEBUG if verbose else logging.INFO
    full = logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s")
    root = logging.getLogger()
    root.setLevel(level)
    logging.captureWarnings(True)  # gpiozero's warnings too, at their priority
    if not terminal:
        handler = logging.StreamHandler()
        handler.setFormatter(JournalFormatter() if to_journal(handler.stream) else full)
        root.addHandler(handler)
        return
    short = logging.StreamHandler()
    short.setLevel(logging.WARNING)
    short.setFormatter(logging.Formatter("referee: %(message)s"))
    root.addHandler(short)
    try:
        journal_dir.mkdir(parents=True, exist_ok=True)
        to_file = logging.FileHandler(journal_dir / "referee.log", encoding="utf-8")
    except OSError:
        return  # the journal folder's own trouble is reported when the game opens
    to_file.setFormatter(full)
    root.addHandler(to_file)
