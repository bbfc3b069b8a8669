"""Splitting a card's corner index into its rank and suit (hardware/camera/reader/index.py), on
drawn corners: a court card's picture frame beside the index, a suit joined to the picture."""

from __future__ import annotations

import numpy as np
import pytest

cv2 = pytest.importorskip("cv2")

import hardware.camera.reader.index as index  # noqa: E402
from hardware.camera.reader.index import corner_glyphs  # noqa: E402
from hardware.camera.reader.warp import WARP_H, WARP_W  # noqa: E402


def corner(*, frame_line: bool = False, frame_top: bool = False, joined_suit: bool = False
           ) -> np.ndarray:
    """A warped card (white) with a Q above a red heart in its top-left corner; maybe the
    picture's frame line down beside it, or the frame's top beside it, touched by the Q's
    tail, or the heart joined by a lighter stroke to the picture's big heart, which runs out
    of the corner."""
    card = np.full((WARP_H, WARP_W, 3), 250, np.uint8)
    cv2.putText(card, "Q", (9, 34), cv2.FONT_HERSHEY_SIMPLEX, 0.9, (30, 30, 30), 2)
    cv2.circle(card, (19, 52), 7, (20, 20, 200), -1)
    if frame_line:
        cv2.line(card, (35, 20), (35, WARP_H - 20), (90, 90, 90), 1)
        cv2.line(card, (22, 31), (35, 36), (30, 30, 30), 2)  # the Q's tail, run on
    if frame_top:
        cv2.line(card, (30, 36), (WARP_W - 20, 36), (90, 90, 90), 1)
        cv2.line(card, (22, 31), (31, 36), (30, 30, 30), 2)  # the Q's tail, run on
    if joined_suit:
        cv2.circle(card, (52, 54), 14, (20, 20, 200), -1)
        cv2.line(card, (24, 53), (40, 54), (120, 120, 200), 3)  # a lighter bridge
    return card


def test_a_plain_corner_splits() -> None:
    got = corner_glyphs(corner())
    assert got is not None
    assert got.red > 0.3  # the heart is the suit


def test_a_picture_frame_touching_the_rank_is_taken_out(monkeypatch: pytest.MonkeyPatch
                                                         ) -> None:
    monkeypatch.setattr(index, "DARKER", (0.0,))  # the line alone, no darker ink
    plain = corner_glyphs(corner())
    got = corner_glyphs(corner(frame_line=True))
    assert plain is not None and got is not None
    # the rank without the line: about as wide as the Q alone (the tail adds a little)
    assert got.rank_aspect == pytest.approx(plain.rank_aspect, abs=0.35)
    monkeypatch.setattr(index, "FRAME_LINE", 5.0)  # no line is that long: none taken out
    assert corner_glyphs(corner(frame_line=True)) is None


def test_a_suit_joined_to_the_picture_keeps_its_darker_ink(monkeypatch: pytest.MonkeyPatch
                                                           ) -> None:
    got = corner_glyphs(corner(joined_suit=True))
    assert got is not None
    assert got.red > 0.3
    assert got.suit_aspect == pytest.approx(1.0, abs=0.2)  # the round heart, not the bridge
    monkeypatch.setattr(index, "DARKER", (0.0,))
    assert corner_glyphs(corner(joined_suit=True)) is None


def test_a_picture_frame_s_top_touching_the_rank_is_taken_out(monkeypatch: pytest.MonkeyPatch
                                                               ) -> None:
    monkeypatch.setattr(index, "DARKER", (0.0,))
    plain = corner_glyphs(corner())
    got = corner_glyphs(corner(frame_top=True))
    assert plain is not None and got is not None
    assert got.rank_aspect == pytest.approx(plain.rank_aspect, abs=0.35)
    monkeypatch.setattr(index, "FRAME_TOP", 5.0)
    assert corner_glyphs(corner(frame_top=True)) is None
