"""The table's TOML configuration for ``referee run``: game, seats, options, edges, broker.

Every error names the file and the key. Sections:

``[table]``  ``id``, ``game``, ``seats`` (names, clockwise), ``dealer``, ``card_source``
(``virtual``, ``console``, ``board`` or ``camera``), ``journal_dir``, ``settle_ms`` (default 20, a
camera table 1000), ``seed`` (virtual deck), ``console_socket`` (a Unix socket for ``referee
console`` when the referee runs as a service), ``language`` (``sv``, ``en``: the words of its
displays and pages; default the system locale's, docs/i18n.md).
``[options]`` table options by the names of docs/rules.md (``language`` is also taken here, as
``-o language=sv`` on the command line: a setting of the table, never of the game).
``[broker]`` ``url`` (``mqtt://host:port`` or ``ws://…``), ``username``, ``password`` or
``password_file``. Leave the section out to run without a feed.
``[board]`` ``port`` (device path or pyserial URL), ``deck`` (the deck file of tag ids),
``buttons`` (the seat of each board button, default button n = seat n) and ``stock_reader``
(Vändåtta: the reader by the stock, whose reads are draws; default 1).
``[web]`` the table's web pages (its display and the operator page, docs/operator.md):
``bind`` (default ``127.0.0.1``: this machine only; ``0.0.0.0`` lets phones and screens on the
network in, docs/security.md), ``port`` (default 8080), ``hosts`` (more names the pages answer
to, besides this machine's name and its addresses), ``enabled`` (default true).
``[hardware]`` and ``[[seats]]``: the GPIO pin map, read by :mod:`hardware.config`.
``[camera]``: the camera of ``card_source = "camera"``, read by :mod:`hardware.camera.config`.
``[speech]``: the verdicts said aloud (``say``: ``words``, ``sounds`` or ``both``; ``engine``:
``espeak-ng``, ``piper`` or a program's path; ``voice``; ``player``): :mod:`cardtable.speech`.
Leave it out for a silent table.
"""

from __future__ import annotations

import ipaddress
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cardtable.speech import ENGINES, SAYS, SpeechConfig
from hardware.camera.config import CAMERA_SETTLE_MS
from referee.errors import ConfigError, OptionError, shown
from referee.games import games
from referee.model import name_problem, seats_problem
from referee.options import TableOptions

CARD_SOURCES = ("virtual", "console", "board", "camera")
#: ``[table] release``: by the edges' progress (and the window at the latest), or the window alone.
RELEASES = ("progress", "window")
#: ``[table] settle_ms`` when the configuration gives none (a camera table: ``CAMERA_SETTLE_MS``).
DEFAULT_SETTLE_MS = 20.0

#: MQTT carries a topic of at most 65 535 bytes of UTF-8; the longest topic of a table is
#: ``cardtable/<id>/status`` (as long as ``…/events`` and ``…/seat/<n>``, n < 10).
MAX_TABLE_ID_BYTES = 65_535 - len("cardtable//status")

#: The highest card reader number (0xFF means every reader in the board protocol).
MAX_READER = 254
#: The longest path a Unix socket may have (bytes; the kernel's sun_path less its NUL).
MAX_SOCKET_PATH = 107

#: What a configuration value must be, in the words of TOML.
_KIND_WORDS = {bool: "true or false", int: "a whole number", float: "a number", str: "text",
               list: "a list", dict: "a section"}


