"""Frame sources, each frame with its capture time on CLOCK_MONOTONIC (ns).

- :class:`OpenCvSource`: a V4L2 device (``/dev/video0``, or its number) or a video file or
  stream, through OpenCV. On a V4L2 device OpenCV's ``CAP_PROP_POS_MSEC`` is the driver's
  buffer timestamp (``v4l2_buffer.timestamp``, which uvcvideo and most drivers take on
  CLOCK_MONOTONIC when the frame's first data arrives); it is used when it lies within 10 s of
  ``time.monotonic_ns()`` (it is 0 for the first frame, and a few drivers stamp on another
  clock), else the time the frame was grabbed. A file has no capture clock: its frames carry
  their position in the video (``CAP_PROP_POS_MSEC``, else frame number / fps).
- :class:`PicameraSource`: the Pi camera through picamera2 (from apt, python3-picamera2):
  each request's ``SensorTimestamp`` metadata (ns, the start of the frame's exposure as
  libcamera reports it; CLOCK_BOOTTIME on some releases, which is moved onto CLOCK_MONOTONIC by
  the difference of the two clocks read when the camera starts).
- :class:`ImagesSource`: still images (``referee camera read``), times 0, 1 ns, ….
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy.typing as npt

from hardware.camera.reader.recognise import MOST_ASPECT, too_oblong
from referee.errors import RefereeError

Array = npt.NDArray[Any]


class SourceError(RefereeError, OSError):
    """A camera or video that cannot be opened or read."""


class CannotOpen(SourceError):
    """A camera, video or stream that OpenCV could not open: :attr:`source` (not there, in use
    by another program, or not a video)."""

    def __init__(self, source: str) -> None:
        super().__init__(f"cannot open {source}")
        self.source = source


class NoPicamera(SourceError):
    """The Pi camera was asked for, and picamera2 cannot be imported."""

    def __init__(self) -> None:
        super().__init__("picamera2 is not installed (on the Pi: apt install python3-picamera2, "
                         "and a venv with --system-site-packages)")


@dataclass(frozen=True)
class Frame:
    """One picture and its capture time (ns on CLOCK_MONOTONIC, or in the video)."""

    t: int
    image: Array


def is_device(source: str) -> bool:
    """Whether ``source`` names a camera device rather than a file or URL."""
    return source.isdigit() or source.startswith("/dev/video")


class OpenCvSource:
    """Frames from a V4L2 device, a video file or a stream URL."""

    def __init__(self, source: str, *, width: int = 640, height: int = 480) -> None:
        self.source = source
        self.device = is_device(source)
        if self.device:
            index: Any = int(source) if source.isdigit() else source
            self.cap = cv2.VideoCapture(index, cv2.CAP_V4L2)
            self.cap.set(cv2.CAP_PROP_FRAME_WIDTH, width)
            self.cap.set(cv2.CAP_PROP_FRAME_HEIGHT, height)
        else:
            if "://" not in source and not Path(source).exists():
                raise SourceError(f"{source}: no such file")
            # FFmpeg's own lines ("[tcp @ 0x…] Connection … refused") came before ours and
            # said it again; quiet unless the person running it asked for them
            os.environ.setdefault("OPENCV_FFMPEG_LOGLEVEL", "-8")
            self.cap = cv2.VideoCapture(source)
        if not self.cap.isOpened():
            raise CannotOpen(source)
        self.fps = float(self.cap.get(cv2.CAP_PROP_FPS) or 0.0) or 30.0
        self._n = 0

    def frames(self) -> Iterator[Frame]:
        """The frames until the video ends (a device: until closed)."""
        while True:
            grabbed = self.cap.grab()
            now = time.monotonic_ns()
            if not grabbed:
                return
            ok, image = self.cap.retrieve()
            if not ok:
                return
            pos_ms = float(self.cap.get(cv2.CAP_PROP_POS_MSEC))
            if self.device:
                stamp = round(pos_ms * 1e6)
                t = stamp if pos_ms > 0 and abs(stamp - now) < 10_000_000_000 else now
            else:
                t = round(pos_ms * 1e6) if pos_ms > 0 or self._n == 0 else \
                    round(self._n * 1e9 / self.fps)
            self._n += 1
            yield Frame(t, image)

    def close(self) -> None:
        """Release the device or file."""
        self.cap.release()


class PicameraSource:
    """Frames from the Pi camera (picamera2, with its sensor timestamps)."""

    def __init__(self, *, width: int = 640, height: int = 480) -> None:
        try:
            from picamera2 import Picamera2  # type: ignore[import-not-found]
        except ImportError as exc:
            raise NoPicamera() from exc
        self.cam = Picamera2()
        self.cam.configure(self.cam.create_video_configuration(
            main={"size": (width, height), "format": "BGR888"}))
        self.cam.start()
        mono = time.monotonic_ns()
        boot = time.clock_gettime_ns(time.CLOCK_BOOTTIME)
        self._boot_minus_mono = boot - mono
        self._shift: int | None = None

    def frames(self) -> Iterator[Frame]:
        """The frames, until closed."""
        while True:
            request = self.cam.capture_request()
            try:
                image = request.make_array("main")
                stamp = int(request.get_metadata().get("SensorTimestamp", 0))
            finally:
                request.release()
            now = time.monotonic_ns()
            if self._shift is None:  # which clock is it on?
                boot_like = abs(stamp - self._boot_minus_mono - now) < abs(stamp - now)
                self._shift = -self._boot_minus_mono if boot_like else 0
            t = stamp + self._shift if stamp else now
            yield Frame(t, image)

    def close(self) -> None:
        """Stop the camera."""
        self.cam.stop()


class ImagesSource:
    """Still images read from files."""

    def __init__(self, paths: list[str]) -> None:
        self.paths = paths

    def frames(self) -> Iterator[Frame]:
        """One frame per readable image (an unreadable file raises SourceError)."""
        for i, path in enumerate(self.paths):
            yield Frame(i, read_image(path))

    def close(self) -> None:
        """Nothing to release."""


#: The largest picture read (pixels): 64 MP, more than any phone's usual photo; a larger one
#: is refused from its header, before a byte of it is decoded (a small PNG can claim 20000 x
#: 20000 pixels, 1.2 GB decoded).
MAX_IMAGE_PIXELS = 64_000_000
#: The largest file read (bytes): a photo of that many pixels, uncompressed.
MAX_IMAGE_BYTES = 3 * MAX_IMAGE_PIXELS
#: The smallest picture read (pixels a side): a readable card is ~120 px tall.
MIN_IMAGE_SIDE = 64


def image_size(head: bytes) -> tuple[int, int] | None:
    """(width, height) from the first bytes of a PNG, GIF, BMP or JPEG file, None when the
    header does not say (another format: OpenCV's own limit then applies)."""
    if head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR":
        return int.from_bytes(head[16:20], "big"), int.from_bytes(head[20:24], "big")
    if head[:6] in (b"GIF87a", b"GIF89a"):
        return int.from_bytes(head[6:8], "little"), int.from_bytes(head[8:10], "little")
    if head[:2] == b"BM" and len(head) >= 26:
        return (int.from_bytes(head[18:22], "little", signed=True),
                abs(int.from_bytes(head[22:26], "little", signed=True)))
    if head[:2] == b"\xff\xd8":  # JPEG: walk the segments to the frame header (SOFn)
        i = 2
        while i + 9 <= len(head):
            if head[i] != 0xFF:
                return None
            marker = head[i + 1]
            if marker == 0xFF:  # fill byte
                i += 1
                continue
            if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
                return int.from_bytes(head[i + 7:i + 9], "big"), \
                    int.from_bytes(head[i + 5:i + 7], "big")
            if marker in (0x01, *range(0xD0, 0xD8)):  # markers without a length
                i += 2
                continue
            i += 2 + int.from_bytes(head[i + 2:i + 4], "big")
    return None


def read_image(path: str | Path) -> Array:
    """A BGR image from a file; SourceError, saying why, for anything that is not a picture
    the reader should open (missing, not a file, empty, too large, not an image)."""
    p = Path(path)
    try:
        info = p.stat()
    except FileNotFoundError:
        raise SourceError(f"{path}: no such file") from None
    except OSError as exc:
        raise SourceError(f"{path}: {exc.strerror or exc}") from None
    if p.is_dir():
        raise SourceError(f"{path}: is a folder, not an image")
    if not p.is_file():
        raise SourceError(f"{path}: not a regular file (a device or a pipe), not an image")
    if info.st_size == 0:
        raise SourceError(f"{path}: the file is empty")
    if info.st_size > MAX_IMAGE_BYTES:
        raise SourceError(f"{path}: {info.st_size / 1e6:.0f} MB, larger than the "
                          f"{MAX_IMAGE_BYTES / 1e6:.0f} MB a photo of the table needs")
    try:
        with p.open("rb") as f:
            head = f.read(65536)
    except OSError as exc:
        raise SourceError(f"{path}: {exc.strerror or exc}") from None
    size = image_size(head)
    if size is not None:
        w, h = size
        if w <= 0 or h <= 0:
            raise SourceError(f"{path}: the image says it is {w} x {h} pixels")
        if w * h > MAX_IMAGE_PIXELS:
            raise SourceError(f"{path}: {w} x {h} pixels, larger than the "
                              f"{MAX_IMAGE_PIXELS // 1_000_000} megapixels the reader opens")
    image = cv2.imread(str(p), cv2.IMREAD_COLOR)
    if image is None:
        raise SourceError(f"{path}: not an image OpenCV can read (damaged, or not a photo)")
    h, w = image.shape[:2]
    if min(w, h) < MIN_IMAGE_SIDE:
        raise SourceError(f"{path}: {w} x {h} pixels, too small to show a card (at least "
                          f"{MIN_IMAGE_SIDE} x {MIN_IMAGE_SIDE})")
    if too_oblong(w, h):
        raise SourceError(f"{path}: {w} x {h} pixels, more than {MOST_ASPECT:g} times as "
                          "wide as high or as high as wide: not a photo of the table")
    return image


def open_source(source: str) -> OpenCvSource | PicameraSource:
    """The source ``SOURCE`` names: ``picamera`` (the Pi camera), a device, a file or URL."""
    if source in ("picamera", "picamera2"):
        return PicameraSource()
    return OpenCvSource(source)
