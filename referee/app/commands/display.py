"""``referee display``: show a table from the MQTT feed, in the terminal or as a web page."""

from __future__ import annotations

import argparse
import asyncio
import sys
from collections.abc import Sequence

from referee.app.display.follow import show_live, show_once
from referee.app.display.view import TableView
from referee.app.display.web import make_web_server, web_config
from referee.app.feed import BrokerAddress, Topics, resolve_broker


def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``referee display``."""
    p.add_argument("--broker", metavar="URL",
                   help="broker URL: mqtt://user:pass@host:1883, mqtts://…, ws://…, wss://… "
                   "(password also from $CARDTABLE_MQTT_PASSWORD)")
    p.add_argument("--table", required=True, metavar="ID", help="the table id")
    p.add_argument("--username", help="broker user (overrides the URL's)")
    p.add_argument("--password", help="broker password (overrides the URL's)")
    p.add_argument("--once", action="store_true",
                   help="print the table once, as soon as the state arrives, and exit")
    p.add_argument("--timeout", type=float, default=5.0,
                   help="with --once: seconds to wait for the state (default 5)")
    p.add_argument("--web", action="store_true",
                   help="serve the browser display (large type, for a TV or tablet)")
    p.add_argument("--port", type=int, default=8080, help="with --web: HTTP port (default 8080)")
    p.add_argument("--bind", default="127.0.0.1",
                   help="with --web: address to listen on (default 127.0.0.1; 0.0.0.0 for "
                   "screens on the network)")
    p.add_argument("--ws-url", metavar="URL",
                   help="with --web: the broker's websockets URL for the browser, e.g. "
                   "ws://display:pw@192.168.1.10:9001/mqtt (default: the --broker URL if it "
                   "is ws://, else the page's own host, port 9001, with --broker's user)")


def register(
    subparsers: argparse._SubParsersAction[argparse.ArgumentParser],
) -> argparse.ArgumentParser:
    """Add the ``display`` subcommand to ``referee``'s subparsers (``func`` is :func:`run`)."""
    p = subparsers.add_parser(
        "display", help="show a table from the MQTT feed (terminal, or a web page with --web)",
        description="Follow a table over MQTT and show whose turn it is, the pile, counts, "
        "challenges, verdicts, players out, scores and the winner. --web serves a page for "
        "a browser that follows the broker over websockets.",
    )
    add_arguments(p)
    p.set_defaults(func=run)
    return p


def _web_address(args: argparse.Namespace) -> BrokerAddress | None:
    if args.ws_url:
        addr = resolve_broker(args.ws_url, args.username, args.password)
        if addr.transport != "websockets":
            raise ValueError("--ws-url must be a ws:// or wss:// URL")
        return addr
    if args.broker:
        addr = resolve_broker(args.broker, args.username, args.password)
        if addr.transport == "websockets":
            return addr
        if addr.username is not None:
            # The page's own host is filled in by the page (host "" below).
            return BrokerAddress("", 9001, "websockets", False, addr.username, addr.password,
                                 "/mqtt")
    return None


def run(args: argparse.Namespace) -> int:
    """Carry out ``referee display`` with parsed arguments; the exit status."""
    try:
        Topics(args.table)
        if args.web:
            return _run_web(args)
        if not args.broker:
            print("referee display: --broker is required (or --web)", file=sys.stderr)
            return 2
        broker = resolve_broker(args.broker, args.username, args.password)
    except ValueError as exc:
        print(f"referee display: {exc}", file=sys.stderr)
        return 2
    view = TableView(args.table)
    try:
        if args.once:
            return asyncio.run(show_once(broker, view, args.timeout))
        asyncio.run(show_live(broker, view))
    except KeyboardInterrupt:
        pass
    return 0


def _run_web(args: argparse.Namespace) -> int:
    ws = _web_address(args)
    config = web_config(args.table, ws)
    try:
        server = make_web_server(args.bind, args.port, config)
    except OSError as exc:  # the port is in use, or the address is not this machine's
        print(f"referee display: cannot serve the page on {args.bind}:{args.port} "
              f"({exc.strerror or exc})", file=sys.stderr)
        return 1
    host, port = server.server_address[:2]
    if isinstance(host, (bytes, bytearray)):  # typed so; an AF_INET server's host is a str
        host = host.decode()
    print(f"referee display: serving table {args.table} on http://{host}:{port}/ "
          "(Ctrl-C to stop)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """``referee display`` on its own: ``python -m referee.app.display --broker URL --table ID``."""
    parser = argparse.ArgumentParser(prog="referee display", description=__doc__.split("\n")[0])
    add_arguments(parser)
    return run(parser.parse_args(argv))