def table_id_problem(table_id: str) -> str | None:
    """Why ``table_id`` cannot name a table's MQTT topics (``cardtable/<id>/…``), or None.

    MQTT forbids U+0000, text that is not UTF-8 and topics over 65 535 bytes; ``/`` would
    split the id into levels and ``+`` ``#`` are wildcards; control characters are refused too
    (MQTT advises against them, and a display shows the id).
    """
    if not table_id.strip():
        return "must not be empty" if not table_id else "must not be blank"
    if "\0" in table_id:
        return "must not contain U+0000 (MQTT forbids it)"
    bad = next((c for c in "/+#" if c in table_id), None)
    if bad is not None:
        return f"must not contain {bad} (it is special in MQTT topics; none of / + #)"
    if any(ord(c) < 0x20 or 0x7F <= ord(c) < 0xA0 for c in table_id):
        return "must not contain control characters"
    if name_problem(table_id) is not None:  # U+202E shows "gnp.exe" as "exe.png"
        return "must not contain direction marks"
    try:
        size = len(table_id.encode("utf-8"))
    except UnicodeEncodeError:
        return "must be text that UTF-8 can carry"
    if size > MAX_TABLE_ID_BYTES:
        return (f"is {size} bytes of UTF-8; MQTT topics allow at most {MAX_TABLE_ID_BYTES} "
                "bytes for it")
    return None


@dataclass(frozen=True)
class BrokerConfig:
    """Where the feed publishes."""

    url: str
    username: str | None = None
    password: str | None = None


#: ``[web]`` defaults: this machine only, until the operator lets the network in.
DEFAULT_BIND = "127.0.0.1"
DEFAULT_PORT = 8080


@dataclass(frozen=True)
class WebConfig:
    """Where ``referee run`` serves the table's display and the operator page."""

    bind: str = DEFAULT_BIND
    port: int = DEFAULT_PORT
    hosts: tuple[str, ...] = ()
    enabled: bool = True


@dataclass(frozen=True)
class TableConfig:
    """Everything ``referee run`` needs to know about one table."""

    table_id: str
    game: str
    seats: tuple[str, ...]
    options: TableOptions
    dealer: int = 0
    card_source: str = "virtual"
    journal_dir: Path = Path("journals")
    settle_ms: float = DEFAULT_SETTLE_MS
    seed: int | None = None
    broker: BrokerConfig | None = None
    board_port: str | None = None
    deck_file: Path | None = None
    board_buttons: tuple[int, ...] = ()
    stock_reader: int = 1
    console_socket: Path | None = None
    raw: dict[str, Any] = field(default_factory=dict, compare=False)
    path: str = "<config>"
    #: How held inputs are released: ``progress`` (as soon as every edge is past them, the
    #: settle window at the latest) or ``window`` (the settle window alone).
    release: str = "progress"
    #: The web pages (``[web]``; the defaults when the section is left out).
    web: WebConfig = field(default_factory=WebConfig)
    #: The table's language (``[table] language``; else the system locale's): the words of its
    #: displays and pages. Never journaled: it changes no ruling.
    language: str = "en"
    #: The speaker (``[speech]``), or None: a silent table.
    speech: SpeechConfig | None = None


def _get(section: dict[str, Any], key: str, kind: type | tuple[type, ...], path: str,
         where: str, default: Any = ..., ) -> Any:
    if key not in section:
        if default is ...:
            raise ConfigError(path, f"{where}.{key}", "is required")
        return default
    value = section[key]
    if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _tuple(kind)):
        # int or float: "a number" says both.
        kinds = [k for k in _tuple(kind) if not (k is int and float in _tuple(kind))]
        names = " or ".join(_KIND_WORDS.get(k, k.__name__) for k in kinds)
        raise ConfigError(path, f"{where}.{key}", f"must be {names}, got {shown(value)}")
    return value


#: The longest seat name: the displays show each name in large type beside its cards.
MAX_SEAT_NAME = 40


def _check_seat_names(seats: list[Any], path: str) -> None:
    """Each seat needs a name of its own that a display can show: text, not blank, without
    control characters, at most :data:`MAX_SEAT_NAME` characters, unlike every other seat's
    (ignoring case and spaces around it: two players called "Anna" cannot be told apart)."""
    for k, name in enumerate(seats):
        if not isinstance(name, str):
            raise ConfigError(path, f"table.seats[{k}]",
                              f"must be a name in quotes, got {shown(name)}")
    if (wrong := seats_problem(seats)) is not None:
        raise ConfigError(path, f"table.seats[{wrong[0]}]", wrong[1])
    for k, name in enumerate(seats):
        if len(name) > MAX_SEAT_NAME:
            raise ConfigError(path, f"table.seats[{k}]", f"{shown(name)} is {len(name)} "
                              f"characters long; at most {MAX_SEAT_NAME}")


