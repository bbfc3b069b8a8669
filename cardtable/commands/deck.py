"""``referee deck``: card identity at the command line: enroll a tagged deck on the board's
reader, say which card a tag is, list a deck file."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from cardtable.commands.argtypes import (
    MAX_BAUD,
    baud_rate,
    path_name,
    reader_number,
    seconds_to_wait,
    whole_number,
)
from firmware_bridge.deck import Deck, DeckError, synthetic_deck, tag_text
from firmware_bridge.enroll import run_check, run_enroll
from referee.errors import visible


def _cmd_enroll(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(run_enroll(args.file, args.port, reader=args.reader,
                                      baudrate=args.baud, name=args.name,
                                      connect_timeout=args.timeout))
    except DeckError as exc:
        print(f"referee deck: {exc}", file=sys.stderr)
        return 2


def _cmd_check(args: argparse.Namespace) -> int:
    try:
        return asyncio.run(run_check(args.file, args.port, baudrate=args.baud,
                                     connect_timeout=args.timeout))
    except DeckError as exc:
        print(f"referee deck: {exc}", file=sys.stderr)
        return 2


def _cmd_show(args: argparse.Namespace) -> int:
    try:
        deck = Deck.load(args.file)
    except DeckError as exc:
        print(f"referee deck: {exc}", file=sys.stderr)
        return 2
    print(f"{visible(deck.name or args.file)}: {len(deck)} of 52 cards enrolled")
    for tag, card in deck.items():
        print(f"  {str(card):>3}  {tag_text(tag)}")
    missing = deck.missing()
    if missing:
        print("Missing: " + " ".join(map(str, missing)))
    return 0


def _cmd_synthetic(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if path.exists() and not args.overwrite:
        print(f"referee deck: {path} already exists; add --overwrite to replace it",
              file=sys.stderr)
        return 2
    deck = synthetic_deck(args.seed)
    try:
        deck.save(path)
    except OSError as exc:
        print(f"referee deck: cannot write {path}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(f"{path}: the synthetic deck of seed {args.seed} ({len(deck)} cards), the tags "
          f"'firmware_bridge emulate' reads{'' if args.seed == 0 else ' with --seed'}")
    return 0


def _port_args(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", required=True,
                   help="the board: a device path (/dev/ttyACM0, the emulator's /dev/pts/N) "
                   "or a pyserial URL (socket://host:port, rfc2217://…)")
    p.add_argument("--baud", type=baud_rate, default=115200,
                   help=f"baud rate, 1..{MAX_BAUD} (default 115200)")
    p.add_argument("--timeout", type=seconds_to_wait, default=10.0,
                   help="seconds to wait for the board to answer, at most 3600 (default 10)")


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``deck`` command group (``enroll``, ``check``, ``show``, ``synthetic``)."""
    p = subparsers.add_parser(
        "deck", help="card identity: enroll a tagged deck, check cards, show a deck file",
        description="Deck files map the tag ids of a physical deck's cards (NFC tags, "
        "barcodes) to cards. 'enroll' walks you through reading all 52 cards on the board's "
        "reader; 'check' says which card each read tag is; 'show' lists a deck file; 'synthetic' "
        "writes the made-up deck the board emulator reads.",
    )
    sub = p.add_subparsers(dest="deck_command", metavar="ACTION")
    sub.required = True
    e = sub.add_parser(
        "enroll", help="read all 52 cards of a deck on the board's reader",
        description="Names each card to read in turn and saves the deck file after every "
        "change, so a session can stop and resume. A card read twice or an unknown tag gets a "
        "message and changes nothing; type 'help' for the corrections (undo, fix, swap, as, "
        "skip, check).",
    )
    e.add_argument("file", type=path_name,
                   help="the deck file (.json, or .toml); resumed if it exists")
    _port_args(e)
    e.add_argument("--reader", type=reader_number, default=None,
                   help="only take reads from this reader, 0..254 (default: any)")
    e.add_argument("--name", default=None, help="the deck's name (default: the file's stem)")
    e.set_defaults(func=_cmd_enroll)
    c = sub.add_parser("check", help="say which card each read tag is",
                       description="Prints the card of every tag read, or that it is unknown.")
    c.add_argument("file", type=path_name, help="the deck file")
    _port_args(c)
    c.set_defaults(func=_cmd_check)
    s = sub.add_parser("show", help="list a deck file", description="Lists a deck file.")
    s.add_argument("file", type=path_name, help="the deck file")
    s.set_defaults(func=_cmd_show)
    y = sub.add_parser(
        "synthetic", help="write the emulator's synthetic deck to a deck file",
        description="Write the deck of synthetic tags that the board emulator "
        "(`firmware_bridge emulate`) reads, so that a referee on the emulated board knows "
        "every card (the full mock stack, deploy/table.full-mock.toml).")
    y.add_argument("file", type=path_name, help="the deck file to write (.json, or .toml)")
    y.add_argument("--seed", type=whole_number, default=0,
                   help="the seed of the tags (default 0, the emulator's own deck)")
    y.add_argument("--overwrite", action="store_true", help="replace an existing file")
    y.set_defaults(func=_cmd_synthetic)
