"""One referee per journal folder: an exclusive lock held for the whole run.

Two referees appending to one folder interleave two games in one journal (and the second would
replace the first's console socket). The lock is ``fcntl.flock`` on ``<journal_dir>/.lock``: the
kernel releases it when the process ends, however it ends, so a crash or ``kill -9`` never
leaves a stale lock behind. The file holds the PID of the referee that holds the lock, so the
second one can say who is in the way. The folder itself is locked too: a ``.lock`` deleted
while a referee runs (a folder "cleaned" by hand) had let a second referee take the folder and
archive the first one's journal under it.
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
        self._folder_fd: int | None = None

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
        folder_fd: int | None = None
        try:
            folder_fd = self._lock_folder()
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
            if folder_fd is not None:
                os.close(folder_fd)
            raise
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"{os.getpid()}\n".encode(), 0)
        self._fd, self._folder_fd = fd, folder_fd

    def _lock_folder(self) -> int | None:
        """The folder's own lock (its descriptor), or None where the file system locks no
        folder (the ``.lock`` file's lock is then the only one); BlockingIOError when held."""
        try:
            folder_fd = os.open(self.folder, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            fcntl.flock(folder_fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(folder_fd)
            raise
        except OSError:
            os.close(folder_fd)
            return None
        return folder_fd

    def release(self) -> None:
        """Let the lock go (the end of the process does the same)."""
        for fd in (self._fd, self._folder_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._fd = self._folder_fd = None