def _tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


#: The table's language, in ``[table]`` (or ``[options]``): cardtable/i18n.py.
LANGUAGE = "language"


def parse_config(raw: dict[str, Any], path: str = "<config>") -> TableConfig:
    """Validate a parsed TOML document."""
    known = {"table", "options", "broker", "board", "hardware", "seats", "camera", "web",
             "speech"}
    for key in raw:
        if key not in known:
            raise ConfigError(path, key, f"unknown section (known: {', '.join(sorted(known))})")
    table = raw.get("table")
    if not isinstance(table, dict):
        raise ConfigError(path, "table", "the [table] section is required")
    table_keys = {"id", "game", "seats", "dealer", "card_source", "journal_dir", "settle_ms",
                  "seed", "console_socket", "release", "language"}
    for key in table:
        if key not in table_keys:
            raise ConfigError(path, f"table.{key}",
                              f"unknown key (known: {', '.join(sorted(table_keys))})")
    table_id = _get(table, "id", str, path, "table")
    problem = table_id_problem(table_id)
    if problem is not None:
        raise ConfigError(path, "table.id", problem)
    game = _get(table, "game", str, path, "table")
    if game not in games:
        raise ConfigError(path, "table.game",
                          f"must be one of {', '.join(games)}, got {shown(game)}")
    seats = _get(table, "seats", list, path, "table")
    _check_seat_names(seats, path)
    spec = games[game]
    if len(seats) not in spec.seat_range:
        raise ConfigError(path, "table.seats", f"{game} takes {spec.min_seats} to "
                          f"{spec.max_seats} seats, got {len(seats)}")
    dealer = _get(table, "dealer", int, path, "table", 0)
    if not 0 <= dealer < len(seats):
        raise ConfigError(path, "table.dealer", f"must be a seat number 0..{len(seats) - 1}")
    source = _get(table, "card_source", str, path, "table", "virtual")
    if source not in CARD_SOURCES:
        raise ConfigError(path, "table.card_source",
                          f"must be one of {', '.join(CARD_SOURCES)}, got {shown(source)}")
    # A camera sees a card a few frames after it landed (hardware.camera.config).
    settle = _get(table, "settle_ms", (int, float), path, "table",
                  CAMERA_SETTLE_MS if source == "camera" else DEFAULT_SETTLE_MS)
    if not 0 <= settle <= 1000:
        raise ConfigError(path, "table.settle_ms", "must be between 0 and 1000")
    release = _get(table, "release", str, path, "table", "progress")
    if release not in RELEASES:
        raise ConfigError(path, "table.release",
                          f"must be one of {', '.join(RELEASES)}, got {shown(release)}")
    seed = _get(table, "seed", int, path, "table", None)
    socket_name = _get(table, "console_socket", str, path, "table", None)
    # Absolute now: lgpio makes LG_WD the working directory when it is imported (after this),
    # and a relative journal would then land on /run's tmpfs, emptied at every stop.
    base = (Path(path).parent if path != "<config>" else Path(".")).absolute()
    folder = _get(table, "journal_dir", str, path, "table", "journals")
    if not folder.strip():  # "" had put the journal among the configuration files
        raise ConfigError(path, "table.journal_dir", "must name a folder, not be empty")
    journal_dir = base / folder
    language = _language(table, raw.get("options"), path)
    game_options = raw.get("options", {})
    if isinstance(game_options, dict):
        game_options = {k: v for k, v in game_options.items() if k != LANGUAGE}
    try:
        options = spec.parse_options(game_options)
    except OptionError as exc:
        raise ConfigError(path, f"options.{exc.key}", exc.reason) from None
    broker = None
    if "broker" in raw:
        b = raw["broker"]
        if not isinstance(b, dict):
            raise ConfigError(path, "broker", "must be a section")
        password = _get(b, "password", str, path, "broker", None)
        pfile = _get(b, "password_file", str, path, "broker", None)
        if pfile is not None:
            try:
                password = (base / pfile).read_text(encoding="utf-8").strip()
            except OSError as exc:
                raise ConfigError(path, "broker.password_file",
                                  f"cannot read {exc.filename or pfile}: "
                                  f"{exc.strerror or exc}") from None
            except UnicodeDecodeError:
                raise ConfigError(path, "broker.password_file",
                                  f"{pfile} is not UTF-8 text") from None
        url = _get(b, "url", str, path, "broker")
        from cardtable.feed import parse_broker_url  # the feed's own reading of a URL

        try:
            parse_broker_url(url)
        except ValueError as exc:
            raise ConfigError(path, "broker.url", str(exc)) from None
        broker = BrokerConfig(url, _get(b, "username", str, path, "broker", None), password)
    board_port = deck = None
    buttons: tuple[int, ...] = ()
    stock_reader = 1
    if "board" in raw:
        bd = _section(raw, "board", {"port", "deck", "buttons", "stock_reader"}, path)
        board_port = _get(bd, "port", str, path, "board")
        if not board_port.strip():  # the board was looked for and none was found
            raise ConfigError(path, "board.port", "is empty: the board's device path "
                              "(/dev/ttyACM0) or a pyserial URL (socket://host:port)")
        deck_name = _get(bd, "deck", str, path, "board", None)
        deck = None if deck_name is None else base / deck_name
        buttons_raw = _get(bd, "buttons", list, path, "board", list(range(len(seats))))
        if not all(isinstance(b, int) and not isinstance(b, bool) and 0 <= b < len(seats)
                   for b in buttons_raw):
            raise ConfigError(path, "board.buttons",
                              f"must list the seat (0..{len(seats) - 1}) of each board button")
        buttons = tuple(buttons_raw)
        stock_reader = _get(bd, "stock_reader", int, path, "board", 1)
        if not 0 <= stock_reader <= MAX_READER:
            raise ConfigError(path, "board.stock_reader",
                              f"must be a reader number 0..{MAX_READER}, got {stock_reader}")
    if source == "board" and board_port is None:
        raise ConfigError(path, "board.port", "card_source = \"board\" needs [board] port")
    console_socket = None if socket_name is None else base / socket_name
    if console_socket is not None and len(os.fsencode(console_socket)) > MAX_SOCKET_PATH:
        raise ConfigError(path, "table.console_socket", f"is {len(os.fsencode(console_socket))} "
                          f"bytes as a path ({console_socket}); a Unix socket's path holds at "
                          f"most {MAX_SOCKET_PATH}: give a shorter one")
    return TableConfig(table_id, game, tuple(seats), options, dealer, source, journal_dir,
                       float(settle), seed, broker, board_port, deck, buttons, stock_reader,
                       console_socket, raw, path, release, _web(raw, path), language,
                       _speech(raw, path))


