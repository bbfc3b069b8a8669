"""The ``referee`` command: replay journals, study Beggar deals, simulate games, run a table.

Each subcommand is a module of :mod:`cardtable.commands` with a ``register(subparsers)``;
this module puts them together and turns errors into one clear line and an exit status.
"""

from __future__ import annotations

import argparse
import contextlib
import difflib
import os
import sys
from collections.abc import Sequence

from cardtable.commands import (
    analyse,
    beggar,
    camera,
    deck,
    display,
    history,
    replay,
    run,
    simulate,
)
from cardtable.errors import DISK_ERRNOS, CommandError, TemporaryFailure, refused_write
from cardtable.extras import extra_message, missing_extra
from cardtable.logs import error_line
from referee import __version__
from referee.errors import JournalWriteError

#: The subcommands, in the order ``referee --help`` lists them.
COMMANDS = (replay, history, beggar, simulate, analyse, display, run, deck, camera)


def build_parser() -> argparse.ArgumentParser:
    """The full argument parser, subcommands included."""
    parser = argparse.ArgumentParser(
        prog="referee", epilog="referee --version prints the version.",
        description="A referee for physical card games: Beggar My Neighbour, Banka bäver "
        "and Vändåtta. Replays journals, simulates games, and runs a real table.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for command in COMMANDS:
        command.register(sub)
    return parser


def _innermost(parser: argparse.ArgumentParser,
               args: argparse.Namespace) -> argparse.ArgumentParser:
    """The (sub)command's own parser that ``args`` were parsed by: ``referee camera read``'s
    for ``camera read``."""
    while True:
        subs = next((a for a in parser._actions
                     if isinstance(a, argparse._SubParsersAction)), None)
        name = getattr(args, subs.dest, None) if subs is not None else None
        if subs is None or name not in subs.choices:
            return parser
        parser = subs.choices[name]


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``referee`` console script."""
    parser = build_parser()
    words = list(sys.argv[1:] if argv is None else argv)
    if words[:1] == ["beggar"]:
        words = beggar.beggar_argv(words)
    if words[:1] == ["--version"]:
        try:
            print(f"referee {__version__}", flush=True)
        except OSError as exc:  # > /dev/full: said as every command says it, not a traceback
            print(error_line(f"referee: cannot write ({exc.strerror})"), file=sys.stderr)
            return TemporaryFailure.exit_status
        return 0
    args, unknown = parser.parse_known_args(words)
    if unknown:  # said by the subcommand that was given them, with the nearest option
        command = _innermost(parser, args)
        known = [o for a in command._actions for o in a.option_strings]
        near = difflib.get_close_matches(unknown[0].split("=", 1)[0], known, n=1, cutoff=0.6)
        command.error(f"unrecognized arguments: {' '.join(unknown)}"
                      + (f" (did you mean {near[0]}?)" if near else ""))
    if _reopen_closed() and args.command != "run":
        print(error_line("referee: the output is closed, so what this command prints would be "
                         "lost: send it to a file, or to /dev/null to drop it"), file=sys.stderr)
        return CommandError.exit_status
    os.environ.setdefault("OPENCV_LOG_LEVEL", "ERROR")  # OpenCV's own WARN lines: ours say it
    for stream in (sys.stdout, sys.stderr):  # an output that cannot spell a seat's name (an
        with contextlib.suppress(AttributeError, ValueError):  # ASCII one) shows it as \u…
            stream.reconfigure(errors="backslashreplace")  # type: ignore[union-attr]
    try:
        return int(args.func(args) or 0)
    except CommandError as exc:
        print(error_line(f"referee: {exc}"), file=sys.stderr)
        return exc.exit_status
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except ImportError as exc:  # an optional extra that is not installed: say which
        extra = missing_extra(exc)
        if extra is None:
            raise
        print(error_line(f"referee: {extra_message(extra, f'referee {args.command}')}"),
              file=sys.stderr)
        return CommandError.exit_status
    except JournalWriteError as exc:  # the disk refused the journal mid-game: not a bug
        print(error_line(f"referee: {exc}"), file=sys.stderr)
        return refused_write(str(exc), exc.__cause__ if isinstance(exc.__cause__, OSError)
                             else exc).exit_status
    except OSError as exc:
        if exc.errno not in DISK_ERRNOS:
            return _bug(exc)
        # a disk that is full (the output redirected to it, a report): may pass, not a bug
        where = f" {exc.filename}" if exc.filename else ""  # the output itself has no name
        print(error_line(f"referee: cannot write{where} ({exc.strerror})"), file=sys.stderr)
        return TemporaryFailure.exit_status
    except Exception as exc:
        return _bug(exc)


def _reopen_closed() -> bool:
    """Put /dev/null on standard input, output and error where the caller closed them
    (``>&-``), so that no file this process opens (a journal) takes that number and gets what
    is printed; whether the output was closed. Python had left such a stream ``None`` and
    printed nothing, silently, or ended in "unexpected error" (``run`` asks the output whether
    it is a terminal)."""
    closed = []
    for fd in (0, 1, 2):
        try:
            os.fstat(fd)
        except OSError:
            closed.append(fd)
    for _ in closed:  # each takes the lowest free number: the one closed
        os.open(os.devnull, os.O_RDWR)
    if 1 in closed and sys.stdout is None:
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115 - for the process's life
    if 2 in closed and sys.stderr is None:
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
    return 1 in closed


def _bug(exc: BaseException) -> int:
    """A bug: one clear line; the traceback with REFEREE_DEBUG=1."""
    if os.environ.get("REFEREE_DEBUG"):
        raise exc
    print(error_line(f"referee: unexpected error ({type(exc).__name__}: {exc}); run again "
                     "with REFEREE_DEBUG=1 for the details, and please report it"),
          file=sys.stderr)
    return 70


if __name__ == "__main__":
    sys.exit(main())
