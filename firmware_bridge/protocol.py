"""The wire protocol between the Pi and the table board: messages, frames, CRC, COBS, decoding.

A frame on the wire is ``COBS(header + payload + crc) + b"\\x00"`` (see ``docs/protocol.md``):

=======  ====  =====================================================================
offset   size  field
=======  ====  =====================================================================
0        1     marker ``0xA5`` (constant in every protocol version)
1        1     message type (:class:`MsgType`)
2        2     sequence number, little-endian (reliable types: the reliable sequence
               that ACKs name; other types: a free-running counter)
4        1     payload length ``n`` (0..:data:`MAX_PAYLOAD`)
5        n     payload, laid out per type (little-endian integers)
5+n      2     CRC-16/CCITT-FALSE of bytes ``0 .. 4+n``, **big-endian**
=======  ====  =====================================================================

CRC-16/CCITT-FALSE: polynomial 0x1021, initial value 0xFFFF, no reflection, no final XOR;
``crc16(b"123456789") == 0x29B1``. Appended big-endian, the CRC of a whole good frame
(CRC included) is 0.

Everything here is pure: no I/O, no clock. :class:`StreamDecoder` turns any byte string into
:class:`Frame` objects and :class:`DecodeError` records and never raises.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from enum import IntEnum
from typing import ClassVar

from referee.errors import RefereeError

#: First byte of every decoded frame; a damaged frame passes it only 1 time in 256.
MARKER = 0xA5
#: Protocol version this code speaks (negotiated in HELLO).
PROTOCOL_VERSION = 1
#: Oldest version this code still speaks.
MIN_PROTOCOL_VERSION = 1
#: Largest payload of any message.
MAX_PAYLOAD = 48
HEADER_SIZE = 5
CRC_SIZE = 2
#: Largest decoded frame (header + payload + CRC).
MAX_FRAME = HEADER_SIZE + MAX_PAYLOAD + CRC_SIZE
#: Largest COBS-encoded frame, without its 0x00 delimiter.
MAX_ENCODED = MAX_FRAME + (MAX_FRAME + 253) // 254
#: Reliable frames a sender may have unacknowledged at once (a protocol constant: the
#: receiver's duplicate filter depends on it).
WINDOW = 32
#: Longest tag id (ISO 14443 UIDs are 4, 7 or 10 bytes; room for short barcodes).
MAX_TAG = 16
#: Longest text in HELLO (name) or ERROR (message), in UTF-8 bytes.
MAX_TEXT = 32
#: Seat/reader number meaning "all of them" in LED and READER.
ALL = 0xFF


class MsgType(IntEnum):
    """Message types; the direction is in the docstring of each message class."""

    HELLO = 0x01
    ACK = 0x02
    HEARTBEAT = 0x03
    TIME_SYNC_REQUEST = 0x04
    TIME_SYNC_REPLY = 0x05
    CARD_READ = 0x10
    BUTTON = 0x11
    LED = 0x20
    BUZZER = 0x21
    READER = 0x22
    ERROR = 0x7F


#: Types that are acknowledged and retransmitted until acknowledged (dedupe by sequence).
RELIABLE_TYPES = frozenset(
    {MsgType.CARD_READ, MsgType.BUTTON, MsgType.LED, MsgType.BUZZER, MsgType.READER}
)


class Role(IntEnum):
    """Who sent a HELLO."""

    HOST = 0
    BOARD = 1


class LedPattern(IntEnum):
    """What a seat LED does with its colour."""

    OFF = 0
    SOLID = 1
    BLINK = 2
    PULSE = 3
    FLASH = 4  # once, for period_ms


class BuzzerPattern(IntEnum):
    """Buzzer sounds."""

    OFF = 0
    TONE = 1  # one tone of duration_ms
    CHIRP = 2  # two short beeps
    ALARM = 3  # repeating until OFF or duration_ms


class ErrorCode(IntEnum):
    """Codes of ERROR messages."""

    BAD_FRAME = 1  # frames that failed to decode (text says how many)
    UNKNOWN_TYPE = 2
    BAD_PAYLOAD = 3
    VERSION = 4  # no common protocol version
    QUEUE_OVERFLOW = 5  # the board had to drop events (text says how many)
    READER_FAULT = 6
    NOT_READY = 7  # a reliable frame before the handshake


class PayloadError(RefereeError, ValueError):
    """A payload that does not fit its message type's layout."""


# --------------------------------------------------------------------------------------------
# CRC-16/CCITT-FALSE


