"""Issue 36: every kind of bad picture handed to the camera's reader (``referee camera read``,
enrolment from a folder) gets a line saying what is wrong with it, or is read; none crashes
the program, and none is decoded into more memory than a photo of the table needs."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

cv2 = pytest.importorskip("cv2")
np = pytest.importorskip("numpy")

from cardtable.cli import main  # noqa: E402
from hardware.camera.reader import sources  # noqa: E402
from hardware.camera.reader.sources import (  # noqa: E402
    MAX_IMAGE_PIXELS,
    SourceError,
    image_size,
    read_image,
)

ROOT = Path(__file__).resolve().parents[3]


def png_chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def png_bomb(side: int, rows: int | None = None) -> bytes:
    """A grey PNG of side x side black pixels: a few hundred kB that decode to side² bytes
    (times three in colour); with ``rows``, only that many rows are in it (the header says
    the whole size: a file cut short, quick to make)."""
    z = zlib.compressobj(9)
    row = bytes(side + 1)  # filter byte 0 and a row of zeros
    idat = b"".join(z.compress(row) for _ in range(side if rows is None else rows)) + z.flush()
    ihdr = struct.pack(">IIBBBBB", side, side, 8, 0, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IDAT", idat)
            + png_chunk(b"IEND", b""))


def a_photo(ext: str, w: int = 96, h: int = 72) -> bytes:
    image = np.full((h, w, 3), 90, np.uint8)
    cv2.rectangle(image, (10, 8), (40, 40), (250, 250, 250), -1)
    ok, buf = cv2.imencode(ext, image)
    assert ok
    return bytes(buf.tobytes())


@pytest.mark.parametrize("ext", [".png", ".jpg", ".bmp", ".gif"])
def test_the_header_tells_the_size_of_each_format(ext: str) -> None:
    assert image_size(a_photo(ext, 123, 45)) == (123, 45)


def test_a_header_that_says_nothing_known_is_left_to_opencv() -> None:
    assert image_size(b"II*\x00 a tiff, say") is None
    assert image_size(b"\xff\xd8\xff\xe0\x00") is None  # a JPEG cut inside its first segment


def test_a_picture_larger_than_the_limit_is_refused_before_it_is_decoded(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A 20000 x 20000 PNG (600 kB whole) would decode to 1.2 GB: its header is enough to
    refuse it, and OpenCV is never asked to decode it."""
    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(png_bomb(20000, rows=8))

    def no_decoding(*_args: object) -> None:
        raise AssertionError("decoded")

    monkeypatch.setattr(sources.cv2, "imread", no_decoding)
    with pytest.raises(SourceError, match=r"20000 x 20000 pixels, larger than the 64 mega"):
        read_image(bomb)


def test_the_largest_picture_allowed_passes_the_size_check(tmp_path: Path) -> None:
    """Not a limit that refuses photos: a header at the limit itself (8000 x 8000) goes on to
    OpenCV, which then finds the file cut short."""
    side = int(MAX_IMAGE_PIXELS ** 0.5)
    big = tmp_path / "big.png"
    big.write_bytes(png_bomb(side)[:64] + b"...")
    with pytest.raises(SourceError, match="not an image OpenCV can read"):  # it got that far
        read_image(big)


@pytest.mark.slow
def test_referee_camera_read_of_a_bomb_uses_no_more_memory_than_a_photo(tmp_path: Path) -> None:
    """The whole command, in a process of its own: its peak memory with the bomb is within a
    few MB of its peak with an ordinary photo (measured, not assumed)."""
    bomb, photo = tmp_path / "bomb.png", tmp_path / "photo.jpg"
    bomb.write_bytes(png_bomb(20000))
    assert bomb.stat().st_size < 2_000_000
    photo.write_bytes(a_photo(".jpg", 640, 480))
    code = ("import resource, sys; from cardtable.cli import main; s = main(['camera', 'read', "
            "sys.argv[1]]); print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss); "
            "sys.exit(s)")
    peaks = {}
    for path in (photo, bomb):
        proc = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True,
                              text=True, timeout=120, cwd=ROOT,
                              env={**os.environ, "PYTHONPATH": str(ROOT)})
        assert "Traceback" not in proc.stderr, proc.stderr
        peaks[path.name] = int(proc.stdout.split()[-1])  # kB
        if path == bomb:
            assert proc.returncode == 2 and "larger than the 64 megapixels" in proc.stderr
    assert peaks["bomb.png"] < peaks["photo.jpg"] + 20_000, peaks


