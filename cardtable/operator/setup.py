"""The set-up wizard's work (the page is ``/setup/``, :mod:`.site`): learning each pad's GPIO
line from the edge a press makes, finding the table board by asking every serial port for its
handshake, a camera's preview frame, and writing ``table.toml``.

:func:`write_table` writes the file as a person would: readable TOML with a comment on each
section, through tomlkit, so that a file that existed keeps its own comments and keys; the new
text is checked as ``referee run`` checks it (:func:`cardtable.config.parse_config`) before it
replaces anything, written to a spare file and renamed over the old one (atomic), and the old
one is kept beside it as ``<name>.previous``.
"""

from __future__ import annotations

import asyncio
import contextlib
import glob
import logging
import os
import re
import threading
import time
import tomllib
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import tomlkit
from tomlkit.items import Table as TomlTable

from cardtable.config import parse_config
from cardtable.errors import ConfigError
from cardtable.files import write_whole
from cardtable.operator.enrolment import DECK_NAME

log = logging.getLogger("cardtable.operator")

#: BCM lines a pad may be wired to (2/3 are I²C, 14/15 the serial console).
CANDIDATE_LINES = tuple(n for n in range(4, 28) if n not in (14, 15))

#: How long the wizard waits for a press.
LEARN_S = 20.0


@dataclass
class Answers:
    """What the wizard asks, with the answers of now (from the file that exists, if any)."""

    table_id: str = "table"
    game: str = "banka-bever"
    seats: list[str] = field(default_factory=lambda: ["Anna", "Bo"])
    #: One dict per seat: ``slap``, ``call``, ``led`` (BCM numbers or None).
    pads: list[dict[str, int | None]] = field(default_factory=list)
    pin_factory: str = "lgpio"
    card_source: str = "virtual"
    board_port: str | None = None
    camera_source: str | None = None
    #: ``[camera] deck``: a deck file the wizard enrolled (``decks/…npz``), or None.
    camera_deck: str | None = None
    broker_url: str | None = None
    journal_dir: str = "journals"
    #: The table's language (``[table] language``); None: the file says none (the system's).
    language: str | None = None

    def to_json(self) -> dict[str, Any]:
        """As the page takes them (the broker's password left out: :func:`without_password`)."""
        out = dict(self.__dict__)
        if self.broker_url:
            out["broker_url"] = without_password(self.broker_url)
        return out

    @classmethod
    def from_json(cls, obj: Any, saved: Answers | None = None) -> Answers:
        """The page's answers, checked for their kinds and for what a web page may ask of this
        machine (what they say is checked by :func:`write_table` as ``referee run`` checks a
        file). ``saved``: the answers of the file as it is; what a person wrote there is kept
        when the page sends it back unchanged (a camera source, the journal folder, the
        broker's password, which the page is never shown). Raises :class:`ValueError` naming
        the answer."""
        if not isinstance(obj, dict):
            raise ValueError("the answers: names and values")
        out = cls()
        for key, value in obj.items():
            if key not in out.__dict__:
                raise ValueError(f"unknown answer {key!r}")
            setattr(out, key, value)
        for key in ("table_id", "game", "pin_factory", "card_source"):
            if not isinstance(getattr(out, key), str):
                raise ValueError(f"{key}: text")
        for key in ("board_port", "camera_source", "camera_deck", "broker_url", "language"):
            if getattr(out, key) is not None and not isinstance(getattr(out, key), str):
                raise ValueError(f"{key}: text, or null")
        if not isinstance(out.seats, list) or not all(isinstance(s, str) for s in out.seats):
            raise ValueError("seats: a list of names")
        if out.language:  # written as the catalogs name it: "SV_se" left the page's list blank
            from cardtable.i18n import normalize

            out.language = normalize(out.language)
        if not isinstance(out.pads, list) or not all(_pad_ok(p) for p in out.pads):
            raise ValueError("pads: one set of lines per seat ('slap', 'call', 'led': GPIO "
                             "numbers, or null)")
        if (out.camera_source is not None and not web_camera(out.camera_source)
                and (saved is None or out.camera_source != saved.camera_source)):
            raise ValueError("camera_source: one of this machine's cameras (/dev/video…), "
                             "'picamera' or a camera number")
        if (out.camera_deck is not None and DECK_NAME.fullmatch(out.camera_deck) is None
                and (saved is None or out.camera_deck != saved.camera_deck)):
            raise ValueError("camera_deck: a deck the wizard enrolled (decks/….npz)")
        if not (plain_folder(out.journal_dir)
                or (saved is not None and out.journal_dir == saved.journal_dir)):
            raise ValueError("journal_dir: the name of a folder beside the configuration file "
                             "(no path)")
        if saved is not None and saved.broker_url and out.broker_url:
            if out.broker_url == without_password(saved.broker_url):
                out.broker_url = saved.broker_url  # the password the page was not shown
        return out


