"""The [camera] section and card_source = "camera" (issue 12)."""

from __future__ import annotations

from pathlib import Path

import pytest

from cardtable.config import parse_config
from hardware.camera.config import CAMERA_SETTLE_MS, CameraConfig, parse_camera
from referee.errors import ConfigError


def table(**extra: object) -> dict[str, object]:
    doc: dict[str, object] = {"table": {"id": "t", "game": "banka-bever",
                                        "seats": ["A", "B"], "card_source": "camera"}}
    doc.update(extra)
    return doc


def test_defaults() -> None:
    assert parse_camera({}) == CameraConfig("/dev/video0", None, 3)


def test_values_and_the_deck_beside_the_configuration() -> None:
    cam = parse_camera({"camera": {"source": "picamera", "deck": "d.npz", "frames": 4}},
                       "t.toml", Path("/etc/ref"))
    assert cam == CameraConfig("picamera", Path("/etc/ref/d.npz"), 4)


@pytest.mark.parametrize(("section", "key"), [
    ({"sauce": 1}, "camera.sauce"), ({"frames": 0}, "camera.frames"),
    ({"frames": True}, "camera.frames"), ({"source": 3}, "camera.source"),
    ({"deck": ["x"]}, "camera.deck")])
def test_errors_name_the_key(section: dict[str, object], key: str) -> None:
    with pytest.raises(ConfigError) as err:
        parse_camera({"camera": section}, "t.toml")
    assert err.value.key == key


def test_a_camera_table_waits_the_camera_window() -> None:
    cfg = parse_config(table(camera={"source": "/dev/video2"}))
    assert cfg.card_source == "camera"
    assert cfg.settle_ms == CAMERA_SETTLE_MS
    doc = table()
    doc["table"]["settle_ms"] = 40  # type: ignore[index]
    assert parse_config(doc).settle_ms == 40


@pytest.mark.parametrize("letters", [["english"], ["german", "russian"]])
def test_the_index_letters_reach_the_recogniser(letters: list[str], tmp_path: Path) -> None:
    pytest.importorskip("cv2")
    from cardtable.wiring import camera_edge
    from hardware.camera.reader.classify import glyph_ranks

    cfg = parse_config(table(camera={"index_letters": letters}))
    edge = camera_edge(cfg, open_source=lambda: None)
    meaning = edge.recogniser.meaning
    assert (meaning == glyph_ranks(tuple(letters))).all()
    assert not (meaning == glyph_ranks()).all()  # not the default sets


def test_a_table_with_an_earlier_version_s_deck_file_says_so_in_its_log(
        tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    pytest.importorskip("cv2")
    import numpy as np

    from cardtable.wiring import camera_edge
    from hardware.camera.reader.classify import FEATURES, GLYPHS
    from hardware.camera.reader.templates import EnrolledDeck
    from referee.cards import full_deck

    rng = np.random.default_rng(1)
    deck = tmp_path / "earlier.npz"
    EnrolledDeck(tuple(full_deck()), rng.normal(size=(52, 4 * FEATURES)).astype(np.float32),
                 np.zeros((len(GLYPHS) + 1, 13), np.float32),
                 rng.normal(size=(52, 2, 16 * 22 * 3)).astype(np.float32)).save(deck)
    cfg = parse_config(table(camera={"deck": str(deck)}))
    with caplog.at_level("WARNING", logger="cardtable.service"):
        edge = camera_edge(cfg, open_source=lambda: None)
    assert edge.recogniser.deck.pictures is None
    assert any("enroll the deck again" in r.getMessage() for r in caplog.records)


def test_a_deck_that_is_not_a_deck_file_names_the_key_and_why(tmp_path: Path) -> None:
    """The table's [camera] deck: a folder, a missing file and a picture each say what they
    are (no errno, no numpy's advice to load a pickle unsafely)."""
    pytest.importorskip("cv2")
    from cardtable.wiring import camera_edge

    picture = tmp_path / "photo.npz"
    picture.write_bytes(b"\x89PNG\r\n\x1a\n...")
    for deck, said in ((tmp_path, f"{tmp_path}: Is a directory"),
                       (tmp_path / "gone.npz", f"{tmp_path / 'gone.npz'}: No such file"),
                       (picture, "is not a camera deck file (not the zip of arrays")):
        cfg = parse_config(table(camera={"deck": str(deck)}))
        with pytest.raises(ConfigError) as err:
            camera_edge(cfg, open_source=lambda: None)
        assert err.value.key == "camera.deck" and said in str(err.value), str(err.value)
        assert "Errno" not in str(err.value) and "pickle" not in str(err.value)
