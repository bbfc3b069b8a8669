"""The training scripts' tests use the camera tests' artwork fixture (skip, or fail in CI,
without the decks)."""

from __future__ import annotations

from tests.hardware.camera.conftest import decks, need_artwork

__all__ = ["decks", "need_artwork"]
