"""Test vectors of the wire protocol, shared with the board firmware (``vectors.json``).

``vectors.json`` is data: CRC-16/CCITT-FALSE check values, COBS examples, one good frame of
every message type (the message as JSON fields and its exact wire bytes) and damaged frames
with the :class:`~firmware_bridge.protocol.DecodeError` kind they must give. Both the host tests
and ``firmware/pico/main.py`` (its self-test) check themselves against it.

``python -m firmware_bridge.vectors`` prints the vectors this code produces; the file is kept
as written, so a change of the protocol shows up as a failing test, not a silent new file.
"""

from __future__ import annotations

import dataclasses
import json
import sys
from importlib import resources
from typing import Any

from firmware_bridge.protocol import MESSAGE_CLASSES as _CLASSES
from firmware_bridge.protocol import (
    Ack,
    Button,
    Buzzer,
    BuzzerPattern,
    CardRead,
    Error,
    ErrorCode,
    Heartbeat,
    Hello,
    Led,
    LedPattern,
    Message,
    MsgType,
    Reader,
    Role,
    TimeSyncReply,
    TimeSyncRequest,
    cobs_encode,
    crc16,
    encode_frame,
    frame_bytes,
)

#: One message of each type, as in the file.
SAMPLES: list[tuple[str, int, Message]] = [
    ("hello from the host", 0, Hello(Role.HOST, 0x12345678, 0, name="referee")),
    ("hello reply from the board", 1, Hello(Role.BOARD, 0xCAFEF00D, 40, reply=True,
                                            ticks=4_294_967_000, readers=4, buttons=8, seats=6,
                                            name="pico")),
    ("ack: cumulative 41, and 43", 2, Ack(41, (43,))),
    ("heartbeat from the board", 3, Heartbeat(0xCAFEF00D, 1_000_000, 2)),
    ("time-sync request", 4, TimeSyncRequest()),
    ("time-sync reply", 5, TimeSyncReply(4, 123_456_789, 123_456_801)),
    ("card read, 7-byte NFC uid", 41, CardRead(1, bytes.fromhex("04A1B2C3D4E5F6"), 0xFFFFFF00)),
    ("card read, tag with zero bytes", 42, CardRead(0, bytes.fromhex("00000000"), 0)),
    ("button 3 pressed", 43, Button(3, True, 2_500_000)),
    ("button 3 released", 44, Button(3, False, 2_580_000)),
    ("seat 2 LED blinking green", 7, Led(2, (0, 255, 0), LedPattern.BLINK, 500)),
    ("every seat LED off", 8, Led(0xFF, (0, 0, 0), LedPattern.OFF, 0)),
    ("buzzer chirp", 9, Buzzer(BuzzerPattern.CHIRP, 2500, 60)),
    ("reader 1 off", 10, Reader(1, False)),
    ("error: queue overflow", 11, Error(ErrorCode.QUEUE_OVERFLOW, 0, "3 events dropped")),
]


def message_to_json(msg: Message) -> dict[str, Any]:
    """``{"type": NAME, "fields": {...}}`` with bytes as hex and enums as numbers."""
    fields: dict[str, Any] = {}
    for f in dataclasses.fields(msg):
        name, value = f.name, getattr(msg, f.name)
        if isinstance(value, bytes):
            value = value.hex().upper()
        elif isinstance(value, tuple):
            value = list(value)
        elif isinstance(value, bool):
            pass
        elif isinstance(value, int):
            value = int(value)
        fields[name] = value
    return {"type": msg.TYPE.name, "fields": fields}


def message_from_json(obj: dict[str, Any]) -> Message:
    """Inverse of :func:`message_to_json`."""
    cls = _CLASSES[MsgType[obj["type"]]]
    fields = dict(obj["fields"])
    for name, value in fields.items():
        if name == "tag":
            fields[name] = bytes.fromhex(value)
        elif isinstance(value, list):
            fields[name] = tuple(value)
    if cls is Hello:
        fields["role"] = Role(fields["role"])
    elif cls is Led:
        fields["pattern"] = LedPattern(fields["pattern"])
    elif cls is Buzzer:
        fields["pattern"] = BuzzerPattern(fields["pattern"])
    return cls(**fields)


def build_vectors() -> dict[str, Any]:
    """The vectors as this code computes them."""
    crc = [{"data": d.hex().upper(), "crc": f"{crc16(d):04X}"}
           for d in (b"", b"123456789", b"\x00", b"\xff\xff", bytes(range(32)))]
    cobs_cases = [b"", b"\x00", b"\x00\x00", b"\x11\x22\x00\x33", b"\x11\x22\x33\x44",
                  b"\x11\x00\x00\x00", bytes(range(1, 255)), bytes(range(0, 255)),
                  bytes(range(1, 256)), bytes(range(2, 256)) + b"\x00"]
    cobs = [{"raw": c.hex().upper(), "encoded": cobs_encode(c).hex().upper()} for c in cobs_cases]
    frames = []
    for name, seq, msg in SAMPLES:
        frames.append({"name": name, "seq": seq, "message": message_to_json(msg),
                       "frame": frame_bytes(seq, msg).hex().upper(),
                       "wire": encode_frame(seq, msg).hex().upper()})
    good = frame_bytes(43, Button(3, True, 2_500_000))
    flipped = bytearray(good)
    flipped[6] ^= 0x01
    bad_len = bytearray(good)
    bad_len[4] += 1
    unknown = bytearray(good[:-2])
    unknown[1] = 0x55
    unknown += crc16(unknown).to_bytes(2, "big")
    bad_payload = bytearray(good[:-2])
    bad_payload[6] = 2  # pressed must be 0 or 1
    bad_payload += crc16(bad_payload).to_bytes(2, "big")
    no_marker = bytearray(good[:-2])
    no_marker[0] = 0x5A
    no_marker += crc16(no_marker).to_bytes(2, "big")
    bad = [
        ("one bit flipped in the payload", cobs_encode(flipped), "crc"),
        ("length byte one too big", cobs_encode(bad_len), "length"),
        ("unknown type 0x55, good CRC", cobs_encode(unknown), "unknown_type"),
        ("BUTTON pressed = 2, good CRC", cobs_encode(bad_payload), "payload"),
        ("wrong marker, good CRC", cobs_encode(no_marker), "marker"),
        ("too short", cobs_encode(good[:5]), "short"),
        ("COBS block past the end", bytes([0x09, 0xA5, 0x11]), "cobs"),
    ]
    bad_frames = [{"name": n, "wire": (w + b"\x00").hex().upper(), "error": e}
                  for n, w, e in bad]
    return {
        "about": "Wire protocol test vectors (docs/protocol.md). Hex is upper-case; 'wire' "
                 "includes the 0x00 delimiter, 'frame' is before COBS.",
        "crc16": {"name": "CRC-16/CCITT-FALSE", "poly": "1021", "init": "FFFF",
                  "refin": False, "refout": False, "xorout": "0000", "vectors": crc},
        "cobs": cobs,
        "frames": frames,
        "bad_frames": bad_frames,
    }


def load_vectors() -> dict[str, Any]:
    """The stored ``vectors.json``."""
    text = resources.files("firmware_bridge").joinpath("vectors.json").read_text("utf-8")
    vectors: dict[str, Any] = json.loads(text)
    return vectors


if __name__ == "__main__":
    json.dump(build_vectors(), sys.stdout, indent=1)
    sys.stdout.write("\n")
