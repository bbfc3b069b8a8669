"""The board's crystal, standing in for MicroPython's ``time`` (the harness makes it
``sys.modules["time"]``): microsecond ticks that wrap at 2**30 as on the rp2 port, from the
host's monotonic clock running ``--drift-ppm`` fast (the WebAssembly port's own ticks have
1 ms resolution). Every tick read also lets pending button edges in, as interrupts would."""

import board_shim
import harness

_PERIOD = 1 << 30
_HALF = _PERIOD >> 1


def ticks_us():
    board_shim.service()
    return harness.ticks_us()


def ticks_ms():
    board_shim.service()
    return harness.ticks_ms()


def ticks_cpu():
    return harness.ticks_us()


def ticks_diff(a, b):
    return ((a - b + _HALF) & (_PERIOD - 1)) - _HALF


def ticks_add(a, delta):
    return (a + delta) % _PERIOD


def sleep_us(us):
    harness.sleep_us(us)
    board_shim.service()


def sleep_ms(ms):
    sleep_us(ms * 1000)


def sleep(s):
    sleep_us(int(s * 1_000_000))


def time():
    return harness.ticks_ms() // 1000


def urandom(n):
    """``os.urandom``, which the WebAssembly port lacks."""
    return bytes.fromhex(harness.urandom_hex(n))