def _pad_ok(pad: Any) -> bool:
    """A pad's lines as the wizard learns them: whole numbers (or null) for its roles."""
    return isinstance(pad, dict) and set(pad) <= {"slap", "call", "led"} and all(
        v is None or (isinstance(v, int) and not isinstance(v, bool)) for v in pad.values())


#: A camera number a web page may name (OpenCV's device index).
_CAMERA_NUMBER = re.compile(r"[0-9]{1,2}")


def web_camera(source: str) -> bool:
    """Whether a web page may name ``source`` as the camera (to preview or to save): the Pi
    camera, a camera number, or one of this machine's video devices (:func:`cameras`); never
    a file, an address or a device that is not there."""
    return (source in ("picamera", "picamera2") or _CAMERA_NUMBER.fullmatch(source) is not None
            and str(int(source)) == source or source in cameras())


def plain_folder(name: Any) -> bool:
    """Whether ``name`` is a folder's plain name (no path, not hidden): a web page may put the
    journals there, beside the configuration file, and nowhere else."""
    return (isinstance(name, str) and 0 < len(name) <= 64 and name.isprintable()
            and not name.startswith(".") and not any(c in name for c in "/\\:")
            and name.strip() == name)


def without_password(url: str) -> str:
    """``url`` with its password left out (everything else as written: user, host, port,
    path, ``?cafile=``)."""
    parts = urlsplit(url.strip() if "://" in url else "mqtt://" + url.strip())
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)
    user = netloc[0].split(":", 1)[0]
    return urlunsplit(parts._replace(netloc=f"{user}@{netloc[1]}"))


def answers_of(path: Path) -> Answers:
    """The answers a configuration file gives (the defaults where it says nothing, or when
    it cannot be read)."""
    out = Answers()
    try:
        doc = tomlkit.parse(path.read_text(encoding="utf-8")).unwrap()
    except (OSError, ValueError, tomlkit.exceptions.TOMLKitError):
        return out
    table = doc.get("table") or {}
    out.table_id = str(table.get("id", out.table_id))
    out.game = str(table.get("game", out.game))
    if isinstance(table.get("seats"), list):
        out.seats = [str(s) for s in table["seats"]]
    out.card_source = str(table.get("card_source", out.card_source))
    out.journal_dir = str(table.get("journal_dir", out.journal_dir))
    if isinstance(table.get("language"), str):
        out.language = table["language"]
    out.pin_factory = str((doc.get("hardware") or {}).get("pin_factory", out.pin_factory))
    out.pads = [{k: s.get(k) for k in ("slap", "call", "led")}
                for s in doc.get("seats") or [] if isinstance(s, dict)]
    out.board_port = (doc.get("board") or {}).get("port")
    out.camera_source = (doc.get("camera") or {}).get("source")
    deck = (doc.get("camera") or {}).get("deck")
    out.camera_deck = deck if isinstance(deck, str) else None
    out.broker_url = (doc.get("broker") or {}).get("url")
    return out


def _section(doc: Any, name: str, comment: str) -> TomlTable:
    if name not in doc:
        table = tomlkit.table()
        table.comment(comment)
        doc[name] = table
    section: TomlTable = doc[name]
    return section


