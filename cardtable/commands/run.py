"""``referee run``: referee a real table from its configuration; and ``referee console``:
steer a running one through its console socket."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import errno
import logging
import signal
import sys
import tempfile
from pathlib import Path
from typing import Any

from cardtable.clash import clash_message, live_referee
from cardtable.commands.argtypes import add_web_options, path_name
from cardtable.config import load_config
from cardtable.console import console_client
from cardtable.errors import CommandError, ConfigError, TemporaryFailure, startup_failure
from cardtable.feed import resolve_broker
from cardtable.logs import setup_logging
from cardtable.wiring import build_service
from referee.errors import visible


def _setup(args: argparse.Namespace) -> int | None:
    """The set-up wizard (``--setup``, or no configuration file yet): served until the page
    saves the file (None), or the exit status when it could not be served (said already):
    75 where the address is in use (that may pass: the systemd unit restarts), else 2."""
    from cardtable.config import set_up_place
    from cardtable.operator.wizard import SetupSite

    path = Path(args.config)
    if not path.parent.is_dir():
        raise CommandError(f"{path}: its folder {path.parent} does not exist")
    if args.no_web:
        raise CommandError("the set-up wizard is a web page: leave out --no-web (or write "
                           f"{path} by hand: docs/install.md)")
    try:  # a wizard that could never save is not served (/proc/table.toml)
        with tempfile.TemporaryFile(dir=path.parent):
            pass
    except OSError as exc:
        raise CommandError(f"{path}: no file can be made in {path.parent} "
                           f"({exc.strerror or exc}), so the set-up wizard could not save "
                           "it") from None
    # The wizard's own lines; the table's logging is set up once it runs.
    handler = logging.StreamHandler()
    handler.setFormatter(logging.Formatter("%(message)s"))
    root = logging.getLogger()
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    if not path.exists():
        others = sorted(p.name for p in path.parent.glob("*.toml"))[:3]
        print(f"referee run: {path} does not exist yet: set the table up from a browser "
              "(or write the file by hand: docs/install.md)"
              + (f"; beside it: {', '.join(others)} (--config one of them, if it was meant)"
                 if others else ""), flush=True)
    # the file's [web] and journal folder, where it has them: a table set up again serves
    # where it always does, and its paired phones stay paired
    web, journal_dir, passed_over = set_up_place(path)
    if passed_over is not None:
        print(f"referee run: {passed_over}: the set-up wizard serves on {web.bind}:{web.port}",
              flush=True)
    site = SetupSite(path, host=args.bind or web.bind,
                     port=web.port if args.port is None else args.port, hosts=web.hosts,
                     journal_dir=journal_dir, announce=lambda text: print(text, flush=True))
    try:
        saved = asyncio.run(site.run())
    finally:
        root.removeHandler(handler)
    if saved is None:
        return TemporaryFailure.exit_status if site.error_errno == errno.EADDRINUSE else 2
    if args.port == 0:  # the table serves where the wizard was
        args.port = site.server.port
    return None


def _check(args: argparse.Namespace) -> int:
    """``--check``: the file read as ``referee run`` reads it, no device touched."""
    from cardtable.wiring import check_config

    if args.setup:
        raise CommandError("--check and --setup cannot be given together")
    try:
        lines = check_config(load_config(args.config))
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    print(f"{visible(str(args.config))}: fine")
    for line in lines:  # paths are the file's own, escapes and all: shown, not obeyed
        print(f"  {visible(line)}")
    return 0


def _cmd_run(args: argparse.Namespace) -> int:
    if args.check:
        return _check(args)
    if args.setup or not Path(args.config).exists():
        try:
            failed = _setup(args)
            if failed is not None:
                return failed
        except KeyboardInterrupt:
            return 0
    try:
        config = load_config(args.config)
    except ConfigError as exc:
        raise CommandError(str(exc)) from None
    setup_logging(config.journal_dir, args.verbose,
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
    # SIGINT too: the unit stops the referee with it, and a stop while it starts is a stop.
    previous = {sig: signal.signal(sig, early_stop) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        if args.bind is not None or args.port is not None:
            config = dataclasses.replace(config, web=dataclasses.replace(
                config.web, bind=config.web.bind if args.bind is None else args.bind,
                port=config.web.port if args.port is None else args.port))
        try:
            in_the_way = config.journal_dir.exists() and not config.journal_dir.is_dir()
        except OSError:  # cannot be looked at: open_game says what is wrong with it
            in_the_way = False
        if in_the_way:
            # said before the pairing file and the journal each say "File exists" of it
            raise CommandError(f"{config.path}: table.journal_dir: {config.journal_dir} is a "
                               "file, not a folder")
        try:
            service = build_service(config, console=not args.no_console,
                                    web=not args.no_web,
                                    announce=print if sys.stdout.isatty() else None)
        except Exception as exc:  # the GPIO, the deck file, the pin map: one classification
            raise startup_failure(exc) from None
        try:
            service.open_game(other_game="new" if args.new_game else "resume")
        except Exception as exc:  # the journal folder: busy, not a folder, a full disk …
            raise startup_failure(exc, f"{config.path}: table.journal_dir: cannot use "
                                  f"{config.journal_dir}") from None

        # From here on a stop must not raise: SystemExit thrown into asyncio while it builds
        # its loop leaves a half-made loop whose __del__ fails at exit ("Exception ignored in
        # BaseEventLoop.__del__ ... no attribute '_signal_handlers'"), and thrown out of the
        # loop's first callback it loses the task's first step, so asyncio.run never returns.
        # The stop is noted instead, and taken once the loop's own handlers are in place.
        stopping: list[int] = []

        def stop_soon(signum: int, frame: Any) -> None:
            stopping.append(signum)

        for sig in previous:
            signal.signal(sig, stop_soon)

        async def serve() -> None:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGTERM, signal.SIGINT):
                with contextlib.suppress(NotImplementedError):
                    loop.add_signal_handler(sig, service.stop)
            # signal.signal runs a pending handler before it replaces it: a stop that came
            # before the loop took the signals is in ``stopping`` now.
            if stopping:  # a stop while it starts is a stop: nothing was judged yet
                service.close()
                return
            await service.run()

        try:
            asyncio.run(serve())
        except Exception as exc:  # an edge that could not start (GPIO busy, …)
            raise startup_failure(exc) from None
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    return 0


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``run`` subcommand."""
    p = sub.add_parser(
        "run", help="referee a real table from its configuration",
        description="Referee a real table: slap and call buttons on GPIO, cards from the "
        "serial board, typed at the console or dealt by a virtual deck, the game published "
        "to MQTT. Every input is journaled and synced to disk before it is judged; after a "
        "crash or power cut the same command resumes the game where it was.",
        epilog="Exit status: 0 stopped; 2 a mistake to fix (the configuration, lgpio not "
        "installed, a gpiochip the installed gpiozero ignores), which the systemd unit does "
        "not restart; 75 a failure that may pass (the GPIO chip not ready or not allowed yet, "
        "a GPIO line busy, lgpio's FIFO, the journal folder busy or its disk full, the set-up "
        "wizard's address in use), which it restarts; 70 a bug. Under systemd "
        "(JOURNAL_STREAM) log lines carry syslog priorities.",
    )
    p.add_argument("--config", required=True, type=path_name,
                   help="the table's TOML configuration file")
    p.add_argument("--no-console", action="store_true",
                   help="do not read typed inputs and operator commands from standard input")
    p.add_argument("--new-game", action="store_true",
                   help="when the journal folder holds an unfinished game of another kind or "
                   "other seats than the configuration's, archive it under its own name and "
                   "deal the configured game (without it, that game goes on under its own name)")
    p.add_argument("--setup", action="store_true",
                   help="set the table up from a browser first (the wizard at /setup/, also "
                   "served when the configuration file does not exist yet): the table's name, "
                   "players, pads learned by pressing them, the card source; writes the file "
                   "(the one before is kept as FILE.previous) and starts the table")
    p.add_argument("--check", action="store_true",
                   help="check the configuration as the table would read it (the pin map, the "
                   "deck files, the camera's extra), say what it would start with, and exit: "
                   "0 fine, 2 with what is wrong; opens no GPIO chip, port, camera, broker or "
                   "journal")
    p.add_argument("--no-web", action="store_true",
                   help="do not serve the table's web pages (its display at / and the operator "
                   "page at /operator/; [web] in the configuration, docs/operator.md)")
    add_web_options(p, "instead of [web]'s")
    p.add_argument("--verbose", "-v", action="store_true", help="log debugging detail")
    p.set_defaults(func=_cmd_run)

    p = sub.add_parser(
        "console", help="the operator console of a running referee (over its socket)",
        description="Send operator commands and typed inputs to a referee that runs as a "
        "service ([table] console_socket in its configuration), and print its replies. "
        "Without COMMAND, reads lines from standard input. Type 'help' for the commands.",
    )
    p.add_argument("--socket", required=True, type=path_name, help="the referee's console socket")
    p.add_argument("command", nargs="*", help="one console line, e.g. pause, or 'lay 1 QH'")
    p.set_defaults(func=_cmd_console)


def _cmd_console(args: argparse.Namespace) -> int:
    where = Path(args.socket)
    if where.exists() and not where.is_socket():  # "Connection refused" had said nothing
        raise CommandError(f"{args.socket} is not the referee's console socket (a "
                           f"{'folder' if where.is_dir() else 'file'}): [table] console_socket "
                           "names it") from None
    try:
        return console_client(args.socket, [" ".join(args.command)] if args.command else [])
    except OSError as exc:
        raise CommandError(f"cannot reach the referee at {args.socket}: {exc.strerror or exc} "
                           "(is it running, with [table] console_socket set?)") from None
