"""Every exception class of the project is in the one family (``referee/errors.py``,
docs/design.md "Pieces and where they live"): a :class:`referee.errors.RefereeError` that also
inherits the built-in it stands for (``ValueError``, ``OSError``, ``RuntimeError``, …), so
``except RefereeError`` catches all of them and ``except ValueError`` still works.

The check walks every module of the four installed packages, so a new module or a new class
cannot slip past; a module that needs an optional package which is not installed is left out
(and named when the check fails), any other import failure fails the walk.
"""

from __future__ import annotations

import builtins
import functools
import importlib
import pkgutil
import traceback
from collections.abc import Iterable
from types import ModuleType

import pytest

from cardtable.display.check import Unreadable
from cardtable.errors import CommandError, TemporaryFailure, startup_failure
from firmware_bridge.clock import NotSynced
from firmware_bridge.deck import DeckError
from firmware_bridge.emulator import ScriptError
from firmware_bridge.protocol import CobsError, PayloadError
from referee.errors import RefereeError

PACKAGES = ("referee", "hardware", "firmware_bridge", "cardtable")

#: Import names of optional packages a module may need and the test machine may lack: the
#: ``pi`` and ``train`` extras and picamera2 (apt, on the Pi). The ``dev`` extra installs the
#: others (``cv2``, ``numpy``, ``matplotlib``), so a module that fails for want of them fails.
OPTIONAL = frozenset({"lgpio", "picamera2", "torch", "onnx"})

#: Built-ins that say nothing of what an error stands for.
TOO_WIDE = frozenset({BaseException, Exception})


def stands_for(cls: type[BaseException]) -> list[type[BaseException]]:
    """The built-in exceptions in ``cls``'s MRO other than ``Exception`` and
    ``BaseException``."""
    return [base for base in cls.__mro__
            if base.__module__ == "builtins" and getattr(builtins, base.__name__, None) is base
            and issubclass(base, BaseException) and base not in TOO_WIDE]


def outside_family(classes: Iterable[type[BaseException]]) -> list[str]:
    """``module.Class`` of each class that is not a :class:`RefereeError`, or is one that
    stands for no built-in (the root of the family itself excepted)."""
    return [f"{cls.__module__}.{cls.__qualname__}" for cls in classes
            if cls is not RefereeError
            and (not issubclass(cls, RefereeError) or not stands_for(cls))]


@functools.cache
def walk() -> tuple[tuple[ModuleType, ...], tuple[str, ...], tuple[str, ...]]:
    """Every module of :data:`PACKAGES`, imported: (the modules, the ones left out for an
    optional package, the ones that failed to import for any other reason)."""
    modules: list[ModuleType] = []
    skipped: list[str] = []
    failed: list[str] = []

    def take(name: str) -> None:
        try:
            modules.append(importlib.import_module(name))
        except ModuleNotFoundError as exc:
            if (exc.name or "").partition(".")[0] in OPTIONAL:
                skipped.append(f"{name} (no {exc.name})")
            else:
                failed.append(f"{name}: {traceback.format_exception_only(exc)[-1].strip()}")
        except Exception as exc:
            failed.append(f"{name}: {traceback.format_exception_only(exc)[-1].strip()}")

    def on_error(name: str) -> None:  # a package walk_packages could not import to look in
        if not any(seen.startswith((f"{name}:", f"{name} (")) for seen in skipped + failed):
            failed.append(f"{name}: could not be walked")

    for package in PACKAGES:
        take(package)
        root = importlib.import_module(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}.", onerror=on_error):
            take(info.name)
    # a package walk_packages imported itself is taken again above: one of each
    unique = {m.__name__: m for m in modules}
    return tuple(unique.values()), tuple(skipped), tuple(dict.fromkeys(failed))


def exception_classes() -> list[type[BaseException]]:
    """Every exception class defined in a walked module (not merely imported into it)."""
    modules, _, _ = walk()
    return [obj for module in modules for obj in vars(module).values()
            if isinstance(obj, type) and issubclass(obj, BaseException)
            and obj.__module__ == module.__name__]