def _speech(raw: dict[str, Any], path: str) -> SpeechConfig | None:
    """``[speech]``, checked (None when it is left out)."""
    if "speech" not in raw:
        return None
    sp = _section(raw, "speech", {"say", "engine", "voice", "player"}, path)
    say = _get(sp, "say", str, path, "speech", "words")
    if say not in SAYS:
        raise ConfigError(path, "speech.say", f"must be one of {', '.join(SAYS)}, got "
                          f"{shown(say)}")
    engine = _get(sp, "engine", str, path, "speech", "espeak-ng")
    if engine not in ENGINES and "/" not in engine:
        raise ConfigError(path, "speech.engine", f"must be {' or '.join(ENGINES)}, or the path "
                          f"of a program that takes espeak-ng's arguments, got {shown(engine)}")
    return SpeechConfig(say, engine, _get(sp, "voice", str, path, "speech", None),
                        _get(sp, "player", str, path, "speech", "aplay"))


def _language(table: dict[str, Any], options: Any, path: str) -> str:
    """``[table] language`` (or ``[options] language``, as ``-o`` gives it), checked; the system
    locale's when neither is given."""
    from cardtable.i18n import check_language, system_language

    given = {}
    if LANGUAGE in table:
        given["table.language"] = table[LANGUAGE]
    if isinstance(options, dict) and LANGUAGE in options:
        given["options.language"] = options[LANGUAGE]
    codes = {}
    for key, value in given.items():
        try:
            codes[key] = check_language(value)
        except OptionError as exc:
            raise ConfigError(path, key, exc.reason) from None
    if len(set(codes.values())) > 1:
        raise ConfigError(path, "table.language", "[table] language and [options] language "
                          "differ: give it once, in [table]")
    return next(iter(codes.values())) if codes else system_language()


