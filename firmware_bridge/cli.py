"""The ``firmware_bridge`` command: run a virtual board, or watch a board's events.

``firmware_bridge emulate`` prints the pty path of a virtual board on its first line (open it
with ``--port`` anywhere a board is expected), then logs what the board does on stderr. Typed
lines act on the board: ``lay QH [READER]``, ``tag 04A1B2C3 [READER]``, ``press N``,
``release N``, ``mute``, ``unmute``, ``status``.

``firmware_bridge monitor --port PORT`` prints every event of a board (or emulator) as JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import random
import signal
import sys
import threading
from collections.abc import Callable, Sequence

from firmware_bridge.deck import Deck, DeckError, parse_tag, synthetic_deck
from firmware_bridge.emulator import Faults, Script, ScriptError, VirtualBoard
from referee.cards import parse_card
from referee.errors import CardError


def _probability(text: str) -> float:
    try:
        value = float(text.rstrip("%")) / (100 if text.endswith("%") else 1)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a probability") from None
    if not 0 <= value <= 1:
        raise argparse.ArgumentTypeError(f"{text!r} is not a probability (0..1 or 0..100%)")
    return value


#: The fastest rate asked of a serial port (pyserial takes any int, the OS far fewer; a USB
#: board ignores it). Beyond it a typo, not a board.
MAX_BAUD = 4_000_000


def _int_in(low: int, high: int) -> Callable[[str], int]:
    """An argparse type: an integer from ``low`` to ``high``."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if not low <= value <= high:
            raise argparse.ArgumentTypeError(f"{text} is not in {low}..{high}")
        return value
    return parse


def _float_in(low: float, high: float) -> Callable[[str], float]:
    """An argparse type: a finite number from ``low`` to ``high``."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not low <= value <= high:  # also refuses nan
            raise argparse.ArgumentTypeError(f"{text} is not in {low:g}..{high:g}")
        return value
    return parse


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``firmware_bridge``."""
    parser = argparse.ArgumentParser(
        prog="firmware_bridge",
        description="The table board's serial link: a virtual board for tests and simulation, "
        "and a monitor for a real one.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    e = sub.add_parser(
        "emulate", help="run a virtual board on a pseudo-terminal",
        description="Runs a virtual table board on a pseudo-terminal and prints its path. It "
        "speaks the real protocol; faults damage the bytes on the line (probabilities per "
        "byte, as 0.01 or 1%). A script lays cards and presses buttons at board times; typed "
        "lines do the same by hand (lay QH, tag HEX, press N, release N, mute, unmute, status).",
    )
    e.add_argument("--deck", help="deck file giving the tags of 'lay' (default: synthetic tags)")
    e.add_argument("--script", help="JSON script of card reads and button edges")
    e.add_argument("--exit-after-script", action="store_true",
                   help="stop once the script ran and every event was acknowledged")
    e.add_argument("--drift-ppm", type=_float_in(-100_000, 100_000), default=0.0,
                   help="the board's crystal error in ppm (e.g. 100 or -100)")
    e.add_argument("--tick-start", type=_int_in(0, 2**32 - 1), default=None,
                   help="the board's 32-bit µs tick count at start (default random; "
                   "4294000000 wraps after 16 s)")
    e.add_argument("--corrupt", type=_probability, default=0.0, help="corrupted bytes")
    e.add_argument("--drop", type=_probability, default=0.0, help="dropped bytes")
    e.add_argument("--duplicate", type=_probability, default=0.0, help="duplicated bytes")
    e.add_argument("--delay", type=_probability, default=0.0,
                   help="bytes before which the line stalls")
    e.add_argument("--delay-ms", type=_float_in(0, 60_000), default=5.0,
                   help="longest stall, 0..60000 (default 5 ms)")
    e.add_argument("--direction", choices=("both", "to_host", "to_board"), default="both",
                   help="which way faults hit (default both)")
    # The board says its counts in one byte each (HELLO).
    e.add_argument("--readers", type=_int_in(0, 255), default=4,
                   help="card readers, 0..255 (default 4)")
    e.add_argument("--buttons", type=_int_in(0, 255), default=8,
                   help="buttons, 0..255 (default 8)")
    e.add_argument("--seats", type=_int_in(0, 255), default=8,
                   help="seat LEDs, 0..255 (default 8)")
    e.add_argument("--seed", type=int, default=None, help="seed of the faults and ids")
    e.add_argument("--link", help="also make a symlink to the pty at this path (removed on "
                   "exit; refused if anything but an emulator's old link is there)")
    e.set_defaults(func=_cmd_emulate)
    m = sub.add_parser("monitor", help="print a board's events as JSON lines",
                       description="Connects to a board (or emulator) and prints each event.")
    m.add_argument("--port", required=True, help="device path or pyserial URL")
    m.add_argument("--baud", type=_int_in(1, MAX_BAUD), default=115200,
                   help=f"baud rate, 1..{MAX_BAUD} (default 115200)")
    m.add_argument("--deck", help="deck file to name the cards")
    m.set_defaults(func=_cmd_monitor)
    return parser


