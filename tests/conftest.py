"""Shared fixtures: a real Mosquitto broker (:mod:`broker`), started for a test and stopped
after it. The repository root is on ``sys.path`` (``pythonpath`` in ``pyproject.toml``), so test
modules import the helpers as ``from tests.broker import Broker``. (The folders under ``tests/``
mirror the packages and carry their names; ``tests/`` itself must therefore never be on
``sys.path``, or ``tests/referee`` would stand in for the package ``referee``.)"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.broker import ACL_TEXT, Broker, make_broker


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
