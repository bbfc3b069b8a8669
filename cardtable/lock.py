"""One referee per journal folder: an exclusive lock held for the whole run.

Two referees appending to one folder interleave two games in one journal (and the second would
replace the first's console socket). The lock is ``fcntl.flock`` on ``<journal_dir>/.lock``: the
kernel releases it when the process ends, however it ends, so a crash or ``kill -9`` never
leaves a stale lock behind. The file holds the PID of the referee that holds the lock, so the
second one can say who is in the way.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from pathlib import Path

from cardtable.errors import TableBusyError

LOCK_NAME = ".lock"


class FolderLock:
    """The exclusive lock of one journal folder (see the module docstring)."""

    def __init__(self, folder: str | os.PathLike[str]) -> None:
        self.folder = Path(folder)
        self.path = self.folder / LOCK_NAME
        self._fd: int | None = None

    @property
    def held(self) -> bool:
        """True while this object holds the lock."""
        return self._fd is not None

    def acquire(self) -> None:
        """Take the lock at once, or raise :class:`TableBusyError` naming the folder and the
        PID that holds it."""
        if self._fd is not None:
            return
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            holder = os.pread(fd, 32, 0).decode(errors="replace").strip() or "unknown"
            os.close(fd)
            raise TableBusyError(
                f"the journal folder {self.folder} is in use by another referee (PID {holder}); "
                "stop that one first, or give this one its own folder (table.journal_dir)"
            ) from None
        except OSError:
            os.close(fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        """Let the lock go (the end of the process does the same)."""
        if self._fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._fd)
            self._fd = None
