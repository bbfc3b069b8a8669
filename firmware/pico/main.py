"""Reference firmware for the table board on a Raspberry Pi Pico (MicroPython).

It speaks the protocol of ``docs/protocol.md`` (version 1): COBS frames with CRC-16/CCITT-FALSE,
HELLO, heartbeats, time-sync replies, card reads and button edges sent reliably (kept, up to
256, and resent until acknowledged), and LED/buzzer/reader commands applied in order.

The protocol part (:class:`Firmware`) is plain Python that runs on MicroPython and CPython
alike: the host's tests run it against ``firmware_bridge/vectors.json`` (:func:`selftest`) and
against the host link in virtual time. The hardware part (:func:`run`) is for the rp2 port:
USB CDC for the link (``kbd_intr(-1)``: a 0x03 byte in a frame must not stop the program),
buttons on pins with edge interrupts stamped in the handler, WS2812 seat LEDs (``neopixel``),
a PWM buzzer. Card readers are a driver module ``card_readers.py`` next to this file
(:class:`Readers` says its shape; without one the board has no reader).

Targets MicroPython v1.27. The whole file, :func:`run` included, runs in the tests on the
MicroPython v1.27 VM (the WebAssembly port, ``firmware/harness``) with only ``machine``,
``neopixel``, the reader driver, the crystal and USB replaced, against the host's real link;
CI compiles it with ``mpy-cross`` 1.27. It has not run on a real Pico yet
(docs/protocol.md §9 says what only a Pico can show).

On the Pico: copy this ``main.py`` and ``firmware_bridge/vectors.json`` to the board; at boot
it runs the self-test (LED 0 red if it fails) and then the board.
"""

try:
    import struct
except ImportError:  # pragma: no cover - some MicroPython builds name it ustruct
    import ustruct as struct  # type: ignore[no-redef]

import time

MARKER = 0xA5
VERSION = 1
MIN_VERSION = 1
WINDOW = 32
QUEUE_LIMIT = 256
MAX_PAYLOAD = 48
MAX_ENCODED = 57

HELLO, ACK, HEARTBEAT, SYNC_REQ, SYNC_REP = 0x01, 0x02, 0x03, 0x04, 0x05
CARD_READ, BUTTON, LED, BUZZER, READER, ERROR = 0x10, 0x11, 0x20, 0x21, 0x22, 0x7F
RELIABLE = (CARD_READ, BUTTON, LED, BUZZER, READER)
E_VERSION, E_OVERFLOW = 4, 5

# --------------------------------------------------------------------------------------------
# Codec


def _table():
    t = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        t.append(crc & 0xFFFF)
    return t


_CRC = _table()


def crc16(data, crc=0xFFFF):
    """CRC-16/CCITT-FALSE."""
    for b in data:
        crc = ((crc << 8) & 0xFFFF) ^ _CRC[(crc >> 8) ^ b]
    return crc


def cobs_encode(data):
    """COBS, canonical (no extra code byte after a final run of 254)."""
    out = bytearray()
    segs = bytes(data).split(b"\x00")
    for i, seg in enumerate(segs):
        full_end = i == len(segs) - 1 and len(seg) > 0 and len(seg) % 254 == 0
        while len(seg) >= 254:
            out.append(0xFF)
            out.extend(seg[:254])
            seg = seg[254:]
        if not full_end:
            out.append(len(seg) + 1)
            out.extend(seg)
    return bytes(out)


