"""The operator page in a real browser (issue 34): Playwright for Python drives the system's
headless Chromium (``/usr/bin/chromium``, no browser of Playwright's own: the machine has none to
download), in a phone's viewport with touch or a laptop's. :func:`operator_table` runs a table
whose pages are served by the very service of ``referee run``: ``referee simulate --full-stack
--operator`` as its own process (virtual players press mock GPIO pads and lay cards on the
emulated board), and yields where it serves and its pairing code.

Without Chromium a test is skipped, unless ``CI`` is set: then it fails. Set
``REFEREE_SCREENSHOTS=DIR`` to keep the screenshots (``docs/operator/`` holds the ones the
docs show).
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.web_pages import ROOT, chromium_binary

#: The flags this machine's Chromium needs headless (no sandbox as root, no network of its own).
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update",
                 "--disable-sync"]

PHONE = {"viewport": {"width": 390, "height": 844}, "has_touch": True, "is_mobile": True,
         "device_scale_factor": 1}
LAPTOP = {"viewport": {"width": 1280, "height": 800}}


@dataclass
class Table:
    """A table served as ``referee run`` serves it."""

    base: str
    code: str
    journal_dir: Path
    proc: subprocess.Popen[str]
    said: list[str]

    @property
    def current(self) -> Path:
        return self.journal_dir / "current.jsonl"


@contextlib.contextmanager
def operator_table(journal_dir: Path, *args: str) -> Iterator[Table]:
    """``referee simulate --full-stack --operator --port 0`` (more ``args`` after) as its own
    process, until the test ends."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cardtable.cli", "simulate", "--full-stack", "--operator",
         "--port", "0", "--journal-dir", str(journal_dir), *args],
        cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    assert proc.stdout is not None
    said: list[str] = []
    try:
        base = code = None
        deadline = time.monotonic() + 30
        while (base is None or code is None) and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            said.append(line)
            found = re.search(r"operator page: (http://127\.0\.0\.1:\d+/)operator/", line)
            base = found.group(1) if found else base
            found = re.search(r"pairing code (\d{6})", line)
            code = found.group(1) if found else code
        assert base and code, "".join(said)
        yield Table(base, code, journal_dir, proc, said)
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def browser() -> Iterator[Any]:
    """Headless Chromium under Playwright (skipped without Chromium or Playwright)."""
    binary = chromium_binary()
    import pytest

    try:
        from playwright import sync_api
    except ImportError:
        reason = "Playwright for Python is not installed (the dev extra has it)"
        if os.environ.get("CI"):
            pytest.fail(reason)
        pytest.skip(reason)
    with sync_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=binary, args=CHROMIUM_ARGS)
        try:
            yield b
        finally:
            b.close()


def screenshot(page: Any, path: Path, *, full_page: bool = False) -> bytes:
    """A PNG of the page at ``path`` (and in $REFEREE_SCREENSHOTS if set)."""
    data: bytes = page.screenshot(path=str(path), full_page=full_page)
    keep = os.environ.get("REFEREE_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return data


def wait_js(page: Any, expression: str, timeout: float = 15.0) -> Any:
    """Wait until a JavaScript expression is truthy in the page (polled from here:
    Playwright's own ``wait_for_function`` evaluates a string, which the page's Content
    Security Policy forbids, as it should)."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(expression)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"the page never satisfied {expression!r}; it shows:\n"
                                 + page.inner_text("body"))
        time.sleep(0.05)
