"""The virtual camera over a virtual table: cards land on the pile, hands pass over it, the
pile is taken away; :meth:`VirtualTable.frame` films the table at any time. Seeded and
deterministic: the same events, the same frames."""

from __future__ import annotations

import asyncio
import math
import random
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from hardware.camera.reader.sources import Array, Frame
from hardware.camera.synthetic.scene import (
    FRAME_H,
    FRAME_W,
    Hand,
    Placed,
    Scene,
    hand_mask,
    render,
)
from referee.cards import Card
from referee.model import Input, Verdict

#: How long the hand that takes a won pile away is over it (ns).
SWEEP_NS = 100_000_000
#: How soon after a pile is won it is taken away (ns): the hand reaches it 200 ms after the
#: verdict, a quick player's reaction, unless the next card comes sooner.
CLEAR_AFTER_NS = 300_000_000


@dataclass
class _Events:
    lays: list[tuple[int, Placed]] = field(default_factory=list)
    clears: list[int] = field(default_factory=list)
    hands: list[tuple[int, int, Hand]] = field(default_factory=list)


class VirtualTable:
    """A table filmed from above by a fixed camera."""

    def __init__(self, deck: str, seed: int, *, fps: float = 30.0,
                 card_height: float = 210.0) -> None:
        self.deck = deck
        self.fps = fps
        self.rng = random.Random(f"virtual-table-{seed}")
        self.card_height = card_height
        self.events = _Events()
        self.look = Scene(deck=deck, background=self.rng.randrange(100_000), seed=seed,
                          tilt=(self.rng.uniform(0, 8), self.rng.uniform(-180, 180)),
                          light=(self.rng.uniform(0.85, 1.1), self.rng.uniform(-0.3, 0.3),
                                 self.rng.uniform(-0.3, 0.3)))
        self.cx, self.cy = FRAME_W / 2, FRAME_H / 2
        nrng = np.random.default_rng(seed)
        self._noise = [nrng.normal(0, 3.0, (FRAME_H, FRAME_W, 3)).astype(np.float32)
                       for _ in range(6)]
        self._cache: tuple[tuple[int, int], Array] | None = None

    # -- what happens on the table ----------------------------------------------------------
    def lay(self, card: Card, t: int) -> None:
        """``card`` lands on the pile at ``t`` (ns), on a pile no hand covers: a hand still over
        it is lifted, and a won pile still waiting to be swept away is gone, just before."""
        ev = self.events
        ev.clears = [min(c, t - 1) for c in ev.clears]
        ev.hands = [(t0, min(t1, t - 1), hand) for t0, t1, hand in ev.hands if t0 < t]
        h = self.card_height
        p = Placed(card, self.cx + self.rng.gauss(0, 0.1 * h),
                   self.cy + self.rng.gauss(0, 0.08 * h), h,
                   self.rng.uniform(-30, 30) + self.rng.choice((0, 90, 180)))
        self.events.lays.append((t, p))

    def clear(self, t: int) -> None:
        """The pile is taken away at ``t`` by a hand that reaches it ``SWEEP_NS`` before."""
        self.hand_over(t - SWEEP_NS, t)
        self.events.clears.append(t)

    def hand_over(self, t0: int, t1: int) -> None:
        """A hand over the pile from ``t0`` to ``t1`` (a slap)."""
        a = self.rng.uniform(0, 2 * math.pi)
        tone = self.rng.choice(((120, 150, 205), (90, 120, 170), (60, 80, 120)))
        hand = Hand(self.cx + 20 * math.cos(a), self.cy + 20 * math.sin(a),
                    math.degrees(a) + 180, self.rng.uniform(60, 80), tone)
        self.events.hands.append((t0, t1, hand))

    # -- the camera ---------------------------------------------------------------------------
    def pile_at(self, t: int) -> list[Placed]:
        """The cards on the pile at ``t``, the top one last."""
        last_clear = max((c for c in self.events.clears if c <= t), default=None)
        return [p for lt, p in self.events.lays
                if lt <= t and (last_clear is None or lt > last_clear)]

    def frame(self, t: int) -> Array:
        """The camera's picture at ``t``."""
        pile = self.pile_at(t)
        key = (len(pile), sum(1 for c in self.events.clears if c <= t))
        if self._cache is None or self._cache[0] != key:
            scene = Scene(deck=self.deck, background=self.look.background, seed=self.look.seed,
                          cards=pile[-4:], tilt=self.look.tilt, light=self.look.light)
            self._cache = (key, render(scene).astype(np.float32))
        img = self._cache[1]
        hands = [h for t0, t1, h in self.events.hands if t0 <= t <= t1]
        if hands:
            img = img.copy()
            for hand in hands:
                m = hand_mask(hand, (FRAME_W, FRAME_H))[..., None]
                img = img * (1 - m) + np.array(hand.tone, np.float32) * m
        n = int(t * self.fps // 1_000_000_000)
        out = np.clip(img + self._noise[n % len(self._noise)], 0, 255).astype(np.uint8)
        ok, buf = cv2.imencode(".jpg", out, [cv2.IMWRITE_JPEG_QUALITY, 85])
        return np.asarray(cv2.imdecode(buf, cv2.IMREAD_COLOR)) if ok else out

    def frames(self, t0: int, t1: int) -> Iterator[Frame]:
        """The frames of a 30 fps (``fps``) video from ``t0`` to ``t1``."""
        period = 1e9 / self.fps
        k = math.ceil(t0 / period)
        while k * period <= t1:
            t = round(k * period)
            yield Frame(t, self.frame(t))
            k += 1


@dataclass(frozen=True)
class FilmedGame:
    """A simulated game filmed: the table, the true lays, and the time it ends."""

    table: VirtualTable
    lays: list[tuple[int, Card]]
    end: int


def film_game(moves: Iterable[tuple[int, Input | None, Sequence[Verdict]]], deck: str,
              seed: int, *, max_lays: int | None = None, fps: float = 30.0) -> FilmedGame:
    """Film a game from its judged moves (``cardtable.simulate.Simulation.moves()``): each
    card laid or played lands on the pile, each slap puts a hand over it for 0.2 s, a pile won
    is swept away ``CLEAR_AFTER_NS`` after the verdict (the camera stays with the discard pile in
    Vändåtta). A card lands on a pile no hand covers (:meth:`VirtualTable.lay`)."""
    table = VirtualTable(deck, seed, fps=fps)
    lays: list[tuple[int, Card]] = []
    end = 0
    for t, inp, verdicts in moves:
        end = max(end, t)
        if inp is not None:
            card = inp.card if inp.act == "lay" else (
                inp.cards[0] if inp.act == "play" and inp.cards and len(inp.cards) == 1
                else None)
            if card is not None:
                table.lay(card, inp.t)
                lays.append((inp.t, card))
            elif inp.act == "slap":
                table.hand_over(inp.t, inp.t + 200_000_000)
        for v in verdicts:
            if v.verdict == "pile_won":
                table.clear(v.t + CLEAR_AFTER_NS)
                end = max(end, v.t + CLEAR_AFTER_NS)
        if max_lays is not None and len(lays) >= max_lays:
            break
    return FilmedGame(table, lays, end + 1_000_000_000)


class LiveCamera:
    """The virtual camera as a live source: frames of a :class:`VirtualTable` at ``fps`` in
    real time (CLOCK_MONOTONIC), filmed by a thread of their own (as a camera films while the
    referee reads), the reader getting the newest frame and missing those it is too slow for,
    as with a real camera."""

    def __init__(self, table: VirtualTable) -> None:
        self.table = table
        self._closed = threading.Event()
        self._latest: Frame | None = None
        self._ready = threading.Condition()
        self._thread = threading.Thread(target=self._film, name="virtual-camera", daemon=True)
        self._thread.start()

    def _film(self) -> None:
        period = 1e9 / self.table.fps
        while not self._closed.is_set():
            now = time.monotonic_ns()
            t = round(math.ceil(now / period) * period)
            time.sleep(max(0.0, (t - now) / 1e9))
            frame = Frame(t, self.table.frame(t))
            with self._ready:
                self._latest = frame
                self._ready.notify_all()

    def frames(self) -> Iterator[Frame]:
        """The newest frame each time, until closed."""
        last = -1

        def fresh() -> bool:
            return self._closed.is_set() or (self._latest is not None
                                             and self._latest.t != last)

        while not self._closed.is_set():
            with self._ready:
                self._ready.wait_for(fresh, timeout=1.0)
                frame = self._latest
            if frame is None or frame.t == last:
                continue
            last = frame.t
            yield frame

    def close(self) -> None:
        """Stop filming."""
        self._closed.set()
        with self._ready:
            self._ready.notify_all()


class CameraTable:
    """Where the full stack's virtual players lay their cards when the camera is the card
    source: on a :class:`VirtualTable` that the camera films (``lay`` as the board emulator's).
    A draw from the stock, which the camera does not film, is typed at the console; a card the
    camera has not read within ``operator_s`` is typed by the operator, as at a real table
    (``typed`` counts them). As an output of the service it sweeps a won pile away."""

    def __init__(self, service: Any, deck: str, seed: int, *, fps: float = 30.0,
                 operator_s: float = 2.0) -> None:
        self.service = service
        self.table = VirtualTable(deck, seed, fps=fps)
        self.operator_s = operator_s
        self.typed = 0
        self.laid = 0
        #: The camera edge, told of a card the operator typed (it is on top now).
        self.edge: Any = None

    def source(self) -> LiveCamera:
        """A new live camera over the table (the edge's ``open_source``)."""
        return LiveCamera(self.table)

    def lay(self, card: Card, reader: int | None = None) -> None:
        """A player lays ``card`` on the pile (``reader`` given: draws it from the stock)."""
        svc = self.service
        state = svc.state()
        if reader is not None:
            seat = state.get("must_draw") if state.get("must_draw") is not None \
                else state.get("turn")
            svc.submit(Input(svc.clock.now(), seat, "draw", card=card))
            return
        self.laid += 1
        self.table.lay(card, time.monotonic_ns())
        played = state.get("cards_played")
        asyncio.get_running_loop().call_later(self.operator_s, self._check, card, played)

    def _check(self, card: Card, played: Any) -> None:
        svc = self.service
        if svc.table is None or svc.table.engine.over:
            return
        state = svc.state()
        if state.get("cards_played") != played:
            return
        seat = svc.table.engine.holder(card)
        seat = state.get("turn") if seat is None else seat
        if seat is None:
            return
        self.typed += 1
        if self.edge is not None:
            tracker = self.edge.tracker
            tracker.under, tracker.top = tracker.top, card
        in_rounds = state.get("game") == "vandatta"
        svc.submit(Input(svc.clock.now(), seat, "play", cards=(card,)) if in_rounds
                   else Input(svc.clock.now(), seat, "lay", card=card))

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """Sweep the pile away when it is won."""
        if any(v.verdict == "pile_won" for v in verdicts):
            self.table.clear(time.monotonic_ns() + 150_000_000)