def _section(raw: dict[str, Any], name: str, keys: set[str], path: str) -> dict[str, Any]:
    """The section ``[name]``, checked to be one and to hold only ``keys``."""
    section = raw[name]
    if not isinstance(section, dict):
        raise ConfigError(path, name, "must be a section")
    for key in section:
        if key not in keys:
            raise ConfigError(path, f"{name}.{key}",
                              f"unknown key (known: {', '.join(sorted(keys))})")
    return section


def _web(raw: dict[str, Any], path: str) -> WebConfig:
    """``[web]``, checked."""
    if "web" not in raw:
        return WebConfig()
    w = _section(raw, "web", {"bind", "port", "hosts", "enabled"}, path)
    bind = _get(w, "bind", str, path, "web", DEFAULT_BIND)
    try:
        ipaddress.ip_address(bind)
    except ValueError:
        raise ConfigError(path, "web.bind", f"must be an IP address of this machine "
                          f"(127.0.0.1: this machine only; 0.0.0.0: every network), got "
                          f"{shown(bind)}") from None
    port = _get(w, "port", int, path, "web", DEFAULT_PORT)
    if not 0 <= port <= 65535:
        raise ConfigError(path, "web.port", f"must be a port number 0..65535 (0: any free "
                          f"one), got {port}")
    hosts = _get(w, "hosts", list, path, "web", [])
    if not all(isinstance(h, str) and h and len(h) <= 253 and h.isprintable() for h in hosts):
        raise ConfigError(path, "web.hosts", "must list host names in quotes")
    return WebConfig(bind, port, tuple(h.lower() for h in hosts),
                     _get(w, "enabled", bool, path, "web", True))


def set_up_place(path: Path) -> tuple[WebConfig, Path, str | None]:
    """Where the set-up wizard serves a configuration file that may not be whole yet, and
    keeps the phones paired to it: the file's ``[web]`` and journal folder where it gives
    them, else the defaults (this machine, port 8080, ``journals`` beside the file); and why
    a ``[web]`` it gives was passed over (None: it was not)."""
    folder = path.parent.absolute() / "journals"
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except (OSError, ValueError):  # not there yet, or not TOML: the wizard writes it whole
        return WebConfig(), folder, None
    table = raw.get("table")
    if isinstance(table, dict) and isinstance(table.get("journal_dir"), str) \
            and table["journal_dir"].strip():
        folder = path.parent.absolute() / table["journal_dir"]
    try:
        return _web(raw, str(path)), folder, None
    except ConfigError as exc:
        return WebConfig(), folder, str(exc)


def load_config(path: str | Path) -> TableConfig:
    """Read and validate a TOML configuration file."""
    p = str(path)
    try:
        with open(path, "rb") as fh:
            raw = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(p, None, f"cannot read the file: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(p, None, f"not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(p, None, "not a TOML file (not UTF-8 text)") from None
    return parse_config(raw, p)
