"""Frame sources and their capture times (issue 12): the Pi camera through a stand-in for
picamera2 (which exists only on a Pi), and video files through OpenCV."""

from __future__ import annotations

import sys
import time
import types
from pathlib import Path
from typing import Any

import pytest

cv2 = pytest.importorskip("cv2")
np = pytest.importorskip("numpy")

from hardware.camera.reader.sources import (  # noqa: E402
    CannotOpen,
    OpenCvSource,
    PicameraSource,
    SourceError,
    open_source,
)

MONO = 1_000_000_000_000  # the table clock (CLOCK_MONOTONIC) when the camera starts, ns
SUSPENDED = 7_000_000_000  # CLOCK_BOOTTIME runs ahead of it by the time the Pi slept
#: What CLOCK_MONOTONIC reads now (the fixture resets it; a test moves it on).
clock = {"mono": MONO}


class FakeRequest:
    def __init__(self, camera: FakeCamera, image: Any, metadata: dict[str, Any]) -> None:
        self.camera, self.image, self.metadata = camera, image, metadata

    def make_array(self, stream: str) -> Any:
        assert stream == "main"
        return self.image

    def get_metadata(self) -> dict[str, Any]:
        return self.metadata

    def release(self) -> None:
        self.camera.released += 1


class FakeCamera:
    """Picamera2's calls that the source makes; the frames are queued by the test."""

    queued: list[dict[str, Any]] = []

    def __init__(self) -> None:
        self.config: dict[str, Any] | None = None
        self.started = self.stopped = False
        self.released = 0

    def create_video_configuration(self, main: dict[str, Any]) -> dict[str, Any]:
        return {"main": main}

    def configure(self, config: dict[str, Any]) -> None:
        self.config = config

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.stopped = True

    def capture_request(self) -> FakeRequest:
        metadata = self.queued.pop(0)
        return FakeRequest(self, np.zeros((480, 640, 3), np.uint8), metadata)


@pytest.fixture
def picamera(monkeypatch: pytest.MonkeyPatch) -> type[FakeCamera]:
    """A stand-in picamera2 module, and clocks that read MONO (and MONO + SUSPENDED for
    CLOCK_BOOTTIME) until the test moves them."""
    module = types.ModuleType("picamera2")
    module.Picamera2 = FakeCamera  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "picamera2", module)
    FakeCamera.queued = []
    clock["mono"] = MONO
    monkeypatch.setattr(time, "monotonic_ns", lambda: clock["mono"])
    monkeypatch.setattr(time, "clock_gettime_ns", lambda which: clock["mono"] + SUSPENDED
                        if which == time.CLOCK_BOOTTIME else clock["mono"])
    return FakeCamera


def take(source: PicameraSource, n: int) -> list[int]:
    frames = source.frames()
    return [next(frames).t for _ in range(n)]


def test_sensor_stamps_on_the_monotonic_clock_are_kept(picamera: type[FakeCamera]) -> None:
    exposure = [MONO + 5_000_000, MONO + 38_333_333]  # started before the frame was read
    picamera.queued = [{"SensorTimestamp": t} for t in exposure]
    clock["mono"] = MONO + 50_000_000
    source = open_source("picamera")
    assert isinstance(source, PicameraSource)
    assert source.cam.config == {"main": {"size": (640, 480), "format": "BGR888"}}
    assert source.cam.started
    assert take(source, 2) == exposure
    assert source.cam.released == 2
    source.close()
    assert source.cam.stopped


def test_sensor_stamps_on_the_boot_clock_are_moved_onto_the_monotonic_one(
        picamera: type[FakeCamera]) -> None:
    """A release that stamps on CLOCK_BOOTTIME (ahead by the time the Pi was suspended):
    each stamp is moved back by the difference of the clocks, so it lies just before the
    moment the frame was read, as a monotonic stamp would."""
    exposure = [MONO + 5_000_000, MONO + 38_333_333]
    picamera.queued = [{"SensorTimestamp": t + SUSPENDED} for t in exposure]
    source = PicameraSource()
    clock["mono"] = MONO + 50_000_000
    assert take(source, 2) == exposure


def test_a_frame_without_a_sensor_stamp_takes_the_time_it_was_read(
        picamera: type[FakeCamera]) -> None:
    picamera.queued = [{}]
    source = PicameraSource()
    clock["mono"] = MONO + 12_345
    assert take(source, 1) == [MONO + 12_345]


def test_without_picamera2_the_error_says_what_to_install(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "picamera2", None)  # import fails
    with pytest.raises(SourceError, match="apt install python3-picamera2"):
        PicameraSource()
    assert issubclass(SourceError, OSError)


def test_a_video_file_gives_its_frames_at_their_place_in_the_video(tmp_path: Path) -> None:
    path = tmp_path / "pile.avi"
    writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 30.0, (64, 48))
    assert writer.isOpened()
    for i in range(5):
        writer.write(np.full((48, 64, 3), 40 * i, np.uint8))
    writer.release()
    source = OpenCvSource(str(path))
    frames = list(source.frames())
    source.close()
    assert len(frames) == 5
    steps = np.diff([f.t for f in frames])
    assert np.allclose(steps, 1e9 / 30, atol=1e6), steps  # one frame period, not wall time
    assert frames[0].image.shape == (48, 64, 3)
    assert [round(f.image.mean() / 40) for f in frames] == [0, 1, 2, 3, 4]  # in order


def test_a_missing_or_unreadable_video_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(SourceError, match="no such file"):
        OpenCvSource(str(tmp_path / "none.mp4"))
    junk = tmp_path / "junk.mp4"
    junk.write_bytes(b"not a video at all")
    with pytest.raises(SourceError, match="cannot open") as info:
        OpenCvSource(str(junk))
    assert isinstance(info.value, CannotOpen) and info.value.source == str(junk)  # the wizard
    # says it in the page's words
