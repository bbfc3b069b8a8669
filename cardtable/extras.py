"""The optional extras of the install, and what to say when one is missing.

A command that needs an extra asks :func:`require` before it starts; :func:`missing_extra`
names the extra behind a ``ModuleNotFoundError`` that slipped past (the command line's last
resort), so that a missing package is always one line saying what to install, exit status 2,
never "unexpected error".
"""

from __future__ import annotations

import importlib.util

from cardtable.errors import CommandError

#: Each extra: the modules it brings (by import name) and what they are, in words.
EXTRAS: dict[str, tuple[tuple[str, ...], str]] = {
    "camera": (("cv2", "numpy"), "OpenCV and numpy"),
    "analyse": (("matplotlib",), "matplotlib"),
    "pi": (("lgpio",), "lgpio"),
}


def install_hint(extra: str) -> str:
    """How to install ``extra``, from PyPI and from a checkout of the project."""
    return (f"python3 -m pip install 'card-referee[{extra}]' (from a checkout of the project: "
            f"python3 -m pip install -e '.[{extra}]')")


def extra_message(extra: str, what: str) -> str:
    """``what`` needs ``extra``, which is not installed: the one line to print."""
    _modules, words = EXTRAS[extra]
    return (f"{what} needs the {extra} extra ({words}), which is not installed: "
            f"{install_hint(extra)}")


def require(extra: str, what: str) -> None:
    """Raise :class:`CommandError` (exit 2) naming how to install ``extra`` when any of its
    modules is missing; ``what`` is what needs it (``referee camera read``)."""
    modules, _words = EXTRAS[extra]
    if any(importlib.util.find_spec(m) is None for m in modules):
        raise CommandError(extra_message(extra, what))


def missing_extra(exc: ImportError) -> str | None:
    """The extra whose module ``exc`` failed to import, or None when it is none of theirs."""
    name = (exc.name or "").partition(".")[0]
    return next((extra for extra, (modules, _w) in EXTRAS.items() if name in modules), None)
