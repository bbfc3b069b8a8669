"""``referee run``: referee a real table from its configuration; and ``referee console``:
steer a running one through its console socket."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import errno
import logging
import signal
import sys
from pathlib import Path
from typing import Any

from referee.app.clash import clash_message, live_referee
from referee.app.config import load_config
from referee.app.console import console_client
from referee.app.errors import (
    CommandError,
    ConfigError,
    EdgeError,
    TableBusyError,
    TemporaryFailure,
)
from referee.app.feed import resolve_broker
from referee.app.wiring import build_service

#: Errors of the journal folder that a person must fix in the configuration (exit 2); any other
#: (a full or read-only disk, an I/O error) may pass and is a temporary failure (exit 75).
_CONFIG_ERRNOS = frozenset({errno.EACCES, errno.EPERM, errno.ENOTDIR, errno.EEXIST,
                            errno.ENAMETOOLONG, errno.ELOOP})


def _logging(journal_dir: Path, verbose: bool, *, terminal: bool) -> None:
    """Log records to standard error (journald under systemd); with the console on a terminal,
    the person there reads verdicts in plain words instead, so the records go to
    ``<journal_dir>/referee.log`` and only warnings reach the terminal, as one short line."""
    level = logging.DEBUG if verbose else logging.INFO
    full = logging.Formatter("%(asctime)s %(name)s %(levelname)s %(message)s")
    root = logging.getLogger()
    root.setLevel(level)
    if not terminal:
        handler = logging.StreamHandler()
        handler.setFormatter(full)
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


def _cmd_run(args: argparse.Namespace) -> int:
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    _logging(config.journal_dir, args.verbose,
             terminal=not args.no_console and sys.stdin.isatty())
    if config.card_source == "console" and args.no_console:
        raise CommandError(f"{config.path}: table.card_source: \"console\" needs the console "
                           "(leave out --no-console, or use \"board\" or \"virtual\")")
    def early_stop(signum: int, frame: Any) -> None:
        raise SystemExit(0)  # before the loop runs: every journal line is already on disk

    if config.broker is not None:
        broker = resolve_broker(config.broker.url, config.broker.username,
                                config.broker.password)
        live = asyncio.run(live_referee(broker, config.table_id))
        if live is not None:
            raise TemporaryFailure(clash_message(live, broker))
    previous = signal.signal(signal.SIGTERM, early_stop)
    try:
        try:
            service = build_service(config, console=not args.no_console)
            service.open_game()
        except TableBusyError as exc:
            raise TemporaryFailure(str(exc)) from None
        except (ConfigError, ValueError) as exc:
            raise CommandError(str(exc)) from None
        except OSError as exc:
            where = (f"{config.path}: table.journal_dir: cannot use {config.journal_dir}: "
                     f"{exc.strerror or exc}")
            if exc.errno in _CONFIG_ERRNOS:
                raise CommandError(where) from None
            raise TemporaryFailure(where) from None

        async def serve() -> None:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(NotImplementedError):
                    loop.add_signal_handler(sig, service.stop)
            await service.run()

        try:
            asyncio.run(serve())
        except EdgeError as exc:
            raise CommandError(str(exc)) from None
    finally:
        signal.signal(signal.SIGTERM, previous)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` subcommand."""
    p = sub.add_parser(
        "run", help="referee a real table from its configuration",
        description="Referee a real table: slap and call buttons on GPIO, cards from the "
        "serial board, typed at the console or dealt by a virtual deck, the game published "
        "to MQTT. Every input is journaled and synced to disk before it is judged; after a "
        "crash or power cut the same command resumes the game where it was.",
    )
    p.add_argument("--config", required=True, help="the table's TOML configuration file")
    p.add_argument("--no-console", action="store_true",
                   help="do not read typed inputs and operator commands from standard input")
    p.add_argument("--verbose", "-v", action="store_true", help="log debugging detail")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser(
        "console", help="the operator console of a running referee (over its socket)",
        description="Send operator commands and typed inputs to a referee that runs as a "
        "service ([table] console_socket in its configuration), and print its replies. "
        "Without COMMAND, reads lines from standard input. Type 'help' for the commands.",
    )
    p.add_argument("--socket", required=True, help="the referee's console socket")
    p.add_argument("command", nargs="*", help="one console line, e.g. pause, or 'lay 1 QH'")
    p.set_defaults(func=_cmd_console)


def _cmd_console(args: argparse.Namespace) -> int:
    try:
        return console_client(args.socket, [" ".join(args.command)] if args.command else [])
    except OSError as exc:
        raise CommandError(f"cannot reach the referee at {args.socket}: {exc.strerror or exc} "
                           "(is it running, with [table] console_socket set?)") from None