def cobs_decode(data):
    """Inverse of cobs_encode; ``None`` if invalid."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        code = data[i]
        end = i + code
        if code == 0 or end > n:
            return None
        block = data[i + 1:end]
        if 0 in block:
            return None
        out.extend(block)
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


def encode(mtype, seq, payload):
    """One frame on the wire, delimiter included."""
    body = bytes([MARKER, mtype, seq & 0xFF, (seq >> 8) & 0xFF, len(payload)]) + payload
    c = crc16(body)
    return cobs_encode(body + bytes([c >> 8, c & 0xFF])) + b"\x00"


def parse(encoded):
    """``(type, seq, payload)`` of one COBS chunk, or ``None`` (refused)."""
    if len(encoded) > MAX_ENCODED:
        return None
    data = cobs_decode(encoded)
    if data is None or len(data) < 7 or data[0] != MARKER:
        return None
    n = data[4]
    if n > MAX_PAYLOAD or len(data) != 7 + n or crc16(data) != 0:
        return None
    return data[1], data[2] | (data[3] << 8), data[5:5 + n]


class Decoder:
    """Splits the byte stream at 0x00; counts refused frames."""

    def __init__(self):
        self.buf = bytearray()
        self.over = False
        self.bad = 0

    def feed(self, data):
        out = []
        for b in data:
            if b == 0:
                if self.over:
                    self.bad += 1
                elif self.buf:
                    f = parse(bytes(self.buf))
                    if f is None:
                        self.bad += 1
                    else:
                        out.append(f)
                self.buf = bytearray()
                self.over = False
            elif not self.over:
                self.buf.append(b)
                if len(self.buf) > MAX_ENCODED:
                    self.over = True
                    self.buf = bytearray()
        return out


def _diff(a, b):
    return ((a - b + 0x8000) & 0xFFFF) - 0x8000


# --------------------------------------------------------------------------------------------
# The board's protocol logic


class Firmware:
    """The board end of the link. ``ticks()`` gives 32-bit µs, ``ms()`` a millisecond clock
    (any origin, never wrapping), ``write(bytes)`` sends; commands go to ``on_led(seat, r, g,
    b, pattern, period_ms)``, ``on_buzzer(pattern, freq, duration_ms)``, ``on_reader(reader,
    on)``.

    The retransmission timeout is smoothed from measured round trips (RFC 6298), clamped to
    10 ms .. 1 s, ``rto_ms`` before the first measurement (docs/protocol.md §4). Every loop
    pass is cheap with a full window: resends are looked for only once one is due."""

    def __init__(self, ticks, ms, write, boot_id, readers=1, buttons=8, seats=8, name="pico",
                 on_led=None, on_buzzer=None, on_reader=None, heartbeat_ms=200, lost_ms=1200,
                 rto_ms=50):
        self.ticks, self.ms, self.write = ticks, ms, write
        self.boot_id = boot_id & 0xFFFFFFFF
        self.readers, self.buttons, self.seats, self.name = readers, buttons, seats, name
        self.on_led, self.on_buzzer, self.on_reader = on_led, on_buzzer, on_reader
        self.heartbeat_ms, self.lost_ms, self.rto_ms = heartbeat_ms, lost_ms, rto_ms
        self.dec = Decoder()
        self.useq = 0
        self.next_seq = 0
        self.queue = []  # messages not yet sent: (type, payload)
        self.unacked = {}  # seq -> [wire, deadline_ms, tries, tx, sent_ms]
        self.next_due = None  # the earliest resend deadline (None: none in flight)
        self.srtt = None
        self.rttvar = 0
        self.tx = 0
        self.dropped = 0
        self.reported = 0
        self.host_boot = None
        self.handshaken = False
        self.last_rx = None
        self.was_online = False
        self.base = 0
        self.held = {}
        self.next_hb = ms()
        self.next_hello = 0
        self._send(HELLO, self._hello(False))

    # -- sending --

    def _send(self, mtype, payload):
        self.write(encode(mtype, self.useq, payload))
        self.useq = (self.useq + 1) & 0xFFFF

    def _hello(self, reply):
        name = self.name.encode()[:32]
        return struct.pack("<BBBBIHIBBB", VERSION, MIN_VERSION, 1, 1 if reply else 0,
                           self.boot_id, self.oldest(), self.ticks(), self.readers,
                           self.buttons, self.seats) + name

    def oldest(self):
        if not self.unacked:
            return self.next_seq
        return min(self.unacked, key=lambda s: _diff(s, self.next_seq))

    def pending(self):
        return len(self.queue) + len(self.unacked)

    def _event(self, mtype, payload):
        if self.pending() >= QUEUE_LIMIT:
            self.dropped += 1
            return False
        self.queue.append((mtype, payload))
        return True

    def card(self, reader, tag, ticks=None):
        """A tag arrived on ``reader``."""
        t = self.ticks() if ticks is None else ticks & 0xFFFFFFFF
        return self._event(CARD_READ, struct.pack("<BIB", reader, t, len(tag)) + bytes(tag))

    def button(self, button, pressed, ticks=None):
        """A button edge (stamp it in the interrupt and pass ``ticks``)."""
        t = self.ticks() if ticks is None else ticks & 0xFFFFFFFF
        return self._event(BUTTON, struct.pack("<BBI", button, 1 if pressed else 0, t))

    def online(self):
        return (self.handshaken and self.last_rx is not None
                and self._elapsed(self.last_rx) <= self.lost_ms)

    def _elapsed(self, since):
        return self.ms() - since

    # -- receiving --

    def on_bytes(self, data, rx_ticks=None):
        """Bytes from the host; ``rx_ticks``: the ticks once they had all arrived (the
        time-sync receive stamp; default: now)."""
        acks = []
        for mtype, seq, payload in self.dec.feed(data):
            self.last_rx = self.ms()
            self._frame(mtype, seq, payload, acks, rx_ticks)
        if acks:
            above = []
            for s in acks:
                if _diff(s, self.base) >= 0 and s not in above:
                    above.append(s)
            chunks = [above[i:i + 15] for i in range(0, len(above), 15)] or [[]]
            for chunk in chunks:
                self._send(ACK, struct.pack("<" + "H" * (1 + len(chunk)), self.base, *chunk))

    def _frame(self, mtype, seq, p, acks, rx_ticks=None):
        if mtype == HELLO and len(p) >= 17:
            ver, minv, role, reply, boot, nseq = struct.unpack("<BBBBIH", p[:10])
            if role != 0:
                return
            if min(ver, VERSION) < max(minv, MIN_VERSION):
                self._send(ERROR, struct.pack("<BH", E_VERSION, seq) + b"no common version")
                return
            if boot != self.host_boot:
                self.host_boot = boot
                self.base = nseq
                self.held = {}
            self.handshaken = True
            if not reply:
                self._send(HELLO, self._hello(True))
                # The host (re)starts its handshake: it came back, perhaps after an outage
                # this board did not notice. Everything unacknowledged goes out again at once,
                # oldest first, right behind the HELLO.
                self._resend_all()
        elif mtype == SYNC_REQ:
            rx = self.ticks() if rx_ticks is None else rx_ticks
            self._send(SYNC_REP, struct.pack("<HII", seq, rx, self.ticks()))
        elif mtype == ACK and p and len(p) % 2 == 0:
            vals = struct.unpack("<" + "H" * (len(p) // 2), p)
            cum, listed = vals[0], vals[1:]
            newest = 0
            now = self.ms()
            for s in list(self.unacked):
                if ((s - cum + 0x8000) & 0xFFFF) >= 0x8000 and s not in listed:
                    continue  # at or above the cumulative point and not listed
                item = self.unacked.pop(s)
                if item[3] > newest:
                    newest = item[3]
                if item[2] == 1:
                    self._rtt(now - item[4])
            if newest:
                for item in self.unacked.values():
                    if item[3] < newest:
                        item[1] = now  # lost: the line keeps order
                        self.next_due = now
        elif mtype == HEARTBEAT and len(p) == 10:
            if struct.unpack("<I", p[:4])[0] != self.host_boot:
                self.handshaken = False
                self._ask_hello()
        elif mtype in RELIABLE:
            if not self.handshaken:
                self._ask_hello()
                return
            acks.append(seq)
            if _diff(seq, self.base) < 0 or seq in self.held:
                return
            self.held[seq] = (mtype, p)
            while self.base in self.held:
                self._apply(*self.held.pop(self.base))
                self.base = (self.base + 1) & 0xFFFF

    def _rtt(self, sample):
        if self.srtt is None:
            self.srtt, self.rttvar = sample, sample / 2
        else:
            self.rttvar = 0.75 * self.rttvar + 0.25 * abs(self.srtt - sample)
            self.srtt = 0.875 * self.srtt + 0.125 * sample
        self.rto_ms = int(min(max(self.srtt + max(1, 4 * self.rttvar), 10), 1000))

    def _resend_all(self):
        now = self.ms()
        for item in self.unacked.values():
            item[1] = now
            if item[2] < 2:
                item[2] = 2  # no round-trip sample from a resend
        if self.unacked:
            self.next_due = now

    def _ask_hello(self):
        now = self.ms()
        if now - self.next_hello >= 0:
            self._send(HELLO, self._hello(False))
            self.next_hello = now + 500

    def _apply(self, mtype, p):
        if mtype == LED and len(p) == 7 and self.on_led:
            seat, r, g, b, pattern, period = struct.unpack("<BBBBBH", p)
            self.on_led(seat, r, g, b, pattern, period)
        elif mtype == BUZZER and len(p) == 5 and self.on_buzzer:
            self.on_buzzer(*struct.unpack("<BHH", p))
        elif mtype == READER and len(p) == 2 and self.on_reader:
            self.on_reader(p[0], bool(p[1]))

    # -- timers --

    def poll(self):
        """Call often (every few ms): heartbeats, sends and resends."""
        now = self.ms()
        if now - self.next_hb >= 0:
            self._send(HEARTBEAT, struct.pack("<IIH", self.boot_id, self.ticks(),
                                              min(self.pending(), 0xFFFF)))
            self.next_hb = now + self.heartbeat_ms
        if self.dropped > self.reported:
            text = f"{self.dropped - self.reported} events dropped".encode()
            self.reported = self.dropped
            self._send(ERROR, struct.pack("<BH", E_OVERFLOW, 0) + text)
        online = self.online()
        if online and not self.was_online:
            self._resend_all()
        self.was_online = online
        if not online:
            return
        # Resends that are due first, oldest first, then new messages: a host that comes back
        # gets what this board kept in the order it happened.
        if self.next_due is not None and now - self.next_due >= 0:
            due = [s for s, item in self.unacked.items() if now - item[1] >= 0]
            if len(due) > 1:
                due.sort(key=lambda s: _diff(s, self.next_seq))
            for seq in due:
                item = self.unacked[seq]
                item[2] += 1
                item[1] = now + 2 * self.rto_ms
                self.tx += 1
                item[3] = self.tx
                self.write(item[0])
            self.next_due = None
            for item in self.unacked.values():
                if self.next_due is None or item[1] - self.next_due < 0:
                    self.next_due = item[1]
        if self.queue:
            oldest = self.oldest()
            while self.queue and (not self.unacked or _diff(self.next_seq, oldest) < WINDOW):
                if not self.unacked:
                    oldest = self.next_seq
                mtype, payload = self.queue.pop(0)
                wire = encode(mtype, self.next_seq, payload)
                self.tx += 1
                deadline = now + self.rto_ms
                self.unacked[self.next_seq] = [wire, deadline, 1, self.tx, now]
                if self.next_due is None or deadline - self.next_due < 0:
                    self.next_due = deadline
                self.next_seq = (self.next_seq + 1) & 0xFFFF
                self.write(wire)


def _before(a, b):
    """32-bit tick ``a`` lies before ``b`` (within half the wrap)."""
    return 0 < ((b - a) & 0xFFFFFFFF) < 0x80000000


class Debounce:
    """Button edges to presses and releases (docs/protocol.md §3): the first edge of a change
    is reported with its own ticks, the edges of the next ``quiet_us`` are bounce, and a button
    that has settled on the other level by then is reported at the end of that window.
    ``levels``: each button's level now."""

    def __init__(self, levels, quiet_us=5000):
        self.level = list(levels)
        self.until = [None] * len(self.level)
        self.quiet_us = quiet_us
        self.open = 0  # windows not yet closed

    def _close(self, i):
        self.until[i] = None
        self.open -= 1

    def _report(self, i, value, t):
        self.level[i] = value
        if self.until[i] is None:
            self.open += 1
        self.until[i] = (t + self.quiet_us) & 0xFFFFFFFF
        return value

    def edge(self, i, value, t):
        """An edge of button ``i`` that read ``value`` at ``t``: the level to report, or None."""
        if self.until[i] is not None:
            if _before(t, self.until[i]):
                return None  # bounce
            self._close(i)
        if value == self.level[i]:
            return None
        return self._report(i, value, t)

    def settle(self, i, value, now):
        """Button ``i`` reads ``value`` at ``now``: the level to report once its window is
        over and it settled on the other level, or None."""
        until = self.until[i]
        if until is None or _before(now, until):
            return None
        self._close(i)
        if value == self.level[i]:
            return None
        return self._report(i, value, now)


