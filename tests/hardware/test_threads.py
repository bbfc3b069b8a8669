"""The referee under a real-time policy: a thread that works for long stretches runs under the
ordinary policy and niceness, and the judging loop keeps its own (hardware.threads)."""

from __future__ import annotations

import os
import threading

import pytest

from hardware.threads import background


@pytest.fixture
def realtime() -> object:
    """This test's thread under SCHED_RR at niceness -5, as the systemd unit starts the
    referee (skipped where the system does not allow it)."""
    try:
        os.sched_setscheduler(0, os.SCHED_RR, os.sched_param(10))
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), -5)
    except (AttributeError, OSError) as exc:
        pytest.skip(f"no real-time policy here ({exc})")
    try:
        yield
    finally:
        os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
        os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 0)


def test_a_background_thread_leaves_the_policy_of_the_loop_that_started_it(realtime) -> None:
    seen: dict[str, int] = {}

    def work() -> None:
        seen["inherited"] = os.sched_getscheduler(0)
        background()
        seen["policy"] = os.sched_getscheduler(0)
        seen["nice"] = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert seen == {"inherited": os.SCHED_RR, "policy": os.SCHED_OTHER, "nice": 0}
    assert os.sched_getscheduler(0) == os.SCHED_RR  # the starting thread keeps its own
    assert os.getpriority(os.PRIO_PROCESS, threading.get_native_id()) == -5


def test_background_changes_nothing_under_the_ordinary_policy() -> None:
    before = (os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0))
    background()
    assert (os.sched_getscheduler(0), os.getpriority(os.PRIO_PROCESS, 0)) == before
