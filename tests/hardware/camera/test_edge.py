"""Issue 36: the camera disappearing in the middle of a game (unplugged, its driver failing, a
video ending) is survived: the edge says so, opens the camera again every second, and goes on
reading lays once it is back."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest

np = pytest.importorskip("numpy")
pytest.importorskip("cv2")

from hardware.camera.edge import CameraEdge  # noqa: E402
from hardware.camera.reader.recognise import Read  # noqa: E402
from hardware.camera.reader.sources import Frame, SourceError  # noqa: E402
from referee.model import Card  # noqa: E402

IMAGE = np.zeros((8, 8, 3), np.uint8)


class Camera:
    """Frames of given cards, then a failure: the camera unplugged mid-stream."""

    def __init__(self, cards: list[str], t0: int) -> None:
        self.cards, self.t0, self.closed = cards, t0, False

    def frames(self) -> Iterator[Frame]:
        for i, card in enumerate(self.cards):
            yield Frame(self.t0 + i * 33_000_000, IMAGE)
            self.last = card
        raise OSError(5, "Input/output error")

    def close(self) -> None:
        self.closed = True


def test_a_camera_that_fails_mid_game_is_opened_again_and_read_on(
        caplog: pytest.LogCaptureFixture) -> None:
    opened: list[Camera] = []
    attempts = {"n": 0}
    # what each attempt to open finds: a camera showing QH that then fails, nothing twice
    # (unplugged), a camera showing 7S that fails in turn, and so on
    plan: list[list[str] | None] = [["QH"] * 6, None, None, ["7S"] * 6]

    def open_source() -> Camera:
        step = plan[min(attempts["n"], len(plan) - 1)]
        attempts["n"] += 1
        if step is None:
            raise SourceError("/dev/video0: no such device")
        cam = Camera(step, t0=attempts["n"] * 10_000_000_000)
        opened.append(cam)
        return cam

    class Reads:
        def read(self, image: Any) -> Read:
            cam = opened[-1]
            card = Card.parse(cam.cards[0])
            return Read(card, 0.99, quad=np.zeros((4, 2), np.float32))

    edge = CameraEdge(open_source, Reads(), frames=3)  # type: ignore[arg-type]
    edge.retry_s = 0.05
    delivered: list[Any] = []
    edge._deliver = delivered.append  # type: ignore[method-assign]
    notices: list[tuple[str, dict[str, Any]]] = []

    class Service:
        def notice(self, kind: str, **fields: Any) -> None:
            notices.append((kind, fields))

    edge.service = Service()
    thread = threading.Thread(target=edge._run, daemon=True)
    with caplog.at_level("WARNING", logger="hardware.camera.edge"):
        thread.start()
        deadline = time.monotonic() + 20
        while len(delivered) < 2 and time.monotonic() < deadline:
            time.sleep(0.05)
        edge._stop.set()
        thread.join(5)
    assert not thread.is_alive()
    assert [str(lay.card) for lay in delivered] == ["QH", "7S"]
    assert attempts["n"] >= 4 and all(cam.closed for cam in opened[:-1])
    said = [r.getMessage() for r in caplog.records]
    assert any("the camera stopped: [Errno 5] Input/output error" in s for s in said), said
    assert sum("the camera cannot be opened: /dev/video0: no such device" in s
               for s in said) == 2, said
    # the table is told once each way, not at every attempt
    assert notices[:2] == [("camera_offline", {"reason": "[Errno 5] Input/output error"}),
                           ("camera_online", {})]


def test_the_camera_stopping_is_on_every_display_until_it_is_back() -> None:
    from cardtable.display.scene import table_alerts

    state = {"game": "banka-bever", "seats": ["Anna", "Bo"],
             "alerts": {"camera": "[Errno 19] No such device"}}
    assert table_alerts(state) == [
        "CAMERA STOPPED ([Errno 19] No such device): type the cards at the console"]


@pytest.mark.parametrize(("reason", "said"), [
    ("no colour", "the camera gives no colour"),
    ("unclear", "the camera cannot read the top card"),
])
def test_a_card_the_camera_cannot_read_is_said_once_with_why(reason: str, said: str) -> None:
    """A card lying unread past ``unclear_s`` is said to the table once: a camera without
    colour (black and white) is named as the cause, since no card is read in its frames."""
    notices: list[tuple[str, dict[str, Any]]] = []

    class Service:
        def notice(self, kind: str, **fields: Any) -> None:
            notices.append((kind, fields))

    edge = CameraEdge(lambda: Camera([], 0), None, unclear_s=0.5)  # type: ignore[arg-type]
    edge.service = Service()
    quad = np.zeros((4, 2), np.float32)
    for i in range(40):  # 1.3 s of frames, the card never read
        edge.process(Frame(i * 33_000_000, IMAGE), Read(None, 0.4, quad, reason))
    asked = [f["reason"] for kind, f in notices if kind == "ignored"]
    assert len(asked) == 1 and asked[0].startswith(said), asked


def test_a_camera_whose_driver_hangs_does_not_hold_the_table_up(
        caplog: pytest.LogCaptureFixture) -> None:
    """A read that never returns (a driver gone silent) keeps its thread, but the table stops
    after :attr:`CameraEdge.stop_s` and the log says why it did not wait."""
    import asyncio

    release = threading.Event()
    reading = threading.Event()

    class Hung:
        def frames(self) -> Iterator[Frame]:
            reading.set()
            release.wait(30)
            return iter(())

        def close(self) -> None:
            pass

    class Service:
        def notice(self, kind: str, **fields: Any) -> None:
            pass

    async def main() -> float:
        edge = CameraEdge(Hung, None)  # type: ignore[arg-type]
        edge.stop_s = 0.2
        await edge.start(Service())
        await asyncio.to_thread(reading.wait, 10)
        t0 = time.monotonic()
        await edge.stop()
        return time.monotonic() - t0

    try:
        with caplog.at_level("WARNING", logger="hardware.camera.edge"):
            waited = asyncio.run(main())
    finally:
        release.set()
    assert waited < 5
    assert any("the camera did not let go within 0.2 s" in r.getMessage()
               for r in caplog.records), [r.getMessage() for r in caplog.records]
