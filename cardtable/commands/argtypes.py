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


def count(text: str) -> int:
    """A whole number, 0 or more (``--max-cards``)."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value
