"""Files the table rewrites whole (``table.toml``, a corrected journal): a file holds its new
text whole or its old one, whatever stops the writing (a full disk, a kill, a power cut)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from pathlib import Path

__all__ = ["write_whole"]


def write_whole(path: Path, data: str | bytes, *, mode: int | None = None) -> None:
    """``path`` holds ``data`` whole, or is left as it was: a spare file of its own beside it
    (two writers never share one), synced, renamed over it, and the new name synced. The
    file keeps its mode (a new one is readable by all), or gets ``mode`` where it is given,
    before it takes the name: a private file is never readable by others, not for a moment."""
    try:
        fd, spare = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as exc:  # the folder's fault: say so, not "no such file" of the file itself
        raise OSError(exc.errno, f"no file can be made in {path.parent} ({exc.strerror})",
                      str(path)) from None
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data.encode("utf-8") if isinstance(data, str) else data)
            fh.flush()
            os.fsync(fh.fileno())
        if mode is None:
            try:
                mode = os.stat(path).st_mode & 0o777
            except FileNotFoundError:
                mode = 0o644
        os.chmod(spare, mode)
        os.replace(spare, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(spare)
        raise
    with contextlib.suppress(OSError):  # the new name on the disk too
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY)
        try:
            os.fsync(folder)
        finally:
            os.close(folder)