def _crc_table() -> tuple[int, ...]:
    table = []
    for byte in range(256):
        crc = byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else (crc << 1)
        table.append(crc & 0xFFFF)
    return tuple(table)


_CRC_TABLE = _crc_table()


def crc16(data: bytes | bytearray | memoryview, crc: int = 0xFFFF) -> int:
    """CRC-16/CCITT-FALSE (poly 0x1021, init 0xFFFF, not reflected, no xorout) of ``data``."""
    table = _CRC_TABLE
    for byte in bytes(data):
        crc = ((crc << 8) & 0xFFFF) ^ table[(crc >> 8) ^ byte]
    return crc


# --------------------------------------------------------------------------------------------
# COBS


class CobsError(RefereeError, ValueError):
    """Bytes that are not a valid COBS encoding."""


def cobs_encode(data: bytes | bytearray) -> bytes:
    """Consistent Overhead Byte Stuffing: ``data`` with no 0x00 byte left (no delimiter added).

    Canonical form: a run of exactly 254 non-zero bytes at the very end takes no extra code
    byte (``01..FE`` encodes as ``FF 01..FE``).
    """
    out = bytearray()
    segments = bytes(data).split(b"\x00")
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        full_run_at_end = last and len(seg) > 0 and len(seg) % 254 == 0
        while len(seg) >= 254:
            out.append(0xFF)
            out += seg[:254]
            seg = seg[254:]
        if not full_run_at_end:
            out.append(len(seg) + 1)
            out += seg
    return bytes(out)


def cobs_decode(data: bytes | bytearray) -> bytes:
    """Inverse of :func:`cobs_encode`; raises :class:`CobsError` on a zero byte or a block
    that runs past the end."""
    out = bytearray()
    i, n = 0, len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise CobsError(f"zero byte at offset {i}")
        end = i + code
        if end > n:
            raise CobsError(f"block at offset {i} needs {code - 1} bytes, {n - i - 1} left")
        block = data[i + 1:end]
        if 0 in block:
            raise CobsError(f"zero byte inside the block at offset {i}")
        out += block
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


# --------------------------------------------------------------------------------------------
# Messages


