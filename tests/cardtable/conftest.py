"""Fixtures of the display tests: headless Chromium (:mod:`tests.web_pages`), closed after the
test; skipped without Chromium (failed when ``CI`` is set)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.web_pages import Chromium, chromium_binary


@pytest.fixture
def open_chromium(tmp_path: Path) -> Iterator[Callable[[int, int], Chromium]]:
    """Start headless Chromium with a window of ``width`` × ``height``; every browser started
    is closed after the test."""
    opened: list[Chromium] = []

    def start(width: int, height: int) -> Chromium:
        profile = tmp_path / ("profile" if not opened else f"profile-{len(opened)}")
        browser = Chromium(chromium_binary(), profile, width, height)
        opened.append(browser)
        return browser

    try:
        yield start
    finally:
        for browser in reversed(opened):
            browser.close()


@pytest.fixture
def chromium(open_chromium: Callable[[int, int], Chromium]) -> Chromium:
    """Headless Chromium with a window of 1280 × 720, closed after the test."""
    return open_chromium(1280, 720)