# --------------------------------------------------------------------------------------------
# Self-test against vectors.json


def selftest(vectors):
    """Check the codec against the shared vectors; returns a list of failures (empty: good)."""
    fails = []
    for v in vectors["crc16"]["vectors"]:
        if f"{crc16(bytes.fromhex(v['data'])):04X}" != v["crc"]:
            fails.append("crc " + v["data"])
    for v in vectors["cobs"]:
        raw, enc = bytes.fromhex(v["raw"]), bytes.fromhex(v["encoded"])
        if cobs_encode(raw) != enc or cobs_decode(enc) != raw:
            fails.append("cobs " + v["raw"][:16])
    for v in vectors["frames"]:
        frame = bytes.fromhex(v["frame"])
        wire = bytes.fromhex(v["wire"])
        got = encode(frame[1], v["seq"], frame[5:-2])
        if got != wire:
            fails.append("encode " + v["name"])
        parsed = Decoder().feed(wire)
        if parsed != [(frame[1], v["seq"], frame[5:-2])]:
            fails.append("decode " + v["name"])
    for v in vectors["bad_frames"]:
        if v["error"] in ("unknown_type", "payload"):
            continue  # the frame layer passes these; the message layer refuses them
        dec = Decoder()
        if dec.feed(bytes.fromhex(v["wire"])) or dec.bad != 1:
            fails.append("refuse " + v["name"])
    return fails