def _text(raw: bytes, what: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError:
        raise PayloadError(f"{what} is not UTF-8") from None


def _bool(value: int, what: str) -> bool:
    if value not in (0, 1):
        raise PayloadError(f"{what} must be 0 or 1, got {value}")
    return bool(value)


def _u8(value: int, what: str) -> int:
    if not 0 <= value <= 0xFF:
        raise ValueError(f"{what} must be 0..255, got {value}")
    return value


def _u16(value: int, what: str) -> int:
    if not 0 <= value <= 0xFFFF:
        raise ValueError(f"{what} must be 0..65535, got {value}")
    return value


def _u32(value: int, what: str) -> int:
    if not 0 <= value <= 0xFFFF_FFFF:
        raise ValueError(f"{what} must be 0..2**32-1, got {value}")
    return value


def _exact(payload: bytes, size: int, name: str) -> None:
    if len(payload) != size:
        raise PayloadError(f"{name} payload must be {size} bytes, got {len(payload)}")


@dataclass(frozen=True, slots=True)
class Hello:
    """Both ways. Version handshake; a HELLO without ``reply`` asks the peer for a HELLO reply.

    ``boot_id`` is random per start of the sender (a change means it restarted);
    ``next_seq`` is the oldest reliable sequence the sender may still (re)send, where the
    receiver's duplicate filter starts; the board fills in its ``ticks`` and hardware counts.
    """

    TYPE: ClassVar[MsgType] = MsgType.HELLO
    _FMT: ClassVar[struct.Struct] = struct.Struct("<BBBBIHIBBB")

    role: Role
    boot_id: int
    next_seq: int
    reply: bool = False
    version: int = PROTOCOL_VERSION
    min_version: int = MIN_PROTOCOL_VERSION
    ticks: int = 0
    readers: int = 0
    buttons: int = 0
    seats: int = 0
    name: str = ""

    def pack(self) -> bytes:
        """The payload bytes."""
        name = self.name.encode("utf-8")
        if len(name) > MAX_TEXT:
            raise ValueError(f"name is longer than {MAX_TEXT} bytes")
        return self._FMT.pack(
            _u8(self.version, "version"), _u8(self.min_version, "min_version"),
            int(self.role), int(self.reply), _u32(self.boot_id, "boot_id"),
            _u16(self.next_seq, "next_seq"), _u32(self.ticks, "ticks"),
            _u8(self.readers, "readers"), _u8(self.buttons, "buttons"), _u8(self.seats, "seats"),
        ) + name

    @classmethod
    def unpack(cls, payload: bytes) -> Hello:
        """Read a payload; raises :class:`PayloadError`."""
        size = cls._FMT.size
        if not size <= len(payload) <= size + MAX_TEXT:
            raise PayloadError(f"HELLO payload must be {size}..{size + MAX_TEXT} bytes")
        ver, minv, role, reply, boot, nseq, ticks, rd, bt, st = cls._FMT.unpack_from(payload)
        if role not in (0, 1):
            raise PayloadError(f"HELLO role must be 0 or 1, got {role}")
        if minv > ver or ver == 0:
            raise PayloadError(f"HELLO versions {minv}..{ver} make no range")
        return cls(Role(role), boot, nseq, _bool(reply, "HELLO reply"), ver, minv, ticks,
                   rd, bt, st, _text(payload[size:], "HELLO name"))


@dataclass(frozen=True, slots=True)
class Ack:
    """Both ways. Acknowledges reliable frames: every sequence before ``cumulative`` (within a
    window of it), and each of ``seqs`` (0..15 of them) received out of order."""

    TYPE: ClassVar[MsgType] = MsgType.ACK
    MAX_SEQS: ClassVar[int] = 15

    cumulative: int
    seqs: tuple[int, ...] = ()

    def pack(self) -> bytes:
        """The payload bytes."""
        if len(self.seqs) > self.MAX_SEQS:
            raise ValueError(f"an ACK names at most {self.MAX_SEQS} sequence numbers")
        values = (self.cumulative, *self.seqs)
        return b"".join(struct.pack("<H", _u16(s, "seq")) for s in values)

    @classmethod
    def unpack(cls, payload: bytes) -> Ack:
        """Read a payload; raises :class:`PayloadError`."""
        if not payload or len(payload) % 2 or len(payload) > 2 * (cls.MAX_SEQS + 1):
            raise PayloadError("ACK payload must be 1..16 little-endian u16 sequence numbers")
        values = tuple(v for (v,) in struct.iter_unpack("<H", payload))
        return cls(values[0], values[1:])


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """Both ways, every heartbeat interval: the sender's boot id, its ticks (board) and how
    many reliable messages it has waiting or unacknowledged."""

    TYPE: ClassVar[MsgType] = MsgType.HEARTBEAT
    _FMT: ClassVar[struct.Struct] = struct.Struct("<IIH")

    boot_id: int
    ticks: int = 0
    pending: int = 0

    def pack(self) -> bytes:
        """The payload bytes."""
        return self._FMT.pack(_u32(self.boot_id, "boot_id"), _u32(self.ticks, "ticks"),
                              min(max(self.pending, 0), 0xFFFF))

    @classmethod
    def unpack(cls, payload: bytes) -> Heartbeat:
        """Read a payload; raises :class:`PayloadError`."""
        _exact(payload, cls._FMT.size, "HEARTBEAT")
        return cls(*cls._FMT.unpack(payload))


@dataclass(frozen=True, slots=True)
class TimeSyncRequest:
    """Host → board. No payload: the board answers with the request's sequence number and its
    ticks at receipt and at reply."""

    TYPE: ClassVar[MsgType] = MsgType.TIME_SYNC_REQUEST

    def pack(self) -> bytes:
        """The payload bytes (none)."""
        return b""

    @classmethod
    def unpack(cls, payload: bytes) -> TimeSyncRequest:
        """Read a payload; raises :class:`PayloadError`."""
        _exact(payload, 0, "TIME_SYNC_REQUEST")
        return cls()


@dataclass(frozen=True, slots=True)
class TimeSyncReply:
    """Board → host. ``request_seq`` of the request; ``rx_ticks`` when it arrived (t2),
    ``tx_ticks`` when this reply left (t3)."""

    TYPE: ClassVar[MsgType] = MsgType.TIME_SYNC_REPLY
    _FMT: ClassVar[struct.Struct] = struct.Struct("<HII")

    request_seq: int
    rx_ticks: int
    tx_ticks: int

    def pack(self) -> bytes:
        """The payload bytes."""
        return self._FMT.pack(_u16(self.request_seq, "request_seq"),
                              _u32(self.rx_ticks, "rx_ticks"), _u32(self.tx_ticks, "tx_ticks"))

    @classmethod
    def unpack(cls, payload: bytes) -> TimeSyncReply:
        """Read a payload; raises :class:`PayloadError`."""
        _exact(payload, cls._FMT.size, "TIME_SYNC_REPLY")
        return cls(*cls._FMT.unpack(payload))


@dataclass(frozen=True, slots=True)
class CardRead:
    """Board → host, reliable. Reader ``reader`` saw tag ``tag`` at board time ``ticks`` (µs)."""

    TYPE: ClassVar[MsgType] = MsgType.CARD_READ
    _FMT: ClassVar[struct.Struct] = struct.Struct("<BIB")

    reader: int
    tag: bytes
    ticks: int

    def pack(self) -> bytes:
        """The payload bytes."""
        if not 1 <= len(self.tag) <= MAX_TAG:
            raise ValueError(f"a tag id is 1..{MAX_TAG} bytes")
        return self._FMT.pack(_u8(self.reader, "reader"), _u32(self.ticks, "ticks"),
                              len(self.tag)) + bytes(self.tag)

    @classmethod
    def unpack(cls, payload: bytes) -> CardRead:
        """Read a payload; raises :class:`PayloadError`."""
        size = cls._FMT.size
        if len(payload) < size + 1:
            raise PayloadError("CARD_READ payload too short")
        reader, ticks, n = cls._FMT.unpack_from(payload)
        if not 1 <= n <= MAX_TAG or len(payload) != size + n:
            raise PayloadError(f"CARD_READ tag length {n} does not fit a {len(payload)}-byte "
                               "payload")
        return cls(reader, bytes(payload[size:]), ticks)


@dataclass(frozen=True, slots=True)
class Button:
    """Board → host, reliable. Button ``button`` went down (``pressed``) or up at ``ticks``."""

    TYPE: ClassVar[MsgType] = MsgType.BUTTON
    _FMT: ClassVar[struct.Struct] = struct.Struct("<BBI")

    button: int
    pressed: bool
    ticks: int

    def pack(self) -> bytes:
        """The payload bytes."""
        return self._FMT.pack(_u8(self.button, "button"), int(bool(self.pressed)),
                              _u32(self.ticks, "ticks"))

    @classmethod
    def unpack(cls, payload: bytes) -> Button:
        """Read a payload; raises :class:`PayloadError`."""
        _exact(payload, cls._FMT.size, "BUTTON")
        button, pressed, ticks = cls._FMT.unpack(payload)
        return cls(button, _bool(pressed, "BUTTON pressed"), ticks)


@dataclass(frozen=True, slots=True)
class Led:
    """Host → board, reliable. Seat LED (``ALL`` = every seat) colour and pattern."""

    TYPE: ClassVar[MsgType] = MsgType.LED
    _FMT: ClassVar[struct.Struct] = struct.Struct("<BBBBBH")

    seat: int
    rgb: tuple[int, int, int] = (0, 0, 0)
    pattern: LedPattern = LedPattern.SOLID
    period_ms: int = 0

    def pack(self) -> bytes:
        """The payload bytes."""
        r, g, b = (_u8(c, "colour") for c in self.rgb)
        return self._FMT.pack(_u8(self.seat, "seat"), r, g, b, int(self.pattern),
                              _u16(self.period_ms, "period_ms"))

    @classmethod
    def unpack(cls, payload: bytes) -> Led:
        """Read a payload; raises :class:`PayloadError`."""
        _exact(payload, cls._FMT.size, "LED")
        seat, r, g, b, pattern, period = cls._FMT.unpack(payload)
        try:
            pat = LedPattern(pattern)
        except ValueError:
            raise PayloadError(f"LED pattern {pattern} is unknown") from None
        return cls(seat, (r, g, b), pat, period)


@dataclass(frozen=True, slots=True)
class Buzzer:
    """Host → board, reliable. Sound the buzzer."""

    TYPE: ClassVar[MsgType] = MsgType.BUZZER
    _FMT: ClassVar[struct.Struct] = struct.Struct("<BHH")

    pattern: BuzzerPattern = BuzzerPattern.TONE
    freq_hz: int = 2000
    duration_ms: int = 100

    def pack(self) -> bytes:
        """The payload bytes."""
        return self._FMT.pack(int(self.pattern), _u16(self.freq_hz, "freq_hz"),
                              _u16(self.duration_ms, "duration_ms"))

    @classmethod
    def unpack(cls, payload: bytes) -> Buzzer:
        """Read a payload; raises :class:`PayloadError`."""
        _exact(payload, cls._FMT.size, "BUZZER")
        pattern, freq, duration = cls._FMT.unpack(payload)
        try:
            pat = BuzzerPattern(pattern)
        except ValueError:
            raise PayloadError(f"BUZZER pattern {pattern} is unknown") from None
        return cls(pat, freq, duration)


@dataclass(frozen=True, slots=True)
class Reader:
    """Host → board, reliable. Switch card reader ``reader`` (``ALL`` = every one) on or off."""

    TYPE: ClassVar[MsgType] = MsgType.READER

    reader: int
    on: bool

    def pack(self) -> bytes:
        """The payload bytes."""
        return bytes((_u8(self.reader, "reader"), int(bool(self.on))))

    @classmethod
    def unpack(cls, payload: bytes) -> Reader:
        """Read a payload; raises :class:`PayloadError`."""
        _exact(payload, 2, "READER")
        return cls(payload[0], _bool(payload[1], "READER on"))


@dataclass(frozen=True, slots=True)
class Error:
    """Both ways, not acknowledged. Something went wrong at the sender: ``code``, the sequence
    number it is about (``ref_seq``, 0 if none) and words for a person."""

    TYPE: ClassVar[MsgType] = MsgType.ERROR
    _FMT: ClassVar[struct.Struct] = struct.Struct("<BH")

    code: int
    ref_seq: int = 0
    text: str = ""

    def pack(self) -> bytes:
        """The payload bytes (the text cut to :data:`MAX_TEXT` bytes on a character edge)."""
        raw = self.text.encode("utf-8")[:MAX_TEXT].decode("utf-8", "ignore").encode("utf-8")
        return self._FMT.pack(_u8(self.code, "code"), _u16(self.ref_seq, "ref_seq")) + raw

    @classmethod
    def unpack(cls, payload: bytes) -> Error:
        """Read a payload; raises :class:`PayloadError`."""
        size = cls._FMT.size
        if not size <= len(payload) <= size + MAX_TEXT:
            raise PayloadError(f"ERROR payload must be {size}..{size + MAX_TEXT} bytes")
        code, ref = cls._FMT.unpack_from(payload)
        return cls(code, ref, _text(payload[size:], "ERROR text"))


Message = (
    Hello | Ack | Heartbeat | TimeSyncRequest | TimeSyncReply | CardRead | Button | Led
    | Buzzer | Reader | Error
)

MESSAGE_CLASSES: dict[MsgType, type[Message]] = {
    cls.TYPE: cls
    for cls in (Hello, Ack, Heartbeat, TimeSyncRequest, TimeSyncReply, CardRead, Button, Led,
                Buzzer, Reader, Error)
}


def is_reliable(msg: Message) -> bool:
    """True for the message types that are acknowledged and retransmitted."""
    return msg.TYPE in RELIABLE_TYPES


# --------------------------------------------------------------------------------------------
# Frames


@dataclass(frozen=True, slots=True)
class Frame:
    """One good frame: its sequence number and message."""

    seq: int
    msg: Message

    @property
    def type(self) -> MsgType:
        """The message type."""
        return self.msg.TYPE


@dataclass(frozen=True, slots=True)
class DecodeError:
    """A frame that was refused, and why. ``kind`` is one of :data:`DECODE_ERROR_KINDS`."""

    kind: str
    detail: str
    raw: bytes = field(repr=False, default=b"")


#: ``cobs``: bad COBS; ``too_long``: no delimiter within :data:`MAX_ENCODED` bytes;
#: ``short``: fewer than header + CRC; ``marker``: first byte not :data:`MARKER`;
#: ``length``: length byte disagrees with the frame size; ``crc``: CRC mismatch;
#: ``unknown_type``: good CRC, type not known; ``payload``: payload does not fit its type.
DECODE_ERROR_KINDS = ("cobs", "too_long", "short", "marker", "length", "crc", "unknown_type",
                      "payload")


def frame_bytes(seq: int, msg: Message) -> bytes:
    """The decoded frame (header, payload, CRC) before COBS."""
    payload = msg.pack()
    if len(payload) > MAX_PAYLOAD:
        raise ValueError(f"payload of {len(payload)} bytes is over {MAX_PAYLOAD}")
    body = struct.pack("<BBHB", MARKER, int(msg.TYPE), _u16(seq, "seq"), len(payload)) + payload
    return body + crc16(body).to_bytes(2, "big")


def encode_frame(seq: int, msg: Message) -> bytes:
    """The bytes on the wire for one message: COBS-encoded frame and its 0x00 delimiter."""
    return cobs_encode(frame_bytes(seq, msg)) + b"\x00"


def raw_frame(type_byte: int, seq: int, payload: bytes) -> bytes:
    """The wire bytes of a frame with a good CRC around *any* type byte and payload (up to 255
    bytes): what a confused or hostile sender could put on the line, for fault injection. The
    receiver's checks after the CRC (type, length, payload layout) are what refuse it."""
    if len(payload) > 255:
        raise ValueError("the length byte holds at most 255")
    body = struct.pack("<BBHB", MARKER, _u8(type_byte, "type"), _u16(seq, "seq"),
                       len(payload)) + payload
    return cobs_encode(body + crc16(body).to_bytes(2, "big")) + b"\x00"


def parse_frame(data: bytes) -> Frame | DecodeError:
    """Check and read one decoded frame (after COBS)."""
    n = len(data)
    if n < HEADER_SIZE + CRC_SIZE:
        return DecodeError("short", f"{n} bytes, a frame has at least {HEADER_SIZE + CRC_SIZE}",
                           data)
    if data[0] != MARKER:
        return DecodeError("marker", f"first byte 0x{data[0]:02X}, expected 0x{MARKER:02X}", data)
    length = data[4]
    if length > MAX_PAYLOAD or n != HEADER_SIZE + length + CRC_SIZE:
        return DecodeError("length", f"length byte {length} but {n} bytes", data)
    if crc16(data) != 0:
        want = int.from_bytes(data[-2:], "big")
        return DecodeError("crc", f"CRC 0x{crc16(data[:-2]):04X}, frame says 0x{want:04X}", data)
    seq = data[2] | (data[3] << 8)
    try:
        mtype = MsgType(data[1])
    except ValueError:
        return DecodeError("unknown_type", f"type 0x{data[1]:02X} (seq {seq})", data)
    try:
        msg = MESSAGE_CLASSES[mtype].unpack(bytes(data[HEADER_SIZE:HEADER_SIZE + length]))
    except PayloadError as exc:
        return DecodeError("payload", f"{mtype.name} seq {seq}: {exc}", data)
    return Frame(seq, msg)


def decode_frame(encoded: bytes) -> Frame | DecodeError:
    """One frame from its COBS bytes (without the 0x00 delimiter)."""
    if len(encoded) > MAX_ENCODED:
        return DecodeError("too_long", f"{len(encoded)} bytes before the delimiter", encoded)
    try:
        data = cobs_decode(encoded)
    except CobsError as exc:
        return DecodeError("cobs", str(exc), encoded)
    return parse_frame(data)


class StreamDecoder:
    """Splits a byte stream at 0x00 delimiters and decodes each frame.

    :meth:`feed` takes any bytes and returns the frames and :class:`DecodeError` records
    completed by them, in order; it never raises. Empty frames (0x00 0x00, used to resync) are
    skipped silently. Bytes before the first delimiter after a start may be a partial frame:
    they are decoded like any other and usually refused.
    """

    def __init__(self) -> None:
        self._buf = bytearray()
        self._overflow = 0
        self.frames = 0
        self.errors = 0

    def feed(self, data: bytes | bytearray | memoryview) -> list[Frame | DecodeError]:
        """Frames and errors completed by ``data``."""
        out: list[Frame | DecodeError] = []
        view = bytes(data)
        start = 0
        while True:
            end = view.find(0, start)
            if end < 0:
                chunk = view[start:]
                if self._overflow:
                    self._overflow += len(chunk)
                else:
                    room = MAX_ENCODED - len(self._buf)
                    if len(chunk) > room:
                        self._overflow = len(self._buf) + len(chunk)
                        self._buf.clear()
                    else:
                        self._buf += chunk
                break
            chunk = view[start:end]
            start = end + 1
            if self._overflow:
                size = self._overflow + len(chunk)
                self._overflow = 0
                self._buf.clear()
                out.append(DecodeError("too_long", f"{size} bytes before the delimiter"))
                continue
            if len(self._buf) + len(chunk) > MAX_ENCODED:
                size = len(self._buf) + len(chunk)
                self._buf.clear()
                out.append(DecodeError("too_long", f"{size} bytes before the delimiter"))
                continue
            encoded = bytes(self._buf) + chunk
            self._buf.clear()
            if not encoded:
                continue
            out.append(decode_frame(encoded))
        for item in out:
            if isinstance(item, Frame):
                self.frames += 1
            else:
                self.errors += 1
        return out

    def reset(self) -> None:
        """Forget a partial frame (after a port reopen)."""
        self._buf.clear()
        self._overflow = 0
