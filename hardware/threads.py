"""The referee's threads and the scheduler.

Under systemd the referee runs with a real-time policy (``CPUSchedulingPolicy=rr``,
deploy/systemd/card-referee.service): the loop that judges a slap and hands its verdict to the
feed preempts whatever else the Pi is busy with. Every thread the referee starts inherits that
policy, so a thread that works for long stretches (the camera's reader, the history's judging
of old journals, the speaker) calls :func:`background` first: it then takes its turn with the
Pi's other work and never keeps the judging loop from a core. Standard library only."""

from __future__ import annotations

import contextlib
import os
import threading

__all__ = ["background"]


def background() -> None:
    """Run the calling thread under the ordinary policy at the ordinary niceness (0): on
    Linux the policy and the niceness are each thread's own. Elsewhere, or when the system
    refuses, nothing changes."""
    with contextlib.suppress(AttributeError, OSError):
        if os.sched_getscheduler(0) != os.SCHED_OTHER:
            os.sched_setscheduler(0, os.SCHED_OTHER, os.sched_param(0))
    with contextlib.suppress(AttributeError, OSError):
        tid = threading.get_native_id()
        if os.getpriority(os.PRIO_PROCESS, tid) < 0:
            os.setpriority(os.PRIO_PROCESS, tid, 0)