# --------------------------------------------------------------------------------------------
# The rp2 board


class Readers:
    """Card readers: ``poll()`` returns ``[(reader, tag_bytes), ...]`` for tags that just
    arrived (once per presence); ``count`` readers, ``enabled`` one flag each. This one has no
    reader. A driver (MFRC522, PN532, ...) is a module ``card_readers.py`` next to ``main.py``
    with a class ``Readers`` of the same shape: :func:`run` uses it when it is there."""

    def __init__(self, count=1):
        self.count = count
        self.enabled = [True] * count

    def poll(self):
        return []


def run(button_pins=(2, 3, 4, 5, 6, 7, 8, 9), led_pin=16, seats=8, buzzer_pin=15):
    """The board main loop (rp2 MicroPython)."""
    import json
    import os
    import select
    import sys

    import machine
    import micropython
    import neopixel

    micropython.kbd_intr(-1)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    pixels = neopixel.NeoPixel(machine.Pin(led_pin), seats)
    try:
        with open("vectors.json") as f:
            if selftest(json.load(f)):
                pixels[0] = (64, 0, 0)
                pixels.write()
    except OSError:
        pass

    # ticks_us/ticks_ms wrap at 2**30 on rp2: extend them to a 32-bit µs count (the protocol's
    # ticks) and an unbounded ms count (the firmware's timers). Both must be read at least
    # every few minutes, which the main loop does.
    state = {"last": time.ticks_us(), "t32": 0, "last_ms": time.ticks_ms(), "ms": 0}

    def ticks():
        now = time.ticks_us()
        state["t32"] = (state["t32"] + time.ticks_diff(now, state["last"])) & 0xFFFFFFFF
        state["last"] = now
        return state["t32"]

    def ms():
        now = time.ticks_ms()
        state["ms"] += time.ticks_diff(now, state["last_ms"])
        state["last_ms"] = now
        return state["ms"]

    ring = [(0, 0, 0)] * 64
    head = [0, 0]

    def on_edge(pin, index):
        ring[head[0] % 64] = (index, pin.value(), ticks())
        head[0] += 1

    pins = []
    for i, n in enumerate(button_pins):
        p = machine.Pin(n, machine.Pin.IN, machine.Pin.PULL_UP)
        p.irq(lambda pin, i=i: on_edge(pin, i), machine.Pin.IRQ_RISING | machine.Pin.IRQ_FALLING)
        pins.append(p)
    debounce = Debounce([p.value() for p in pins])

    buzzer = machine.PWM(machine.Pin(buzzer_pin))
    buzz_until = [None]
    try:  # the board's card reader driver, when one is installed next to main.py
        from card_readers import Readers as Driver
    except ImportError:
        Driver = Readers
    readers = Driver()

    def on_led(seat, r, g, b, pattern, period):
        for s in (range(seats) if seat == 0xFF else (seat,)):
            if s < seats:
                pixels[s] = (r, g, b) if pattern else (0, 0, 0)
        pixels.write()

    def on_buzzer(pattern, freq, duration):
        if pattern == 0:
            buzzer.duty_u16(0)
            return
        buzzer.freq(max(freq, 20))
        buzzer.duty_u16(32768)
        buzz_until[0] = ms() + duration

    def on_reader(reader, on):
        for r in (range(readers.count) if reader == 0xFF else (reader,)):
            if r < readers.count:
                readers.enabled[r] = on

    boot_id = int.from_bytes(os.urandom(4), "little")
    fw = Firmware(ticks, ms, stdout.write, boot_id, readers=readers.count,
                  buttons=len(pins), seats=seats, on_led=on_led, on_buzzer=on_buzzer,
                  on_reader=on_reader)
    poller = select.poll()
    poller.register(stdin, select.POLLIN)
    while True:
        while head[1] < head[0]:
            index, value, t = ring[head[1] % 64]
            head[1] += 1
            if debounce.edge(index, value, t) is not None:
                fw.button(index, value == 0, t)  # pull-up: pressed reads 0
        if debounce.open:
            now = ticks()
            for i in range(len(pins)):
                if debounce.settle(i, pins[i].value(), now) is not None:
                    fw.button(i, debounce.level[i] == 0, now)
        for reader, tag in readers.poll():
            if readers.enabled[reader]:
                fw.card(reader, tag)
        if poller.poll(2):
            # Everything that has arrived, in one go (up to 64 bytes: a USB packet): one pass
            # of the loop per byte would leave the host's frames waiting behind each other.
            data = stdin.read(1)
            while data and len(data) < 64 and poller.poll(0):
                more = stdin.read(1)
                if not more:
                    break
                data += more
            if data:
                fw.on_bytes(data, ticks())
        if buzz_until[0] is not None and ms() >= buzz_until[0]:
            buzzer.duty_u16(0)
            buzz_until[0] = None
        fw.poll()


if __name__ == "__main__":
    try:
        import machine  # noqa: F401
    except ImportError:
        pass  # CPython: imported for its protocol part
    else:
        run()