def table_document(answers: Answers, existing: str | None = None) -> str:
    """The TOML text of ``answers``: ``existing`` (a file's text) updated in place, keeping its
    comments and every key the wizard does not ask about, or a new commented document."""
    doc = tomlkit.parse(existing) if existing else tomlkit.document()
    if not existing:
        doc.add(tomlkit.comment("The card table referee's configuration (referee run --config "
                                "this file)."))
        doc.add(tomlkit.comment("Written by the set-up wizard; edit it freely: docs/install.md "
                                "says what each key does."))
        doc.add(tomlkit.nl())
    table = _section(doc, "table", "the table, its game and its players")
    table["id"] = answers.table_id
    table["game"] = answers.game
    table["seats"] = list(answers.seats)
    table["card_source"] = answers.card_source
    if answers.language:
        if "language" not in table:
            table["language"] = answers.language
            table["language"].comment("the words of the displays and pages (docs/i18n.md)")
        else:
            table["language"] = answers.language
    elif "language" in table:  # the system's language chosen again (it had been kept)
        del table["language"]
    if "journal_dir" not in table:
        table["journal_dir"] = answers.journal_dir
        table["journal_dir"].comment("every game is kept here, and resumed after a crash")
    elif table["journal_dir"] != answers.journal_dir:  # a new folder was answered "saved"
        table["journal_dir"] = answers.journal_dir
    pads = [p for p in answers.pads if p.get("slap") is not None]
    if pads:
        hardware = _section(doc, "hardware", "the GPIO pads (docs/wiring.md)")
        hardware["pin_factory"] = answers.pin_factory
        seats = tomlkit.aot()
        for k, pad in enumerate(pads):
            entry = tomlkit.table()
            entry["name"] = answers.seats[k] if k < len(answers.seats) else f"Seat {k}"
            for role in ("slap", "call", "led"):
                if pad.get(role) is not None:
                    entry[role] = pad[role]
            seats.append(entry)
        doc["seats"] = seats
    else:
        for name in ("hardware", "seats"):
            if name in doc:
                del doc[name]
    if answers.card_source == "board" or answers.board_port:
        board = _section(doc, "board", "the table board on its serial port (docs/protocol.md)")
        board["port"] = answers.board_port or ""
    elif "board" in doc:
        del doc["board"]
    if answers.card_source == "camera":
        camera = _section(doc, "camera", "the camera over the pile (docs/camera.md)")
        camera["source"] = answers.camera_source or "/dev/video0"
        if answers.camera_deck:
            camera["deck"] = answers.camera_deck
        elif "deck" in camera:  # the page sent none: read out of the box
            del camera["deck"]
    if answers.broker_url:
        broker = _section(doc, "broker", "the MQTT feed for displays elsewhere (docs/feed.md)")
        broker["url"] = answers.broker_url
    elif "broker" in doc:
        del doc["broker"]
    return tomlkit.dumps(doc)


def _write_table(path: Path, answers: Answers) -> Path | None:
    try:
        existing = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        existing = None
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(str(path), None, f"cannot read the file to update it: {exc}") from None
    try:
        text = table_document(answers, existing)
    except tomlkit.exceptions.TOMLKitError as exc:  # an existing file that is not TOML
        raise ConfigError(str(path), None, f"not valid TOML: {exc}") from None
    check_text(text, path)
    kept = None
    if existing is not None:
        kept = path.with_name(path.name + ".previous")
        # as private as the file it was (it may name the broker's password): a .previous
        # had been readable by all beside a table.toml of mode 0640
        try:
            mode: int | None = os.stat(path).st_mode & 0o777
        except OSError:
            mode = None
        write_whole(kept, existing, mode=mode)
    write_whole(path, text)
    return kept


#: Saves run on threads of their own (``asyncio.to_thread``): one at a time, each reading the
#: file the last one wrote (two phones saving at once had written into one spare file, and
#: left ``table.toml`` one answer with the tail of the other glued on).
_saving = threading.Lock()


def write_table(path: Path, answers: Answers) -> Path | None:
    """Write ``answers`` to ``path`` (see the module's docstring); the previous file's copy,
    or None when there was none. Raises :class:`ConfigError` naming the key when the answers
    do not make a configuration ``referee run`` takes, before anything is written."""
    with _saving:
        return _write_table(path, answers)


def check_text(text: str, path: Path) -> None:
    """Check a configuration's text as ``referee run`` checks its file: read by the same TOML
    reader, :func:`cardtable.config.parse_config`, and its pads as the GPIO edge reads them
    (:func:`cardtable.wiring.pad_config`). Raises :class:`ConfigError` naming the key."""
    from cardtable.wiring import pad_config

    try:
        raw = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(str(path), None, f"not valid TOML: {exc}") from None
    pad_config(parse_config(raw, str(path)))


