"""``referee display``: show a table from the MQTT feed, in the terminal or as a web page."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from cardtable.commands.argtypes import (
    add_language_option,
    ip_address,
    port_number,
    seconds_to_wait,
)
from cardtable.display.follow import follow, show_live, show_once
from cardtable.display.hall import run_hall
from cardtable.display.view import TableView
from cardtable.display.web import WebDisplay, serve_while
from cardtable.feed import BrokerAddress, Topics, resolve_broker


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``referee display``."""
    p.add_argument("--broker", metavar="URL",
                   help="broker URL, required: mqtt://user:pass@host:1883, mqtts://…, ws://…, "
                   "wss://… (password also from $CARDTABLE_MQTT_PASSWORD)")
    p.add_argument("--table", metavar="ID", help="the table id (not with --hall)")
    p.add_argument("--hall", action="store_true",
                   help="every table on the broker, one tile each (with --web, a tile opens "
                   "that table's display, served under /table/<id>/)")
    p.add_argument("--username", help="broker user (overrides the URL's)")
    p.add_argument("--password", help="broker password (overrides the URL's)")
    p.add_argument("--once", action="store_true",
                   help="print the table once, as soon as the state arrives, and exit")
    p.add_argument("--timeout", type=seconds_to_wait, default=None,
                   help="with --once: seconds to wait for the state (default 5)")
    p.add_argument("--web", action="store_true",
                   help="serve the browser display (large type, for a TV or tablet): this "
                   "command follows the broker and streams the table to the page, which needs "
                   "no broker access")
    p.add_argument("--port", type=port_number, default=None,
                   help="with --web: HTTP port (default 8080)")
    p.add_argument("--bind", default=None, type=ip_address,
                   help="with --web: address to listen on (default 127.0.0.1; 0.0.0.0 for "
                   "screens on the network)")
    add_language_option(p, "the table's language, else the system locale's")
    # Gone: the page no longer connects to the broker (see run()).
    p.add_argument("--ws-url", help=argparse.SUPPRESS)


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Add the ``display`` subcommand to ``referee``'s subparsers (``func`` is :func:`run`)."""
    p = subparsers.add_parser(
        "display", help="show a table from the MQTT feed (terminal, or a web page with --web)",
        description="Follow a table over MQTT and show whose turn it is, the pile, counts, "
        "challenges, verdicts, players out, scores and the winner. --web serves the same as "
        "a page for a browser, streamed from this command (any broker works; the page gets "
        "no broker credentials). --hall shows every table on the broker, one tile each "
        "(docs/hall.md).",
    )
    add_arguments(p)
    p.set_defaults(func=run)
    return p


def run(args: argparse.Namespace) -> int:
    """Carry out ``referee display`` with parsed arguments; the exit status."""
    try:
        if args.hall and args.table is not None:
            raise ValueError("--hall shows every table: leave out --table")
        if not args.hall and args.table is None:
            raise ValueError("--table is required (or --hall for every table)")
        if args.table is not None:
            Topics(args.table)
        if args.ws_url:
            raise ValueError("--ws-url is gone: the page now gets the table from `referee "
                             "display --web` itself, which only needs --broker")
        if not args.broker:
            raise ValueError("--broker is required")
        if args.web and args.once:
            raise ValueError("--once is for the terminal display, not with --web")
        # taken and then ignored, they had been said nothing of
        if (args.port is not None or args.bind is not None) and not args.web:
            raise ValueError("--port and --bind go with --web")
        if args.timeout is not None and not args.once:
            raise ValueError("--timeout goes with --once")
        args.port = 8080 if args.port is None else args.port
        args.bind = "127.0.0.1" if args.bind is None else args.bind
        args.timeout = 5.0 if args.timeout is None else args.timeout
        broker = resolve_broker(args.broker, args.username, args.password)
    except ValueError as exc:
        print(f"referee display: {exc}", file=sys.stderr)
        return 2
    if args.hall:
        return run_hall(args, broker)
    view = TableView(args.table, lang=args.lang)
    if args.web:
        return _run_web(args, broker, view)
    try:
        if args.once:
            return asyncio.run(show_once(broker, view, args.timeout))
        asyncio.run(show_live(broker, view))
    except KeyboardInterrupt:
        pass
    return 0


def _run_web(args: argparse.Namespace, broker: BrokerAddress, view: TableView) -> int:
    web = WebDisplay(view, args.bind, args.port)
    try:
        return asyncio.run(serve_while(
            web, "the page", f"{args.bind}:{args.port}",
            f"serving table {args.table} on {{url}} from {broker.url()}",
            lambda: follow(broker, view, web.changed)))
    except KeyboardInterrupt:
        return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``referee display`` on its own: ``python -m cardtable.display --broker URL --table ID``."""
    parser = argparse.ArgumentParser(prog="referee display", description=__doc__.split("\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))