def _log(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


async def _emulate(args: argparse.Namespace) -> int:
    deck = Deck.load(args.deck) if args.deck else synthetic_deck()
    script = Script.load(args.script, deck) if args.script else None
    faults = Faults(args.corrupt, args.drop, args.duplicate, args.delay, args.delay_ms,
                    args.direction, args.seed)
    board = VirtualBoard(deck=deck, faults=faults, drift_ppm=args.drift_ppm,
                         tick_start=args.tick_start, seed=args.seed, readers=args.readers,
                         buttons=args.buttons, seats=args.seats, link_path=args.link)
    loop = asyncio.get_running_loop()
    stop = asyncio.Event()
    # SIGTERM (systemd, kill) and SIGHUP (the terminal closed) end it as Ctrl-C does: through
    # the finally below, which removes the --link symlink (set before the path is printed).
    main_task = asyncio.current_task()
    assert main_task is not None
    terminated: list[int] = []

    def terminate(signum: int) -> None:
        terminated.append(signum)
        main_task.cancel()
    for signum in (signal.SIGTERM, signal.SIGHUP):
        with contextlib.suppress(NotImplementedError, RuntimeError):
            loop.add_signal_handler(signum, terminate, signum)
    path = await board.start()  # --link: a symlink that follows the pty across replugs
    print(path, flush=True)
    _log(f"virtual board on {path} (drift {args.drift_ppm:+g} ppm, ticks from "
         f"{board.clock.tick_start})")
    if sys.stdin is not None and sys.stdin.isatty():
        def pump() -> None:
            for line in sys.stdin:
                loop.call_soon_threadsafe(_command, board, deck, line)
        threading.Thread(target=pump, daemon=True).start()
    watcher = loop.create_task(_watch(board))
    try:
        if script is not None:
            await _wait_host(board)
            await board.run_script(script)
            _log(f"script done: {len(script.steps)} steps")
            if args.exit_after_script:
                while board.core.sender.pending:
                    await asyncio.sleep(0.05)
                return 0
        await stop.wait()
    except asyncio.CancelledError:
        if not terminated:
            raise
        main_task.uncancel()
        return 128 + terminated[0]
    finally:
        watcher.cancel()
        await board.close()  # removes the --link symlink if it is still the board's
    return 0


async def _wait_host(board: VirtualBoard) -> None:
    while not board.core.host_online:
        await asyncio.sleep(0.02)


async def _watch(board: VirtualBoard) -> None:
    online = None
    seen = 0
    while True:
        core = board.core
        if core.host_online != online:
            online = core.host_online
            _log("host online" if online else "host offline")
        for cmd in core.commands[seen:]:
            _log(f"host command: {cmd}")
        seen = len(core.commands)
        await asyncio.sleep(0.05)


def _command(board: VirtualBoard, deck: Deck, line: str) -> None:
    words = line.split()
    if not words:
        return
    verb, rest = words[0].lower(), words[1:]
    try:
        if verb == "lay" and rest:
            card = parse_card(rest[0])
            reader = int(rest[1]) if len(rest) > 1 else 0
            tag = deck.tag_for(card)
            if tag is None:
                _log(f"{card} has no tag in the deck")
                return
            sent = board.read_tag(tag, reader)
            _log(f"lay {card} on reader {reader}: {'sent' if sent else 'reader off'}")
        elif verb == "tag" and rest:
            reader = int(rest[1]) if len(rest) > 1 else 0
            board.read_tag(parse_tag(rest[0]), reader)
        elif verb in ("press", "release") and rest:
            board.press(int(rest[0]), verb == "press")
        elif verb in ("mute", "unmute"):
            board.mute(verb == "mute")
            _log("cable pulled" if verb == "mute" else "cable back")
        elif verb == "unplug":
            board.unplug()
            _log("unplugged: the device is gone, the board keeps its events")
        elif verb == "replug":
            _log(f"plugged back in on {board.replug()}")
        elif verb == "noise":
            n = int(rest[0]) if rest else 1000
            board.inject(random.randbytes(n))
            _log(f"{n} random bytes on the line")
        elif verb == "corrupt":
            p = _probability(rest[0]) if rest else 0.0
            board.set_faults(Faults(corrupt=p) if p else None)
            _log(f"{p:.0%} of the bytes corrupted from now on")
        elif verb == "status":
            core = board.core
            _log(f"host {'online' if core.host_online else 'offline'}; "
                 f"{core.sender.pending} events pending; {len(core.events_sent)} sent; "
                 f"line out {board.line_out.stats}, in {board.line_in.stats}")
        else:
            _log("commands: lay CARD [READER], tag HEX [READER], press N, release N, "
                 "mute, unmute, unplug, replug, noise [BYTES], corrupt FRACTION, status")
    except (CardError, DeckError, ValueError, OSError, argparse.ArgumentTypeError) as exc:
        _log(str(exc))


async def _monitor(args: argparse.Namespace) -> int:
    from firmware_bridge.enroll import open_link
    from firmware_bridge.events import BoardEvent, LinkHealth, LinkStatus
    from firmware_bridge.link import Link

    deck = Deck.load(args.deck) if args.deck else None
    link = Link(args.port, baudrate=args.baud, deck=deck)
    if not await open_link(link, args.port, lambda text: _log(f"firmware_bridge: {text}")):
        return 2
    try:
        async for ev in link.events():
            obj: dict[str, object]
            if isinstance(ev, BoardEvent):
                obj = {"event": ev.kind, "t": ev.t, "ticks": ev.ticks, "error_ns": ev.error_ns,
                       "seq": ev.seq}
                if ev.kind == "card":
                    obj.update(reader=ev.reader, tag=ev.tag_hex,
                               card=str(ev.card) if ev.card else None)
                else:
                    obj.update(button=ev.button, pressed=ev.pressed)
            elif isinstance(ev, LinkStatus):
                obj = {"event": ev.kind, "t": ev.t, "reason": ev.reason}
            elif isinstance(ev, LinkHealth):
                obj = {"event": ev.kind, "t": ev.t, "reason": ev.reason,
                       "damaged": ev.damaged, "frames": ev.frames}
            else:  # a BoardError: a LinkEvent is one of the four
                obj = {"event": "error", "t": ev.t, "code": ev.code, "text": ev.text}
            print(json.dumps(obj), flush=True)
    finally:
        await link.close()
    return 0


def _cmd_emulate(args: argparse.Namespace) -> int:
    return asyncio.run(_emulate(args))


def _cmd_monitor(args: argparse.Namespace) -> int:
    return asyncio.run(_monitor(args))


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``firmware_bridge`` console script."""
    args = build_parser().parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except (DeckError, ScriptError, OSError, ValueError) as exc:
        # ValueError: a port pyserial cannot take (a bad URL, a setting), said by Link.open
        print(f"firmware_bridge: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    os.environ.setdefault("PYTHONUNBUFFERED", "1")
    sys.exit(main())
