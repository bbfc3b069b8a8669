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

import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2
import numpy.typing as npt

from referee.errors import RefereeError

Array = npt.NDArray[Any]


class SourceError(RefereeError, OSError):
    """A camera or video that cannot be opened or read."""


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
            self.cap = cv2.VideoCapture(source)
        if not self.cap.isOpened():
            raise SourceError(f"cannot open {source}")
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
            raise SourceError("picamera2 is not installed (on the Pi: apt install "
                              "python3-picamera2, and a venv with --system-site-packages)"
                              ) from exc
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


def read_image(path: str | Path) -> Array:
    """A BGR image from a file (SourceError if it is not an image)."""
    if not Path(path).is_file():
        raise SourceError(f"{path}: no such file")
    image = cv2.imread(str(path), cv2.IMREAD_COLOR)
    if image is None:
        raise SourceError(f"{path}: not an image OpenCV can read")
    return image


def open_source(source: str) -> OpenCvSource | PicameraSource:
    """The source ``SOURCE`` names: ``picamera`` (the Pi camera), a device, a file or URL."""
    if source in ("picamera", "picamera2"):
        return PicameraSource()
    return OpenCvSource(source)
