"""Wire protocol: CRC and COBS against published vectors, the shared vectors.json, message
round trips, and a decoder that turns any bytes into frames or clear errors."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from firmware_bridge.protocol import (
    DECODE_ERROR_KINDS,
    MARKER,
    MAX_ENCODED,
    Ack,
    Button,
    Buzzer,
    BuzzerPattern,
    CardRead,
    CobsError,
    DecodeError,
    Error,
    Frame,
    Heartbeat,
    Hello,
    Led,
    LedPattern,
    Reader,
    Role,
    StreamDecoder,
    TimeSyncReply,
    TimeSyncRequest,
    cobs_decode,
    cobs_encode,
    crc16,
    encode_frame,
    frame_bytes,
)
from firmware_bridge.vectors import build_vectors, load_vectors, message_from_json

# Published check values of CRC-16/CCITT-FALSE (catalogue of parametrised CRC algorithms):
# "123456789" -> 0x29B1; the CRC of one zero byte with init 0xFFFF is 0xE1F0.
CRC_KNOWN = [(b"123456789", 0x29B1), (b"", 0xFFFF), (b"\x00", 0xE1F0), (b"A", 0xB915)]

# The COBS examples of Cheshire & Baker's paper as listed on Wikipedia ("Consistent Overhead
# Byte Stuffing", encoding examples 1-11), without the trailing delimiter.
COBS_KNOWN = [
    ("00", "0101"),
    ("0000", "010101"),
    ("001100", "01021101"),
    ("11220033", "0311220233"),
    ("11223344", "0511223344"),
    ("11000000", "0211010101"),
    (bytes(range(1, 255)).hex(), "FF" + bytes(range(1, 255)).hex()),
    (bytes(range(0, 255)).hex(), "01FF" + bytes(range(1, 255)).hex()),
    (bytes(range(1, 256)).hex(), "FF" + bytes(range(1, 255)).hex() + "02FF"),
    ((bytes(range(2, 256)) + b"\x00").hex(), "FF" + bytes(range(2, 256)).hex() + "0101"),
    ((bytes(range(3, 256)) + b"\x00\x01").hex(), "FE" + bytes(range(3, 256)).hex() + "0201"),
]


@pytest.mark.parametrize("data, crc", CRC_KNOWN)
def test_crc16_ccitt_false_check_values(data: bytes, crc: int) -> None:
    assert crc16(data) == crc


def test_crc_residue_of_a_good_frame_is_zero() -> None:
    data = frame_bytes(5, Button(1, True, 99))
    assert crc16(data) == 0
    assert crc16(data[:-1] + bytes([data[-1] ^ 1])) != 0


@pytest.mark.parametrize("raw, encoded", COBS_KNOWN)
def test_cobs_published_examples(raw: str, encoded: str) -> None:
    assert cobs_encode(bytes.fromhex(raw)) == bytes.fromhex(encoded)
    assert cobs_decode(bytes.fromhex(encoded)) == bytes.fromhex(raw)


@pytest.mark.parametrize("bad", ["00", "0311", "02000", "0511223300"])
def test_cobs_refuses_bad_encodings(bad: str) -> None:
    with pytest.raises((CobsError, ValueError)):
        cobs_decode(bytes.fromhex(bad))


@given(st.binary(max_size=1200))
def test_cobs_round_trip_has_no_zero(data: bytes) -> None:
    enc = cobs_encode(data)
    assert 0 not in enc
    assert cobs_decode(enc) == data
    assert len(enc) <= len(data) + len(data) // 254 + 1


def test_stored_vectors_are_what_this_code_produces() -> None:
    assert load_vectors() == build_vectors()


def test_stored_vectors_check_against_the_codec() -> None:
    vec = load_vectors()
    for item in vec["crc16"]["vectors"]:
        assert f"{crc16(bytes.fromhex(item['data'])):04X}" == item["crc"]
    for item in vec["cobs"]:
        assert cobs_encode(bytes.fromhex(item["raw"])).hex().upper() == item["encoded"]
    kinds = set()
    for item in vec["frames"]:
        msg = message_from_json(item["message"])
        kinds.add(msg.TYPE)
        assert encode_frame(item["seq"], msg).hex().upper() == item["wire"], item["name"]
        assert StreamDecoder().feed(bytes.fromhex(item["wire"])) == [Frame(item["seq"], msg)]
    assert len(kinds) == 11  # one of every message type
    for item in vec["bad_frames"]:
        (out,) = StreamDecoder().feed(bytes.fromhex(item["wire"]))
        assert isinstance(out, DecodeError) and out.kind == item["error"], item["name"]


u8 = st.integers(0, 255)
u16 = st.integers(0, 0xFFFF)
u32 = st.integers(0, 0xFFFF_FFFF)
text = st.text(max_size=10)
messages = st.one_of(
    st.builds(Hello, st.sampled_from(Role), u32, u16, st.booleans(), st.integers(1, 255),
              st.just(1), u32, u8, u8, u8, text),
    st.builds(Ack, u16, st.lists(u16, max_size=15).map(tuple)),
    st.builds(Heartbeat, u32, u32, u16),
    st.builds(TimeSyncRequest),
    st.builds(TimeSyncReply, u16, u32, u32),
    st.builds(CardRead, u8, st.binary(min_size=1, max_size=16), u32),
    st.builds(Button, u8, st.booleans(), u32),
    st.builds(Led, u8, st.tuples(u8, u8, u8), st.sampled_from(LedPattern), u16),
    st.builds(Buzzer, st.sampled_from(BuzzerPattern), u16, u16),
    st.builds(Reader, u8, st.booleans()),
    st.builds(Error, u8, u16, text),
)


@given(u16, messages)
@pytest.mark.slow
def test_every_message_round_trips(seq: int, msg: object) -> None:
    wire = encode_frame(seq, msg)
    assert wire.endswith(b"\x00") and 0 not in wire[:-1]
    assert len(wire) - 1 <= MAX_ENCODED
    assert StreamDecoder().feed(wire) == [Frame(seq, msg)]


@settings(max_examples=500)
@given(st.binary(max_size=600), st.lists(st.integers(1, 64), max_size=30))
def test_decoder_turns_any_bytes_into_frames_or_errors(data: bytes, cuts: list[int]) -> None:
    whole = StreamDecoder().feed(data + b"\x00")
    for item in whole:
        assert isinstance(item, Frame | DecodeError)
        if isinstance(item, DecodeError):
            assert item.kind in DECODE_ERROR_KINDS and item.detail
    # Fed in arbitrary pieces, the same result.
    dec, out, pos = StreamDecoder(), [], 0
    for cut in cuts:
        out += dec.feed(data[pos:pos + cut])
        pos += cut
    out += dec.feed(data[pos:] + b"\x00")
    assert out == whole


@pytest.mark.slow
@settings(max_examples=300)
@given(st.lists(st.tuples(u16, messages), min_size=1, max_size=8), st.binary(max_size=80),
       st.integers(0, 1000))
def test_good_frames_survive_garbage_around_them(frames: list, junk: bytes, where: int) -> None:
    wires = b"".join(encode_frame(s, m) for s, m in frames)
    # Garbage first (closed by a delimiter), then the frames: every frame comes out intact.
    out = StreamDecoder().feed(junk + b"\x00" + wires)
    got = [f for f in out if isinstance(f, Frame)]
    assert got[-len(frames):] == [Frame(s, m) for s, m in frames]


@settings(max_examples=300)
@given(u16, messages, st.integers(0, 10_000), st.integers(1, 255))
def test_one_damaged_byte_is_never_accepted(seq: int, msg: object, pos: int, xor: int) -> None:
    wire = bytearray(encode_frame(seq, msg))
    i = pos % (len(wire) - 1)
    wire[i] ^= xor
    out = StreamDecoder().feed(bytes(wire))
    assert out and all(isinstance(f, DecodeError) for f in out)


def test_overlong_input_is_one_clear_error_and_the_next_frame_decodes() -> None:
    good = encode_frame(1, Button(2, True, 3))
    out = StreamDecoder().feed(b"\x01" * (MAX_ENCODED * 3) + b"\x00" + good)
    assert [type(o) for o in out] == [DecodeError, Frame]
    assert out[0].kind == "too_long"


def test_marker_and_empty_frames() -> None:
    assert StreamDecoder().feed(b"\x00\x00\x00") == []
    body = bytearray(frame_bytes(1, Button(2, True, 3)))
    assert body[0] == MARKER
    (out,) = StreamDecoder().feed(cobs_encode(bytes(body[:-1])) + b"\x00")
    assert out.kind == "length"


@pytest.mark.parametrize("bad", [
    lambda: CardRead(0, b"", 1), lambda: CardRead(0, b"x" * 17, 1), lambda: Button(256, True, 1),
    lambda: Ack(1, tuple(range(16))), lambda: Hello(Role.HOST, 1, 0, name="x" * 33),
    lambda: Led(0, (256, 0, 0)),
])
def test_encoding_refuses_values_that_do_not_fit(bad) -> None:
    with pytest.raises(ValueError):
        encode_frame(0, bad())
