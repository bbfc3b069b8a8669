"""Argument types of the ``referee`` subcommands: numbers refused by argparse itself, with the
option named, when they are out of range (``--speed 0``, ``--max-cards -1``)."""

from __future__ import annotations

import argparse
import math


def positive_number(text: str) -> float:
    """A finite number above zero (``--speed``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"must be a number above 0, not {text}")
    return value


def pace(text: str) -> float:
    """A pace from 0.01 to 10 000 times real time (``--speed``: 1e-320 had overflowed, and
    1e-300 had promised a game of 300 digits of minutes)."""
    value = positive_number(text)
    if not 0.01 <= value <= 10_000:
        raise argparse.ArgumentTypeError(f"must be from 0.01 to 10000, not {text}")
    return value


def settle_window(text: str) -> float:
    """A settle window in ms, 0 to 1 000 (``--settle-ms``; as ``[table] settle_ms``)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{_quoted(text)} is not a number") from None
    if not math.isfinite(value) or not 0 <= value <= 1000:
        raise argparse.ArgumentTypeError(f"must be 0 to 1000 ms, not {text}")
    return value


def seed_number(text: str) -> int:
    """A seed of at most 4 000 digits (``analyse --seed``: the games' seeds count on from it,
    and one of 4 300 digits had failed after the games were played)."""
    value = whole_number(text)
    if len(str(abs(value))) > 4000:
        raise argparse.ArgumentTypeError(f"{_quoted(text)} has more than 4 000 digits")
    return value


def seconds_to_wait(text: str) -> float:
    """A wait above zero and at most an hour (``--timeout``: ``1e308`` waited for ever)."""
    value = positive_number(text)
    if value > 3600:
        raise argparse.ArgumentTypeError(f"must be at most 3600 seconds, not {text}")
    return value


def _quoted(text: str, most: int = 40) -> str:
    """``text`` quoted, cut short with its length when long (a value of 5 000 digits)."""
    return repr(text) if len(text) <= most else f"{text[:most]!r}… ({len(text)} characters)"


def whole_number(text: str) -> int:
    """A whole number (``--seed``, ``--players``): any that Python reads, the value quoted cut
    short when it is not one (argparse quoted all 5 000 digits of one too long to read)."""
    try:
        if not text.isascii():  # int() reads Arabic-Indic digits too: --players ٤ had played 4
            raise ValueError(text)
        return int(text)
    except ValueError:
        digits = text.strip().lstrip("+-")
        long = digits.isascii() and digits.isdigit()  # Python reads at most 4 300 digits
        raise argparse.ArgumentTypeError(f"{_quoted(text)} is not a whole number"
                                         + (" of at most 4 300 digits" if long else "")) from None


def count(text: str) -> int:
    """A whole number, 0 or more (``--max-cards``)."""
    value = whole_number(text)  # ASCII digits, as every number here
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def lay_frames(text: str) -> int:
    """Reads of one card that make a lay: 1..30, as ``[camera] frames`` (``--frames -5`` had
    been taken)."""
    value = whole_number(text)
    if not 1 <= value <= 30:
        raise argparse.ArgumentTypeError(f"must be 1..30, as [camera] frames, not {value}")
    return value


def reader_number(text: str) -> int:
    """A card reader of the board, 0..254 (255 means all of them; ``--reader -1`` had been
    taken, and every read then left out without a word)."""
    value = whole_number(text)
    if not 0 <= value <= 254:
        raise argparse.ArgumentTypeError(f"must be a reader 0..254, not {value}")
    return value


def path_name(text: str) -> str:
    """A file or folder's name, not empty (``''`` had been taken as the current folder, ".")."""
    if not text:
        raise argparse.ArgumentTypeError("is empty: give a file's or folder's name")
    return text


def ip_address(text: str) -> str:
    """An IP address of this machine to listen on."""
    import ipaddress

    try:
        ipaddress.ip_address(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an IP address (127.0.0.1: this "
                                         "machine only; 0.0.0.0: every network)") from None
    return text


def port_number(text: str) -> int:
    """A TCP port (0: any free one)."""
    if not (text.isascii() and text.isdigit()) or not 0 <= int(text) <= 65535:
        raise argparse.ArgumentTypeError(f"{text!r} is not a port number 0..65535")
    return int(text)


#: The fastest serial line a port is opened at (``--baud``; firmware_bridge's own limit).
MAX_BAUD = 4_000_000


def baud_rate(text: str) -> int:
    """A serial line's speed, 1 to :data:`MAX_BAUD` bits a second."""
    if not (text.isascii() and text.isdigit()) or not 1 <= int(text) <= MAX_BAUD:
        raise argparse.ArgumentTypeError(f"{text!r} is not a baud rate 1..{MAX_BAUD}")
    return int(text)


def add_web_options(p: argparse.ArgumentParser, instead: str) -> None:
    """``--bind`` and ``--port`` of the table's web pages (``instead``: what they replace)."""
    p.add_argument("--bind", metavar="ADDR", type=ip_address,
                   help=f"serve the web pages on this address {instead} (default 127.0.0.1, "
                   "this machine only; 0.0.0.0 lets phones on the network in)")
    p.add_argument("--port", type=port_number,
                   help=f"serve the web pages on this port {instead} (default 8080; 0 picks a "
                   "free one)")


def language_code(text: str) -> str:
    """A language with words (``sv``, ``en``; ``sv_SE`` is ``sv``)."""
    from cardtable.i18n import check_language

    try:
        return check_language(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(getattr(exc, "reason", exc))) from None


def add_language_option(p: argparse.ArgumentParser, default: str = "the system locale's"
                        ) -> None:
    """``--lang``: the language of the words shown (``default``: what is shown without it)."""
    p.add_argument("--lang", metavar="CODE", type=language_code,
                   help=f"the language of the words shown: en or sv (default: {default}; "
                   "docs/i18n.md)")