class PadLearner:
    """Learns a pad's GPIO line from the press: every free candidate line is watched (an
    input with the pull-up, as the pads are wired) and the first that falls is the pad's."""

    def __init__(self, factory: Any, candidates: Iterable[int] = CANDIDATE_LINES) -> None:
        self.factory = factory
        self.candidates = tuple(candidates)
        self._lock = threading.Lock()

    async def learn(self, taken: Iterable[int], timeout: float = LEARN_S) -> int | None:
        """The line of the next press among the lines not ``taken`` (None after ``timeout``
        seconds without one)."""
        from gpiozero import Button

        loop = asyncio.get_running_loop()
        found: asyncio.Future[int] = loop.create_future()
        buttons = []
        busy = set(taken)

        def pressed(line: int) -> None:
            if not found.done():
                found.set_result(line)

        with self._lock:
            try:
                for line in self.candidates:
                    if line in busy:
                        continue
                    try:
                        button = Button(line, pull_up=True, bounce_time=None,
                                        pin_factory=self.factory)
                    except Exception as exc:  # a line in use elsewhere: not a pad to learn
                        log.debug("wizard: GPIO %d cannot be watched (%s)", line, exc)
                        continue
                    button.when_pressed = (
                        lambda line=line: loop.call_soon_threadsafe(pressed, line))
                    buttons.append(button)
                try:
                    return await asyncio.wait_for(found, timeout)
                except TimeoutError:
                    return None
            finally:
                for button in buttons:
                    with contextlib.suppress(Exception):
                        button.close()


def serial_ports() -> list[str]:
    """The serial ports of this machine a board may be on."""
    found: list[str] = []
    with contextlib.suppress(Exception):
        from serial.tools import list_ports

        found = [p.device for p in list_ports.comports()]
    for extra in ("/dev/serial0", *sorted(glob.glob("/dev/ttyACM*"))):
        if os.path.exists(extra) and extra not in found:
            found.append(extra)
    return found


async def probe_board(ports: Iterable[str], timeout: float = 2.0) -> list[dict[str, Any]]:
    """Ask each port for the board's handshake: the ports a board answered on, each with the
    board's name (all at once, ``timeout`` seconds)."""
    from firmware_bridge.link import Link

    async def ask(port: str) -> dict[str, Any] | None:
        link = Link(port, reconnect_s=timeout * 2)
        try:
            await link.open()
            await link.wait_online(timeout)
            board = link.board
            return {"port": port, "board": getattr(board, "name", None) or "a table board"}
        except Exception:  # no board there (or no such port): not ours
            return None
        finally:
            with contextlib.suppress(Exception):
                await link.close()

    found = await asyncio.gather(*(ask(p) for p in ports))
    return [f for f in found if f is not None]


def cameras() -> list[str]:
    """The video devices of this machine."""
    return sorted(glob.glob("/dev/video*"))


def camera_frame(source: str, *, recognise: bool = True, deck: Path | None = None) -> bytes:
    """One frame of a camera (or video file) as a JPEG, with the card outline the recogniser
    found and the card it read drawn on it. Raises :class:`OSError` (the camera cannot be
    opened, gives no frame, or gives frames no camera gives) or :class:`ImportError` (no
    camera extra)."""
    import cv2

    from hardware.camera.reader.sources import open_source

    src = open_source(source)
    try:
        frame = next(iter(src.frames()), None)
    finally:
        src.close()
    if frame is None:
        raise OSError(f"{source} gave no picture")
    image = frame.image.copy()
    if recognise:
        from hardware.camera.reader.recognise import FrameError, Recogniser
        from hardware.camera.reader.templates import EnrolledDeck

        enrolled = EnrolledDeck.load(deck) if deck is not None else None
        try:
            read = Recogniser(enrolled).read(image)
        except FrameError as exc:  # a video or stream of frames no camera gives
            raise OSError(f"{source}: {exc}") from None
        draw_read(image, read)
    ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 80])
    if not ok:
        raise OSError("the picture could not be encoded")
    return bytes(jpeg.tobytes())


def draw_read(image: Any, read: Any) -> None:
    """Draw a read on its frame: the card's outline, and the card (or why it is unclear)."""
    import cv2
    import numpy as np

    if read.quad is not None:
        cv2.polylines(image, [np.asarray(read.quad, dtype=np.int32).reshape(-1, 1, 2)], True,
                      (0, 255, 0), 3)
    words = (f"{read.card} ({read.confidence:.2f})" if read.card is not None
             else f"unclear: {read.reason or 'no card'}")
    cv2.putText(image, words, (12, 36), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (0, 0, 0), 5)
    cv2.putText(image, words, (12, 36), cv2.FONT_HERSHEY_SIMPLEX, 1.0, (255, 255, 255), 2)


def now() -> float:
    """Wall-clock seconds (a name the tests can replace)."""
    return time.time()
