"""``referee simulate --full-stack``: virtual players at a table run by the real service.

The very program ``referee run`` starts (:class:`cardtable.service.RefereeService` from a
:class:`cardtable.config.TableConfig`) referees the game. Only the world outside it is virtual:

- the slap and call buttons are gpiozero pins on the mock backend (:mod:`hardware.mock`), pressed
  by the players through the same pads, lockout and edge timestamps as on the Pi;
- the table board is :class:`firmware_bridge.emulator.VirtualBoard` on a pseudo-terminal, read
  through pyserial and the framed protocol: cards laid (and Vändåtta draws) are tag reads;
- Vändåtta plays the reader cannot express (several cards at once, an eight's declaration, a
  pass) are typed at the console, which here is the service's own ``submit``;
- the feed goes to a broker when one is given.

The table was dealt from ``--seed`` and the cards scanned at the deal, so the referee knows the
deal and checks every card read against it. The game goes to ``--journal-dir``; run the same
command again after a crash and the service resumes it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import math
import random
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cardtable.config import TableConfig, parse_config
from cardtable.errors import TemporaryFailure
from cardtable.players import (
    DEFAULT_NAMES,
    TURN_MS,
    Reactions,
    choose_vandatta,
    slappers,
    stamped,
)
from cardtable.service import RefereeService
from cardtable.wiring import add_site, build_service
from firmware_bridge.deck import Deck, synthetic_deck
from firmware_bridge.edge import BoardEdge
from firmware_bridge.emulator import VirtualBoard
from hardware.config import DEFAULT_MAX_PRESSES_PER_S, MOST_PRESSES_PER_S
from hardware.mock import MonotonicClock, VirtualMockFactory
from referee.deal import reshuffled
from referee.errors import JournalWriteError
from referee.games import games
from referee.games.vandatta import next_deal
from referee.model import Input, Verdict
from referee.options import VandattaOptions

SLAP_PINS = (17, 5, 23, 16, 4, 12, 19, 26)
CALL_PINS = (27, 6, 24, 20, 18, 25, 13, 21)


def full_stack_config(game: str, players: int, seed: int, *, journal_dir: str,
                      options: dict[str, Any] | None = None, dealer: int = 0,
                      broker: str | None = None, table_id: str = "sim",
                      settle_ms: float = 20.0, card_source: str = "board",
                      pads: int | None = None, language: str | None = None) -> dict[str, Any]:
    """The TOML document (as a dict) of a simulated table: mock GPIO pads per seat (``pads``:
    that many, for games of more seats started from the operator page), the board (its port
    is filled in once the emulator runs), the feed if a broker is given;
    ``card_source = "camera"``: the cards are laid under the virtual camera instead."""
    doc: dict[str, Any] = {
        "table": {"id": table_id, "game": game, "seats": list(DEFAULT_NAMES[:players]),
                  "dealer": dealer, "card_source": card_source, "seed": seed,
                  "journal_dir": journal_dir, "settle_ms": settle_ms},
        "options": dict(options or {}),
        "hardware": {"pin_factory": "mock"},
        "seats": [{"name": DEFAULT_NAMES[i], "slap": SLAP_PINS[i], "call": CALL_PINS[i]}
                  for i in range(pads or players)],
        "board": {"port": "pending", "buttons": list(range(players))},
    }
    if broker:
        doc["broker"] = {"url": broker}
    if language is not None:
        doc["table"]["language"] = language
    return doc


class VirtualPlayers:
    """The seated players: they watch the table like people do and act through the edges."""

    def __init__(self, service: RefereeService, board: Any, pins: Any, *, seed: int,
                 speed: float = 1.0, board_slaps: bool = False,
                 keep_going: bool = False) -> None:
        self.service = service
        self.board = board
        self.pins = pins
        self.board_slaps = board_slaps
        self.rng = random.Random(f"full-stack-{seed}")
        self.speed = max(speed, 0.01)
        #: Play every game the operator deals (the pads of every seat are there), not one.
        self.keep_going = keep_going
        self.reactions = Reactions(self.rng, len(pins) if keep_going
                                   else len(service.config.seats))
        self._turn_handle: asyncio.TimerHandle | None = None
        self._acted_at: tuple[int, int, Any] | None = None
        self._last_played = -1
        self.loop = asyncio.get_running_loop()
        self.done = asyncio.Event()

    def new_game(self) -> None:
        """Forget the last game: the next state is a new deal's."""
        self._last_played = -1
        self._acted_at = None

    # -- the service tells us every change ---------------------------------------------------
    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """React to a change of the table (called on the service's loop)."""
        if state.get("over"):
            if not self.keep_going:
                self.loop.call_later(0.2 / self.speed + 0.05, self.done.set)
            return
        if state["cards_played"] < self._last_played:  # a new game, dealt from the page
            self.new_game()
        if ("slap" in games[state["game"]].acts
                and state["cards_played"] > self._last_played):
            self._plan_slaps(state)
        self._last_played = state["cards_played"]
        self.plan_turn()

    def plan_turn(self) -> None:
        """(Re)plan the next act of the seat to act."""
        if self._turn_handle is not None:
            self._turn_handle.cancel()
        svc = self.service
        if svc.table is None or svc.table.engine.over or svc.paused:
            return
        state = svc.state()
        game = state["game"]
        seat = state.get("must_draw") if state.get("must_draw") is not None else state["turn"]
        if seat is None:
            if game == "vandatta" and state.get("phase") == "round_over":
                self._turn_handle = self.loop.call_later(1.5 / self.speed, self._deal)
            return
        delay = self.reactions.seconds(seat, TURN_MS[game], 0.3, speed=self.speed)
        self._turn_handle = self.loop.call_later(delay, self._act)

    def _plan_slaps(self, state: dict[str, Any]) -> None:
        for seat, base_ms in slappers(state, self.service.config.options, self.rng):
            delay = self.reactions.seconds(seat, base_ms, speed=self.speed)
            self.loop.call_later(delay, self._press, seat, "slap")

    # -- acting through the edges -------------------------------------------------------------
    def _press(self, seat: int, button: str) -> None:
        if button == "slap" and self.board_slaps:  # the board's button n is seat n's
            self.board.press(seat, True)
            self.loop.call_later(0.06, self.board.press, seat, False)
            return
        pin = self.pins[seat][0 if button == "slap" else 1]
        pin.drive_low()
        self.loop.call_later(0.06, pin.drive_high)

    def _act(self) -> None:
        svc = self.service
        if svc.table is None or svc.table.engine.over or svc.paused:
            return
        state = svc.state()
        # A card read in flight is not judged yet: wait for it rather than read twice; and a
        # player sees a slap land before reaching for the next card (a slap pressed in this
        # same turn of the loop may still wait to be taken in: the service's in_flight).
        key = (state["cards_played"], len(svc.table.inputs), state.get("turn"))
        if self._acted_at == key or svc.in_flight() or state.get("held_slaps"):
            self._turn_handle = self.loop.call_later(0.05, self._act)
            return
        legal = svc.table.engine.legal_inputs(svc.clock.now())
        if state["game"] == "vandatta":
            self._act_vandatta(legal, state)
        else:
            lay = next((i for i in legal if i.act == "lay"), None)
            if lay is None:
                return
            if lay.card is not None:
                self.board.lay(lay.card)
            else:
                svc.submit(Input(svc.clock.now(), lay.seat, "lay"))
        self._acted_at = key
        self._turn_handle = self.loop.call_later(1.0, self._act)  # if nothing came of it

    def _act_vandatta(self, legal: list[Input], state: dict[str, Any]) -> None:
        svc = self.service
        assert svc.table is not None  # checked by _act
        must_draw = state.get("must_draw")
        seat: int = must_draw if must_draw is not None else state["turn"]
        opts = svc.config.options
        assert isinstance(opts, VandattaOptions)
        if (state["stock"] == 0 and len(state["pile"]) > 1 and opts.reshuffle_discards
                and not any(i.act == "draw" for i in legal)):
            svc.submit(Input(svc.clock.now(), seat, "reshuffle",
                             stock=reshuffled(state["pile"], self.rng)))
            return
        if not legal:
            return
        choice = choose_vandatta(legal, svc.table.engine.hand, self.rng)
        cards = choice.cards or ()
        if choice.act == "play" and len(cards) == 1 and choice.as_ is None:
            self.board.lay(cards[0])
        elif choice.act == "draw" and choice.card is not None:
            self.board.lay(choice.card, reader=svc.config.stock_reader)
        elif choice.act == "call":
            self._press(choice.seat, "call")
        else:
            svc.submit(stamped(choice, svc.clock.now()))

    def _deal(self) -> None:
        svc = self.service
        svc.submit(next_deal(svc.state(), self.rng.getrandbits(32), svc.clock.now()))