@pytest.mark.parametrize(("make", "said"), [
    (lambda d: d / "missing.jpg", "no such file"),
    (lambda d: d, "is a folder"),
    (lambda d: Path(os.devnull), "not a regular file"),
    (lambda d: (d / "empty.jpg", (d / "empty.jpg").write_bytes(b""))[0], "the file is empty"),
    (lambda d: (d / "notes.jpg", (d / "notes.jpg").write_text("a shopping list\n"))[0],
     "not an image OpenCV can read"),
    (lambda d: (d / "zero.png", (d / "zero.png").write_bytes(png_bomb(16)[:16] + bytes(8)))[0],
     "says it is 0 x 0 pixels"),
    (lambda d: (d / "dot.png", (d / "dot.png").write_bytes(a_photo(".png", 1, 1)))[0],
     "1 x 1 pixels, too small to show a card"),
    # the locator's input is 160 wide: a strip 64 x 5000 would ask it for a map 12 500 high
    (lambda d: (d / "strip.png", (d / "strip.png").write_bytes(a_photo(".png", 64, 5000)))[0],
     "64 x 5000 pixels, more than 4 times as wide as high or as high as wide"),
])
def test_what_is_not_a_picture_is_named_and_refused(
        tmp_path: Path, make: object, said: str, capsys: pytest.CaptureFixture[str]) -> None:
    path = make(tmp_path)  # type: ignore[operator]
    with pytest.raises(SourceError, match=said):
        read_image(path)
    assert main(["camera", "read", str(path)]) == 2
    err = capsys.readouterr().err
    assert said in err and "Traceback" not in err and len(err.splitlines()) == 1


def test_a_file_far_larger_than_a_photo_is_refused_unread(tmp_path: Path) -> None:
    huge = tmp_path / "huge.jpg"
    with huge.open("wb") as f:  # sparse: no disk is spent on it
        f.write(a_photo(".jpg"))
        f.truncate(sources.MAX_IMAGE_BYTES + 1)
    with pytest.raises(SourceError, match="MB, larger than the 192 MB"):
        read_image(huge)


def test_a_truncated_or_tiny_or_animated_picture_is_read_or_refused_never_a_crash(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """What OpenCV can make something of is read (a card, unclear or no card); what it cannot
    is one line. Every file gives a line of its own, in order."""
    cut = tmp_path / "cut.jpg"
    cut.write_bytes(a_photo(".jpg", 640, 480)[:400])
    tiny = tmp_path / "tiny.png"
    tiny.write_bytes(a_photo(".png", 1, 1))
    frames = [np.full((48, 64, 3), v, np.uint8) for v in (30, 200)]
    animation = cv2.Animation()
    animation.frames, animation.durations = frames, [100, 100]
    ok, buf = cv2.imencodeanimation(".gif", animation)
    assert ok
    moving = tmp_path / "moving.gif"
    moving.write_bytes(bytes(buf.tobytes()))
    status = main(["camera", "read", "--json", str(cut), str(tiny), str(moving)])
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    said = captured.out.splitlines() + captured.err.splitlines()
    assert len(said) == 3, said
    for name in ("cut.jpg", "tiny.png", "moving.gif"):
        assert sum(name in line for line in said) == 1, (name, said)
    assert status in (0, 2) and (status == 2) == bool(captured.err)


def test_enrolment_from_a_folder_with_a_bad_picture_names_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "AS.jpg").write_bytes(b"")
    status = main(["camera", "enroll", "--images", str(tmp_path), "--out",
                   str(tmp_path / "deck.npz")])
    err = capsys.readouterr().err
    assert status == 2 and "Traceback" not in err
    assert not (tmp_path / "deck.npz").exists()
