"""Wiring: the one place that composes a table from its configuration: the edges (console,
GPIO pads, the board, the feed's connection), the :class:`~cardtable.service.RefereeService`
and its outputs (log, seat LEDs, the board's LEDs, the MQTT feed)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cardtable.config import TableConfig
from cardtable.console import ConsoleEdge, SocketConsole
from cardtable.errors import ConfigError
from cardtable.extras import extra_message
from cardtable.feed import TableFeed, parse_broker_url
from cardtable.history import HistoryPublisher
from cardtable.service import Edge, Output, RefereeService
from cardtable.speech import speaker_for
from firmware_bridge.deck import Deck, DeckError
from firmware_bridge.edge import BoardEdge
from hardware import config as hwconfig
from hardware.leds import SeatLeds
from hardware.pins import make_pin_factory
from hardware.slaps import GpioEdge
from referee.describe import describe
from referee.model import Verdict

log = logging.getLogger("cardtable.service")


class LogOutput:
    """Writes each verdict to the log in plain words."""

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """Log the verdicts."""
        for v in verdicts:
            log.info("%s", describe(v.to_json(), state.get("seats") or []))


def board_edge(config: TableConfig, deck: Deck | None = None) -> BoardEdge:
    """The board edge the configuration's ``[board]`` describes; ``deck`` (if given) instead
    of the configured deck file. A deck file that cannot be read is a :class:`ConfigError`."""
    if deck is None and config.deck_file is not None:
        try:
            deck = Deck.load(config.deck_file)
        except (DeckError, OSError) as exc:
            hint = ""
            written = (config.raw.get("board") or {}).get("deck")
            if not config.deck_file.exists():  # a copied configuration left its deck behind
                hint = (" (" + (f"a relative path is taken from the configuration's folder, "
                                f"{config.deck_file.parent}; give the deck file's whole path, "
                                "or write" if not Path(str(written)).is_absolute() else "write")
                        + f" the board emulator's deck there: referee deck synthetic "
                        f"{config.deck_file})")
            raise ConfigError(config.path, "board.deck", f"{exc}{hint}") from exc
    assert config.board_port is not None
    return BoardEdge(config.board_port, deck=deck, buttons=config.board_buttons,
                     stock_reader=config.stock_reader)


def camera_edge(config: TableConfig, open_source: Callable[[], Any] | None = None) -> Any:
    """The camera edge of ``card_source = 'camera'`` (``[camera]``; ``open_source`` instead of
    the configured source). The camera extra missing, or a deck file that cannot be read, is a
    :class:`ConfigError`."""
    from hardware.camera.config import parse_camera

    base = Path(config.path).resolve().parent if config.path != "<config>" else None
    cam = parse_camera(config.raw, config.path, base)
    try:
        from hardware.camera.edge import CameraEdge
        from hardware.camera.reader.recognise import Recogniser
        from hardware.camera.reader.sources import open_source as open_named
        from hardware.camera.reader.templates import EnrolledDeck
    except ImportError as exc:
        raise ConfigError(config.path, "table.card_source", extra_message(
            "camera", 'card_source = "camera"') + f" ({exc})") from None
    enrolled = None
    if cam.deck is not None:
        try:
            enrolled = EnrolledDeck.load(cam.deck)
        except OSError as exc:
            raise ConfigError(config.path, "camera.deck",
                              f"{cam.deck}: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise ConfigError(config.path, "camera.deck", str(exc)) from None
        if enrolled.outdated:
            log.warning("camera.deck: %s", enrolled.outdated)
    return CameraEdge(open_source or (lambda: open_named(cam.source)),
                      Recogniser(enrolled, letters=cam.index_letters), frames=cam.frames)


def pad_config(config: TableConfig) -> hwconfig.HardwareConfig | None:
    """The GPIO pads ``config`` names (``[hardware]``/``[[seats]]``; None: none), checked as
    the service is built with them (the set-up wizard checks a file so before writing it)."""
    raw = config.raw
    if "seats" not in raw and "hardware" not in raw:
        return None
    try:
        hw = hwconfig.parse_config(raw)
    except ConfigError as exc:
        raise ConfigError(config.path, exc.key, exc.reason) from exc
    if len(hw.seats) < len(config.seats):  # more pads than players: some sit out
        raise ConfigError(config.path, "seats",
                          f"{len(hw.seats)} [[seats]] pin entries for "
                          f"{len(config.seats)} seats in table.seats")
    return hw


def check_config(config: TableConfig) -> list[str]:
    """What ``referee run`` would start with (a line for each part), checked as it checks
    before it touches a device: the pin map, the board's deck file, the camera's deck and
    extra. Opens no GPIO chip, port, camera, broker or journal; a :class:`ConfigError` names
    what is wrong."""
    hw = pad_config(config)
    lines = [f"table {config.table_id}: {config.game}, seats {', '.join(config.seats)}",
             f"cards: {config.card_source}"]
    if config.card_source == "board" or config.board_port is not None:
        board = board_edge(config)
        lines.append(f"board: {config.board_port}" + (
            f", deck {config.deck_file} ({len(board.deck)} tags)"
            if board.deck is not None and config.deck_file is not None else ""))
    if config.card_source == "camera":
        camera_edge(config)
    if hw is not None:
        lines.append(f"pads: {len(hw.seats)}, pin factory {hw.factory_name()}")
    lines.append(f"journal: {config.journal_dir}")
    if config.broker is not None:
        lines.append(f"feed: {parse_broker_url(config.broker.url).url()}")
    if config.web.enabled:
        lines.append(f"pages: {config.web.bind}:{config.web.port}")
    return lines


def build_service(config: TableConfig, *, console: bool = True, pin_factory: Any = None,
                  deck: Deck | None = None,
                  camera_source: Callable[[], Any] | None = None, web: bool = False,
                  announce: Callable[[str], None] | None = None) -> RefereeService:
    """The service with the edges and outputs the configuration names: the console, the GPIO
    pads and seat LEDs (``[hardware]``/``[[seats]]``), the board (``[board]``; ``deck``
    replaces its deck file), the MQTT feed (``[broker]``); with ``web`` (and ``[web] enabled``)
    the table's web pages, its display and the operator page (``[web]``; ``announce`` is told
    where, with the pairing code)."""
    outputs: list[Output] = [LogOutput()]
    edges: list[Edge] = []
    if console:
        typed = ConsoleEdge()
        edges.append(typed)
        outputs.append(typed)  # on a terminal it shows the verdicts in plain words
    if config.console_socket is not None:
        edges.append(SocketConsole(config.console_socket))
    hw = pad_config(config)
    if hw is not None:
        try:  # lgpio missing, no /dev/gpiochip yet, no permission, busy: hardware.pins says
            factory = pin_factory or make_pin_factory(hw)
        except ConfigError as exc:  # what a person must fix; the rest may pass (exit 75)
            raise ConfigError(config.path, exc.key,
                              f"{exc.reason}; without GPIO use pin_factory = \"mock\" (or "
                              "GPIOZERO_PIN_FACTORY=mock)") from None
        edges.append(GpioEdge(hw, pin_factory=factory))
        if any(seat.led is not None for seat in hw.seats):
            outputs.append(SeatLeds(hw, pin_factory=factory))
    if config.card_source == "board" or config.board_port is not None:
        board = board_edge(config, deck)
        edges.append(board)
        outputs.append(board)
    if config.card_source == "camera":  # camera_source: the full stack's virtual camera
        edges.append(camera_edge(config, camera_source))
    if config.broker is not None:
        feed = FeedOutput(config)
        edges.append(feed)
        outputs.append(feed)
    speaker = speaker_for(config)  # the verdicts said aloud ([speech])
    if speaker is not None:
        edges.append(speaker)
        outputs.append(speaker)
    service = RefereeService(config, outputs=outputs, edges=edges)
    if web and config.web.enabled:
        add_site(service, announce=announce)
    return service


def add_site(service: RefereeService, *, announce: Callable[[str], None] | None = None,
             host: str | None = None, port: int | None = None) -> Any:
    """Serve the table's web pages with ``service`` (``[web]``'s address unless ``host`` or
    ``port`` is given); the site (:class:`cardtable.operator.site.OperatorSite`)."""
    from cardtable.operator.site import OperatorSite

    cfg = service.config.web
    path = service.config.path
    site = OperatorSite(service, host=cfg.bind if host is None else host,
                        port=cfg.port if port is None else port, hosts=cfg.hosts,
                        pairing_folder=service.journal_dir, announce=announce,
                        config_path=None if path.startswith("<") else Path(path))
    service.edges.append(site)
    service.outputs.append(site)
    return site


class FeedOutput:
    """The MQTT feed as an output of the service (and started/stopped with it)."""

    #: It submits no input (cardtable.service.Source).
    own_stamps = False

    def __init__(self, config: TableConfig) -> None:
        assert config.broker is not None
        self.feed = TableFeed(config.broker.url, config.table_id,
                              username=config.broker.username,
                              password=config.broker.password, seats=list(config.seats),
                              language=config.language)
        self._task: asyncio.Task[None] | None = None
        self.history: HistoryPublisher | None = None

    async def start(self, service: RefereeService) -> None:
        """Connect in the background (the referee never waits for the broker); publish the
        table's history (``history``) now and after each game."""
        self._task = asyncio.create_task(self.feed.run())
        self.history = HistoryPublisher(service.journal_dir, self.feed.table_id,
                                        self.feed.publish_history, asyncio.get_running_loop())
        self.history.refresh()

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """Queue the change for the broker (and the history, when a game or round ended)."""
        self.feed.publish(state, verdicts)
        if self.history is not None:
            self.history.update(verdicts)

    async def stop(self) -> None:
        """Publish the last history and ``offline``, and disconnect."""
        if self.history is not None:
            await self.history.settle()
        self.feed.stop()
        if self._task is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._task, 3)
