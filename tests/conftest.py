"""Shared fixtures: a real Mosquitto broker (:mod:`broker`), started for a test and stopped
after it. The repository root is on ``sys.path`` (``pythonpath`` in ``pyproject.toml``), so test
modules import the helpers as ``from tests.broker import Broker``. (The folders under ``tests/``
mirror the packages and carry their names; ``tests/`` itself must therefore never be on
``sys.path``, or ``tests/referee`` would stand in for the package ``referee``.)

Tests that take more than about 2 s on their own carry ``@pytest.mark.slow``: ``make quick``
(``pytest -m "not slow"``) leaves them out. After a run, the summary names any test without the
mark that took longer than :data:`SLOW_S`, so a new slow test is seen (a note, not a failure:
this machine's speed varies too much for a timed failure)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.broker import ACL_TEXT, Broker, make_broker

#: Seconds (set-up, call and tear-down together) above which a test should be marked slow.
SLOW_S = 2.0
_unmarked: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if "slow" not in report.keywords:
        _unmarked[report.nodeid] = _unmarked.get(report.nodeid, 0.0) + report.duration


def pytest_terminal_summary(terminalreporter: Any) -> None:
    over = sorted(((t, n) for n, t in _unmarked.items() if t > SLOW_S), reverse=True)
    if over:
        terminalreporter.section("tests over 2 s without @pytest.mark.slow")
        for took, nodeid in over:
            terminalreporter.write_line(f"{took:6.1f} s  {nodeid}")


@pytest.fixture
def mosquitto(tmp_path: Path) -> Iterator[Broker]:
    """A running private Mosquitto (see :class:`Broker`), stopped after the test."""
    broker = make_broker(tmp_path / "mosquitto")
    broker.start()
    try:
        yield broker
    finally:
        broker.stop()


@pytest.fixture
def mosquitto_factory(tmp_path: Path) -> Iterator[Callable[..., Broker]]:
    """Make (not start) brokers with a chosen ACL text and extra configuration lines; all are
    stopped after the test."""
    made: list[Broker] = []

    def factory(acl_text: str = ACL_TEXT, name: str = "custom", extra_config: str = "") -> Broker:
        broker = make_broker(tmp_path / f"mosquitto-{name}-{len(made)}", acl_text, extra_config)
        made.append(broker)
        return broker

    try:
        yield factory
    finally:
        for broker in made:
            broker.stop()
