"""One table: inputs → journal → arbiter → engine → verdicts, the core the CLI and service share.

``Table`` knows no clock: the caller says what time it is (``release(now_ns)``), the real
monotonic clock at a real table, a virtual clock in simulation, and nothing at all in a replay
(``flush``). So a replay of the journal goes through the arbiter and engine that judged the
game: ``push_all`` holds a whole journal as ``push`` one input after the other would
(``tests/referee/test_arbiter.py``), and the same engine judges it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from referee.arbiter import DEFAULT_SETTLE_NS, Arbiter
from referee.engine import Engine
from referee.games import game
from referee.journal import Journal, JournalHeader, JournalWriter
from referee.model import Input, Verdict

Listener = Callable[[list[Verdict], dict[str, Any]], None]
#: Told, after each judging step, which inputs it judged and every verdict of the step.
JudgedListener = Callable[[list[Input], list[Verdict]], None]


class Table:
    """A game in progress: journals every input before it is judged, and judges in time order."""

    def __init__(
        self,
        header: JournalHeader,
        *,
        settle_ns: int = DEFAULT_SETTLE_NS,
        journal: JournalWriter | None = None,
    ) -> None:
        self.header = header.resolved()
        self.engine: Engine = game(self.header.game).new_engine(
            self.header.n_seats, self.header.dealer, self.header.options, self.header.deal
        )
        self.arbiter = Arbiter(settle_ns)
        self.journal = journal
        self.verdicts: list[Verdict] = []
        self.inputs: list[Input] = []
        self.listeners: list[Listener] = []
        self.judged_listeners: list[JudgedListener] = []

    def push(self, inp: Input) -> Input:
        """Take an input from any edge: journal it, then hold it for judging; returns it as it
        will be judged. An input the journal cannot take (:class:`JournalWriteError`) is not
        held: nothing is judged that is not on disk."""
        if self.journal is not None:
            self.journal.append(self.arbiter.stamp(inp))
        inp = self.arbiter.push(inp)  # the same stamp (nothing moved the horizon), counted late
        self.inputs.append(inp)
        return inp

    def push_all(self, inputs: Iterable[Input]) -> list[Input]:
        """:meth:`push` each of ``inputs`` in turn (a replay, a resume, the inputs the edges
        handed in at once); returns them as they will be judged. With a journal they are
        written in one go and synced once (a slap race of four seats costs one sync, not
        four): all of them are held, or none (:class:`JournalWriteError`)."""
        if self.journal is not None:
            inputs = list(inputs)
            stamp = self.arbiter.stamp  # pushing moves no horizon: each keeps this stamp
            self.journal.append_all([stamp(inp) for inp in inputs])
            pushed = [self.arbiter.push(inp) for inp in inputs]
        else:
            pushed = self.arbiter.push_all(inputs)
        self.inputs += pushed
        return pushed

    def add_source(self, name: str) -> None:
        """Register a source whose progress releases inputs before the window is over
        (:meth:`referee.arbiter.Arbiter.add_source`)."""
        self.arbiter.add_source(name)

    def progress(self, name: str, t: int) -> None:
        """Source ``name`` has pushed everything it stamped up to ``t``
        (:meth:`referee.arbiter.Arbiter.progress`); the next :meth:`release` may judge sooner."""
        self.arbiter.progress(name, t)

    def _judge(self, inputs: list[Input], until: int | None) -> list[Verdict]:
        out: list[Verdict] = []
        apply = self.engine.apply
        for inp in inputs:
            verdicts = apply(inp)
            if verdicts:  # most inputs give none
                out += verdicts
        if until is not None:
            out += self.engine.advance(until)
        if inputs:
            for listener in self.judged_listeners:
                listener(inputs, out)
        return self._emit(out, changed=bool(inputs))

    def _emit(self, out: list[Verdict], *, changed: bool = False) -> list[Verdict]:
        """Record verdicts; tell the listeners whenever the state may have changed (a number
        card laid changes the table without any verdict). The state is built only when there
        is a listener to tell."""
        self.verdicts += out
        if (out or changed) and self.listeners:
            state = self.state()
            for listener in self.listeners:
                listener(out, state)
        return out

    def release(self, now_ns: int) -> list[Verdict]:
        """Judge every input the arbiter lets go at ``now_ns`` (every source has progressed
        past it, or the settle window is over) and let time pass up to that point."""
        released = self.arbiter.release(now_ns)
        horizon = self.arbiter.horizon
        return self._judge(released, horizon)

    def flush(self, *, finish: bool = False) -> list[Verdict]:
        """Judge everything held; with ``finish`` let pending graces run out (end of a replay)."""
        out = self._judge(self.arbiter.flush(), None)
        if finish:
            out += self._emit(self.engine.finish())
        return out

    def state(self) -> dict[str, Any]:
        """The engine's snapshot with the seat names added."""
        state = dict(self.engine.state())
        state["seats"] = list(self.header.seats)
        return state


@dataclass
class ReplayResult:
    """What a replay gives: every verdict in judging order and the final state."""

    verdicts: list[Verdict]
    state: dict[str, Any]
    table: Table


def replay(journal: Journal, *, finish: bool = True) -> ReplayResult:
    """Judge a whole journal as ``referee replay`` does."""
    table = Table(journal.header)
    table.push_all(journal.inputs)
    table.flush(finish=finish)
    return ReplayResult(table.verdicts, table.state(), table)