def test_every_module_imports() -> None:
    _, skipped, failed = walk()
    assert not failed, ("modules that cannot be imported:\n  " + "\n  ".join(failed)
                        + (f"\n(left out for an optional package: {', '.join(skipped)})"
                           if skipped else ""))


def test_every_exception_class_is_in_the_family() -> None:
    _, skipped, _ = walk()
    offenders = outside_family(exception_classes())
    assert not offenders, (
        "exception classes outside the family (make each `class X(RefereeError, TheBuiltin)` "
        "or a subclass of a family class that stands for a built-in):\n  "
        + "\n  ".join(offenders)
        + (f"\n(modules left out for an optional package: {', '.join(skipped)})"
           if skipped else ""))


def test_the_walk_finds_the_packages_and_their_errors() -> None:
    """An empty walk, or one that misses a package, cannot make the check pass."""
    modules, skipped, _ = walk()
    names = {m.__name__ for m in modules}
    assert len(names) >= 80, (sorted(names), skipped)
    assert {"referee.errors", "referee.games.vandatta", "firmware_bridge.protocol",
            "cardtable.errors", "cardtable.display.check", "hardware"} <= names
    found = {f"{c.__module__}.{c.__qualname__}" for c in exception_classes()}
    assert {"referee.errors.RefereeError", "referee.errors.CardError",
            "referee.errors.JournalWriteError", "referee.errors.ConfigError",
            "firmware_bridge.protocol.CobsError", "firmware_bridge.deck.DeckError",
            "firmware_bridge.clock.NotSynced", "cardtable.errors.CommandError",
            "cardtable.errors.TemporaryFailure", "cardtable.display.check.Unreadable"} <= found
    for package in PACKAGES:  # each floor has errors of its own (hardware: GPIO, camera)
        assert any(name.startswith(f"{package}.") for name in found), package


class XError(Exception):
    """A stranger: not in the family."""


class YError(RefereeError):
    """In the family, but standing for no built-in."""


class ZError(RefereeError, ValueError):
    """As it should be."""


class WError(ZError):
    """A family class below another: stands for ValueError through it."""


def test_the_check_catches_a_stranger() -> None:
    assert outside_family([XError, YError]) == [f"{__name__}.XError", f"{__name__}.YError"]
    assert outside_family([ZError, WError, RefereeError]) == []
    assert stands_for(WError) == [ValueError]


# -- what the family changes, and what it does not ----------------------------------------------

BROUGHT_IN_VALUE: tuple[type[RefereeError], ...] = (PayloadError, CobsError, ScriptError,
                                                    DeckError, Unreadable)
BROUGHT_IN_RUNTIME: tuple[type[RefereeError], ...] = (NotSynced, CommandError, TemporaryFailure)


def test_the_classes_brought_in_still_are_what_they_stood_for() -> None:
    for cls in BROUGHT_IN_VALUE:
        assert issubclass(cls, RefereeError) and issubclass(cls, ValueError), cls
    for cls in BROUGHT_IN_RUNTIME:
        assert issubclass(cls, RefereeError) and issubclass(cls, RuntimeError), cls
    assert (CommandError.exit_status, TemporaryFailure.exit_status) == (2, 75)


@pytest.mark.parametrize(("exc", "status"), [
    (DeckError("tag 04 is taken"), 2),
    (ScriptError("a script that cannot be read"), 2),
    (PayloadError("a short payload"), 2),
    (Unreadable("'seats' is 3, not a list"), 2),
    (CommandError("as it is"), 2),
    (TemporaryFailure("as it is"), 75),
])
def test_start_up_failures_keep_their_exit_status(exc: Exception, status: int) -> None:
    """Joining the family changes no classification of ``referee run``'s start: what a person
    must fix (a deck file, as a ValueError) is still 2, in the same words; a command's own
    errors are returned as they are."""
    outcome = startup_failure(exc)
    assert outcome.exit_status == status and str(outcome) == str(exc)


def test_not_synced_at_start_stays_a_bug() -> None:
    """NotSynced was a RuntimeError that no classification took: still raised again (the
    command line's exit 70), not made a person's mistake by being a RefereeError now."""
    with pytest.raises(NotSynced):
        startup_failure(NotSynced("no time-sync exchange with the board yet"))