def paced(doc: dict[str, Any], speed: float) -> dict[str, Any]:
    """``doc`` for players ``speed`` times a person's pace: the pads' chatter guard lets them
    press that many times as often (at most :data:`~hardware.config.MOST_PRESSES_PER_S` a
    second), unless the document says otherwise. At a hundred times a person's pace, 9
    presses came within a second, and the guard ignored a seat's slaps for a second at a time."""
    if speed > 1 and "hardware" in doc:
        doc["hardware"].setdefault("max_presses_per_s", min(
            MOST_PRESSES_PER_S, math.ceil(DEFAULT_MAX_PRESSES_PER_S * speed)))
    return doc


async def run_full_stack(doc: dict[str, Any], *, seed: int, speed: float = 1.0,
                         outputs: list[Any] | None = None,
                         on_ready: Callable[[RefereeService], None] | None = None,
                         timeout_s: float | None = None,
                         board_factory: Callable[[Deck], Any] | None = None,
                         board_slaps: bool = False,
                         camera_deck: str = "touati",
                         again: bool = False,
                         site: tuple[str, int] | None = None,
                         announce: Callable[[str], None] | None = None,
                         stop: asyncio.Event | None = None) -> RefereeService:
    """Run one simulated table to the end of its game (or ``timeout_s``); returns the service.
    With ``again`` a game that ends is followed by a new deal (the next seed) until
    ``timeout_s``: one service running for as long as a soak test wants.

    ``board_factory(deck)``: another table board than the emulator, with its ``start()``,
    ``lay(card, reader)``, ``press(button, pressed)`` and ``close()`` (the firmware on
    MicroPython, tests/firmware); ``board_slaps``: slaps are pressed on the board's buttons
    instead of the GPIO pads; ``site``: serve the table's display and operator page on
    ``(host, port)`` (``announce`` is told where) and play every game dealt until ``stop`` is
    set (the configuration should give pads for every seat: ``full_stack_config(pads=8)``)."""
    deck = synthetic_deck(seed)
    board = board_factory(deck) if board_factory else VirtualBoard(deck=deck, seed=seed)
    port = await board.start()
    doc = json.loads(json.dumps(doc))
    doc["board"]["port"] = port
    config: TableConfig = parse_config(paced(doc, speed), "<full-stack>")
    factory = VirtualMockFactory(MonotonicClock())
    camera = None
    if config.card_source == "camera":  # the virtual camera films a table of camera_deck
        from hardware.camera.synthetic.virtual import CameraTable

        camera = CameraTable(None, camera_deck, seed)
    service = build_service(config, console=False, pin_factory=factory, deck=deck,
                            camera_source=None if camera is None else camera.source)
    if site is not None:
        pages = add_site(service, announce=announce, host=site[0], port=site[1])
    board_edge = next(e for e in service.edges if isinstance(e, BoardEdge))
    service.fsync = True
    # The game's time starts near 0:01, not at the machine's uptime (a resumed game goes on
    # from its journal's last input: see RefereeService._resume).
    service.clock.offset_ns = 1_000_000_000 - time.monotonic_ns()
    service.stop_on_journal_fault = True  # a simulation cannot wait for a disk: end with it
    # a finished game of this very deal is its result (a run resumed after its end); any other
    # game in the folder, finished or not, is archived under its own name and this one played
    service.open_game(keep_finished=True, other_game="new")
    wired = config.raw.get("seats") or []
    pins = [(factory.pin(SLAP_PINS[i]), factory.pin(CALL_PINS[i]))
            for i in range(max(len(wired), len(config.seats)))]
    players = VirtualPlayers(service, board, pins, seed=seed, speed=speed,
                             board_slaps=board_slaps, keep_going=site is not None)
    service.outputs.append(players)
    if camera is not None:  # the players lay their cards under the camera
        camera.service = service
        camera.edge = next(e for e in service.edges if type(e).__name__ == "CameraEdge")
        players.board = camera
        service.outputs.append(camera)
    service.outputs.extend(outputs or [])
    task = asyncio.create_task(service.run())
    try:
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                while board_edge.link is None:
                    await asyncio.sleep(0.01)
                await board_edge.link.wait_online()
        if on_ready is not None:
            on_ready(service)
        players.update([], service.state())
        if site is not None:  # the operator deals: play on until told to stop
            async with asyncio.timeout(10):
                while pages.listening is None and not task.done():
                    await asyncio.sleep(0.01)
            if pages.listening is False:  # no page: nobody could deal (it had waited for ever)
                raise TemporaryFailure("no operator page, so nobody could deal: the table stops"
                                       + ("" if announce is not None else f" ({pages.error})"))
            done = asyncio.ensure_future((stop or asyncio.Event()).wait())
            await asyncio.wait({done, task}, timeout=timeout_s,
                               return_when=asyncio.FIRST_COMPLETED)
            done.cancel()
        until = None if timeout_s is None else time.monotonic() + timeout_s
        deals = 0
        while site is None:
            done = asyncio.ensure_future(players.done.wait())
            # The game ends, or the service stops by itself (a journal that cannot be written).
            await asyncio.wait({done, task}, return_when=asyncio.FIRST_COMPLETED,
                               timeout=None if until is None else until - time.monotonic())
            done.cancel()
            if not (again and players.done.is_set() and not task.done()):
                break
            players.done.clear()
            if service.table is None or not service.table.engine.over:
                continue  # a late "done" of the game before
            deals += 1
            players.new_game()
            service.start_game(seed + deals)
            players.update([], service.state())
    finally:
        service.stop()
        with contextlib.suppress(Exception):
            await task
        await board.close()
    if service.journal_fault is not None:
        raise JournalWriteError(f"the journal cannot be written ({service.journal_fault})")
    return service


def default_journal_dir() -> str:
    """A fresh folder for a full-stack game's journal when none is given."""
    return tempfile.mkdtemp(prefix="referee-full-stack-")


def journal_dir_arg(value: str | None) -> str:
    """The journal folder to use (created if needed)."""
    path = Path(value) if value else Path(default_journal_dir())
    path.mkdir(parents=True, exist_ok=True)
    return str(path)
