"""The firmware on real MicroPython as a table board on a pseudo-terminal (the test side).

:class:`MicroPythonBoard` opens a pty pair, keeps the master end and starts ``board.mjs`` under
Node.js with it: the MicroPython VM (npm ``@micropython/micropython-webassembly-pyscript``
1.27) runs ``firmware/pico/main.py`` as shipped, its USB serial being that pty. The host opens
``board.path`` exactly as it opens ``/dev/ttyACM0``, through pyserial. Button edges and card
reads are sent to the board's shims (stamped there by the firmware, on the board's drifting
clock); what the firmware did to its pins comes back as records (``pixels``, ``pwm``,
``edges``, ``reads``), each with the host's ``time.monotonic_ns()`` at that moment.

:meth:`restart` powers the board off and on (a new VM, a new boot id, the same pty); the pty
stays while the board object lives, as a USB port whose board reboots.

Tests and benches load this file by its path (``firmware/`` is not a Python package), with
``load_mpboard()`` of ``tests/firmware/harness.py``;
:func:`missing` says why the harness cannot run here (no Node.js, the npm package not
installed), or ``None``. By hand, ``python3 firmware/harness/mpboard.py`` prints the pty path
(open it with ``--port``, e.g. ``firmware_bridge monitor --port PATH``) and takes typed lines:
``lay QH [READER]``, ``tag HEX [READER]``, ``press N``, ``release N``, ``mute``, ``unmute``,
``restart``, ``quit``; what the firmware does to its pins is printed as it happens.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import fcntl
import json
import os
import shutil
import subprocess
import sys
import threading
import tty
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
FIRMWARE = ROOT / "firmware" / "pico" / "main.py"
VECTORS = ROOT / "firmware_bridge" / "vectors.json"
RUNNER = HERE / "board.mjs"
PACKAGE = HERE / "node_modules" / "@micropython" / "micropython-webassembly-pyscript"
#: The board's button pins in button order (``run()``'s default ``button_pins``).
BUTTON_PINS = (2, 3, 4, 5, 6, 7, 8, 9)
LED_PIN, BUZZER_PIN = 16, 15


def node() -> str | None:
    """The Node.js binary, if there is one."""
    return shutil.which("node")


def missing() -> str | None:
    """Why the MicroPython harness cannot run here (``None``: it can)."""
    if node() is None:
        return "Node.js is not installed (Debian package 'nodejs'; bash .ci/provision installs it)"
    if not (PACKAGE / "micropython.mjs").exists():
        return ("the MicroPython VM is not installed: bash .ci/provision, or npm ci --prefix "
                "firmware/harness (npm package @micropython/micropython-webassembly-pyscript "
                "1.27.0)")
    return None


class MicroPythonBoard:
    """The firmware in the MicroPython VM, on a pty.

    ``drift_ppm``: the board's crystal against the host clock; ``tick_start_us``: where its
    30-bit ``ticks_us`` starts (near 2**30 to cross the wrap at once); ``corrupt``/``drop``:
    byte faults in both directions; ``mpy``: run this ``mpy-cross`` output instead of the
    source; ``vectors``: the file the firmware's boot self-test reads (``None``: none).
    """

    def __init__(self, *, drift_ppm: float = 0.0, tick_start_us: int = 0,
                 corrupt: float = 0.0, drop: float = 0.0, seed: int = 1,
                 firmware: Path = FIRMWARE, mpy: Path | None = None,
                 vectors: Path | None = VECTORS, deck: Any = None) -> None:
        self.drift_ppm, self.tick_start_us = drift_ppm, tick_start_us
        self.corrupt, self.drop, self.seed = corrupt, drop, seed
        self.firmware, self.mpy, self.vectors = firmware, mpy, vectors
        self.deck = deck
        self.path = ""
        self.records: list[dict[str, Any]] = []
        self.boots = 0
        self._master = -1
        self._slave = -1
        self._proc: subprocess.Popen[bytes] | None = None
        self._ctl_w = -1
        self._out_r = -1
        self._buf = b""
        self._loop: asyncio.AbstractEventLoop | None = None
        self._ready = asyncio.Event()
        self._changed = asyncio.Event()

    # -- life ------------------------------------------------------------------------------------

    async def start(self, timeout: float = 20.0) -> str:
        """Open the pty and boot the firmware; returns the path the host opens."""
        why = missing()
        if why is not None:
            raise RuntimeError(why)
        self._loop = asyncio.get_running_loop()
        self._master, self._slave = os.openpty()
        tty.setraw(self._slave)
        _nonblocking(self._master)
        self.path = os.ttyname(self._slave)
        await self._boot(timeout)
        return self.path

    async def _boot(self, timeout: float) -> None:
        assert self._loop is not None
        ctl_r, self._ctl_w = os.pipe()
        self._out_r, out_w = os.pipe()
        _nonblocking(ctl_r)
        extra = os.environ.get("HARNESS_NODE_ARGS", "").split()  # e.g. --cpu-prof
        args = [str(node()), *extra, str(RUNNER), "--serial-fd", str(self._master),
                "--drift-ppm", str(self.drift_ppm), "--tick-start-us", str(self.tick_start_us),
                "--corrupt", str(self.corrupt), "--drop", str(self.drop),
                "--seed", str(self.seed + 7919 * self.boots)]
        args += ["--firmware", str(self.firmware)]
        if self.mpy is not None:
            args += ["--mpy", str(self.mpy)]
        if self.vectors is not None:
            args += ["--vectors", str(self.vectors)]
        self._ready.clear()
        self._proc = subprocess.Popen(args, stdin=ctl_r, stdout=out_w,
                                      pass_fds=(self._master,), cwd=HERE)
        os.close(ctl_r)
        os.close(out_w)
        _nonblocking(self._out_r)
        self._loop.add_reader(self._out_r, self._on_output)
        self.boots += 1
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            raise RuntimeError(f"the MicroPython board did not boot in {timeout} s: "
                               f"{self.crash()}") from None

    async def restart(self, off_s: float = 0.0) -> None:
        """Power the board off (for ``off_s`` seconds) and on again: a new boot."""
        await self._power_off()
        if off_s:
            await asyncio.sleep(off_s)
        await self._boot(20.0)

    async def _power_off(self) -> None:
        proc, self._proc = self._proc, None
        with contextlib.suppress(OSError):
            self._send(quit=True)
        if proc is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                await asyncio.to_thread(proc.wait, 2)
        if self._loop is not None and self._out_r >= 0:
            self._loop.remove_reader(self._out_r)
        for fd in (self._ctl_w, self._out_r):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._ctl_w = self._out_r = -1
        if proc is not None:
            proc.terminate()
            try:
                await asyncio.to_thread(proc.wait, 5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()

    async def close(self) -> None:
        """Power off and close the pty."""
        await self._power_off()
        for fd in (self._master, self._slave):
            if fd >= 0:
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._master = self._slave = -1

    async def __aenter__(self) -> MicroPythonBoard:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- what the players do ---------------------------------------------------------------------

    def _send(self, **msg: Any) -> None:
        if self._ctl_w < 0:
            return  # powered off: nobody is there to see it
        os.write(self._ctl_w, (json.dumps(msg) + "\n").encode())

    def read_tag(self, tag: bytes, reader: int = 0) -> bool:
        """A tag under reader ``reader`` now (the firmware reads it at its next poll)."""
        self._send(tag=bytes(tag).hex(), reader=reader)
        return self._ctl_w >= 0

    def lay(self, card: Any, reader: int = 0) -> bool:
        """The card's tag (from the deck, or the synthetic deck) under reader ``reader``."""
        from firmware_bridge.deck import synthetic_deck

        tag = (self.deck or synthetic_deck()).tag_for(card)
        if tag is None:
            raise KeyError(f"{card} has no tag in the deck")
        return self.read_tag(tag, reader)

    def press(self, button: int, pressed: bool = True, *, bounce: int = 0,
              gap_us: int = 100) -> bool:
        """A button edge now (pull-up: pressed pulls the pin low); ``bounce``: that many
        extra edges back and forth first, ``gap_us`` apart, as a bouncing contact makes."""
        level = 0 if pressed else 1
        levels = [level ^ (n % 2) for n in range(bounce, -1, -1)]
        self._send(gpio=BUTTON_PINS[button], levels=levels, gap_us=gap_us)
        return self._ctl_w >= 0

    def mute(self, muted: bool = True) -> None:
        """Pull (``True``) or plug back (``False``) the cable: nothing passes either way."""
        self._send(mute=muted)

    def set_faults(self, corrupt: float = 0.0, drop: float = 0.0) -> None:
        """Damage the bytes both ways from now on."""
        self._send(faults={"corrupt": corrupt, "drop": drop})

    # -- what came back --------------------------------------------------------------------------

    def _on_output(self) -> None:
        try:
            data = os.read(self._out_r, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            if self._loop is not None:
                self._loop.remove_reader(self._out_r)
            return
        self._buf += data
        *lines, self._buf = self._buf.split(b"\n")
        for line in lines:
            rec = json.loads(line)
            rec["host_ns"] = int(rec["host_ns"])
            rec["tick_ns"] = int(rec["tick_ns"])
            rec["boot"] = self.boots
            self.records.append(rec)
            if rec.get("ready"):
                self._ready.set()
        self._changed.set()

    def of(self, kind: str) -> list[dict[str, Any]]:
        """The records of one kind (``pixels``, ``pwm``, ``edge``, ``read``, ``crash``)."""
        return [r for r in self.records if kind in r]

    def crash(self) -> str:
        """What the firmware died of, if it did (else an empty string)."""
        return "; ".join(str(r["crash"]) for r in self.of("crash"))

    async def wait_for(self, check: Any, timeout: float = 10.0) -> bool:
        """Wait until ``check()`` is true (re-checked as records come in)."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while not check():
            left = end - loop.time()
            if left <= 0:
                return False
            self._changed.clear()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._changed.wait(), min(left, 0.05))
        return True


def _nonblocking(fd: int) -> None:
    fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_NONBLOCK)


async def _console(board: MicroPythonBoard) -> None:
    """Typed lines act on the board; its records are printed (``main``)."""
    from referee.cards import parse_card

    loop = asyncio.get_running_loop()
    lines: asyncio.Queue[str | None] = asyncio.Queue()

    def read_stdin() -> None:
        for line in sys.stdin:
            loop.call_soon_threadsafe(lines.put_nowait, line)
        loop.call_soon_threadsafe(lines.put_nowait, None)

    threading.Thread(target=read_stdin, daemon=True).start()
    shown = 0
    while True:
        try:
            line = await asyncio.wait_for(lines.get(), 0.1)
        except TimeoutError:
            line = ""
        for rec in board.records[shown:]:
            print(json.dumps(rec), file=sys.stderr, flush=True)
        shown = len(board.records)
        if line is None:
            return
        words = line.split()
        if not words:
            continue
        cmd, args = words[0], words[1:]
        try:
            if cmd == "lay":
                board.lay(parse_card(args[0]), int(args[1]) if len(args) > 1 else 0)
            elif cmd == "tag":
                board.read_tag(bytes.fromhex(args[0]), int(args[1]) if len(args) > 1 else 0)
            elif cmd in ("press", "release"):
                board.press(int(args[0]), cmd == "press")
            elif cmd in ("mute", "unmute"):
                board.mute(cmd == "mute")
            elif cmd == "restart":
                await board.restart()
            elif cmd == "quit":
                return
            else:
                print(f"unknown command {cmd!r} (lay, tag, press, release, mute, unmute, "
                      "restart, quit)", file=sys.stderr, flush=True)
        except (IndexError, ValueError, KeyError) as exc:
            print(f"{line.strip()}: {exc}", file=sys.stderr, flush=True)


def main(argv: list[str] | None = None) -> int:
    """Run the firmware on MicroPython on a pty until ``quit`` or end of input."""
    parser = argparse.ArgumentParser(
        description="The table board's firmware on the MicroPython VM, on a pseudo-terminal.")
    parser.add_argument("--drift-ppm", type=float, default=0.0, help="the crystal's error")
    parser.add_argument("--corrupt", type=float, default=0.0, help="share of corrupted bytes")
    parser.add_argument("--drop", type=float, default=0.0, help="share of dropped bytes")
    parser.add_argument("--mpy", type=Path, help="run this mpy-cross build instead of main.py")
    args = parser.parse_args(argv)
    why = missing()
    if why is not None:
        print(f"mpboard: {why}", file=sys.stderr)
        return 2

    async def body() -> None:
        board = MicroPythonBoard(drift_ppm=args.drift_ppm, corrupt=args.corrupt,
                                 drop=args.drop, mpy=args.mpy)
        print(await board.start(), flush=True)
        try:
            await _console(board)
        finally:
            await board.close()

    asyncio.run(body())
    return 0


if __name__ == "__main__":
    sys.exit(main())
