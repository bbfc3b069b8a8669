"""The camera tests need the camera extra and the decks' artwork (fetched by .ci/run): without
them they are skipped with the reason, except in CI (CI=true), where they fail."""

from __future__ import annotations

import os

import pytest


def need_artwork(*decks: str) -> None:
    """Skip (fail in CI) unless OpenCV and the decks' artwork are here."""
    try:
        from hardware.camera.synthetic import artwork
    except ImportError as exc:  # pragma: no cover - the camera extra missing
        reason = f"the camera extra is not installed ({exc})"
    else:
        missing = [d for d in decks if not artwork.available(d)]
        if not missing:
            return
        reason = f"card artwork not installed: {', '.join(missing)} (run .ci/run)"
    if os.environ.get("CI") == "true":
        pytest.fail(reason)
    pytest.skip(reason)


@pytest.fixture
def decks() -> None:
    """The three real decks' artwork, rendered (skip or fail as above)."""
    need_artwork("touati", "anglo", "gnomangelo")
