"""Enrolling a deck from a phone: the wizard's *Enrol a deck* (``/setup/``).

The camera's frames are read on a thread of their own by
:func:`hardware.camera.reader.enroll.take_live`, as ``referee camera enroll --device`` reads
them: each of the 52 cards is asked for in turn and taken once it has lain still. The page polls
:meth:`Enrolment.status` for the card asked for and the count taken, and
:meth:`Enrolment.picture` for what the camera sees. At the end the deck file is written beside
the configuration, in ``decks/`` (:data:`DECKS`), and the page's next save names it as
``[camera] deck``. One enrolment at a time; stopping it writes nothing.
"""

from __future__ import annotations

import errno
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from cardtable.errors import NotWritten
from cardtable.files import write_whole
from cardtable.i18n import Words, os_words, said
from referee.describe import ENGLISH, N_, Translator

log = logging.getLogger("cardtable.operator")

#: The folder beside the configuration file where the wizard writes the decks it enrols.
DECKS = "decks"
#: A deck file a web page may name as ``[camera] deck``: one the wizard wrote (no other path).
DECK_NAME = re.compile(DECKS + r"/[A-Za-z0-9][A-Za-z0-9._-]{0,63}\.npz")
#: The states of :meth:`Enrolment.status`.
STATES = ("idle", "running", "done", "stopped", "failed")
#: Why an enrolment stopped from the page ended.
STOPPED = Words(N_("stopped from the page"))


class Enrolment:
    """One deck enrolled at a time from a camera, its file written under ``folder``/``decks``.
    ``opener``: opens a camera by name (default:
    :func:`hardware.camera.reader.sources.open_source`), a source with ``frames()`` and
    ``close()``; ``clock``: the wall clock that names the file."""

    def __init__(self, folder: Path, *, opener: Callable[[str], Any] | None = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.folder = folder
        self._opener = opener
        self._clock = clock
        self._lock = threading.Lock()
        # Each enrolment has its own stop and number: one stopped from the page is over at
        # once for the page (its thread may wait on a camera that sends nothing), and what
        # its thread says afterwards is not heard.
        self._stop = threading.Event()
        self._run_number = 0
        self._thread: threading.Thread | None = None
        self._starting = False  # a camera being opened for a new enrolment
        self._latest: Any = None  # the newest frame's picture (BGR), for the page
        self._outline: Any = None  # the card's outline in it, and what it showed
        self._seeing = ""
        self._unwritten: tuple[bytes, dict[str, Any]] | None = None  # a deck the disk refused
        self._status: dict[str, Any] = self._fresh("idle")

    @staticmethod
    def _fresh(state: str, source: str | None = None) -> dict[str, Any]:
        return {"state": state, "source": source, "card": None, "done": 0, "total": 52,
                "no_colour": False, "seeing": "", "checking": False, "deck": None,
                "letters": {}, "unread": [], "why": None, "can_write_again": False}

    def running(self) -> bool:
        """Whether an enrolment is under way."""
        with self._lock:
            return bool(self._status["state"] == "running")

    def status(self, lang: Translator = ENGLISH) -> dict[str, Any]:
        """What the page shows: ``state`` (:data:`STATES`), the ``source``, the ``card`` asked
        for now, ``done`` of ``total`` taken, ``seeing`` (what the newest frame showed:
        ``no card``, ``the card before``, ``moving``, ``still``), ``no_colour`` (the camera
        gives none), ``checking`` (all taken, the self-check under way), and at the end the
        ``deck`` file (relative to the configuration's folder), the ``letters`` it prints for
        its courts and aces, the cards its self-check did not read (``unread``: the card,
        what it was read as or null, why), or ``why`` it stopped, in ``lang``'s words
        (``can_write_again``: the deck was enrolled but could not be written;
        :meth:`write_again`)."""
        with self._lock:
            why = self._status["why"]
            return {**self._status, "letters": dict(self._status["letters"]),
                    "unread": list(self._status["unread"]),
                    "why": None if why is None else said(why, lang)}

    def start(self, source: str) -> None:
        """Open ``source`` and start asking for the cards. Raises :class:`RuntimeError` when
        an enrolment is under way, :class:`OSError` when the camera cannot be opened and
        :class:`ImportError` without the camera extra."""
        with self._lock:  # the camera is opened outside it: status() never waits on that
            if self._status["state"] == "running" or self._starting:
                raise RuntimeError("a deck is being enrolled: finish or stop it first")
            self._starting = True
            before = self._thread
        try:
            if before is not None:  # one just stopped lets its camera go first
                before.join(2.0)
            opener = self._opener
            if opener is None:
                from hardware.camera.reader.sources import open_source

                opener = open_source
            camera = opener(source)
        except BaseException:
            with self._lock:
                self._starting = False
            raise
        with self._lock:
            self._starting = False
            self._run_number += 1
            self._stop = threading.Event()
            self._unwritten = None
            self._latest, self._outline, self._seeing = None, None, ""
            self._status = self._fresh("running", source)
            self._thread = threading.Thread(
                target=self._run, args=(camera, self._run_number, self._stop),
                name="enrolment", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop: nothing is written. Over at once for the page; the camera is let go at its
        next frame."""
        with self._lock:
            self._stop.set()
            if self._status["state"] == "running":
                self._run_number += 1  # its thread's last words are not heard
                self._status.update(state="stopped", card=None, checking=False,
                                    why=STOPPED)

    def join(self, timeout: float | None = None) -> None:
        """Wait for the enrolment's thread to end (tests, and a wizard shutting down)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def picture(self) -> bytes | None:
        """The newest frame the enrolment saw, as a JPEG, the card's outline drawn on it
        (green lying still, amber otherwise; None before the first frame, or for a frame
        that is no picture)."""
        import cv2
        import numpy as np

        from hardware.camera.reader.enroll import STILL

        image, (outline, seeing) = self._latest, (self._outline, self._seeing)
        if image is None:
            return None
        try:
            if outline is not None:
                image = np.array(image, copy=True)
                colour = (0, 200, 0) if seeing == STILL else (0, 170, 255)
                cv2.polylines(image, [np.asarray(outline, np.int32).reshape(-1, 1, 2)], True,
                              colour, max(2, image.shape[1] // 320))
            ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 75])
        except (cv2.error, ValueError, TypeError, IndexError):  # a frame no camera gives
            return None
        return bytes(jpeg.tobytes()) if ok else None

    def _frames(self, camera: Any, number: int, stop: threading.Event) -> Iterator[Any]:
        for frame in camera.frames():
            if stop.is_set():
                return
            if number == self._run_number:
                self._latest = frame.image
            yield frame

    def _update(self, number: int, **changes: Any) -> None:
        """The status changed by the enrolment ``number``, if it is still the page's."""
        with self._lock:
            if number == self._run_number:
                self._status.update(changes)

    def _watcher(self, number: int) -> Callable[[str, Any], None]:
        def watch(what: str, outline: Any) -> None:
            if number == self._run_number:
                self._outline, self._seeing = outline, what
            self._update(number, seeing=what)
        return watch

    def _shower(self, number: int) -> Callable[[Any, str], None]:
        def show(card: Any, what: str) -> None:
            with self._lock:
                if number != self._run_number:
                    return
                if what == "lay":
                    self._status.update(card=str(card), no_colour=False)
                elif what == "no colour":
                    self._status["no_colour"] = True
                else:
                    self._status["done"] += 1
        return show

    @staticmethod
    def _close(camera: Any) -> None:
        try:
            camera.close()
        except Exception:  # closing must not hide how the enrolment ended
            log.debug("set-up: the camera did not close", exc_info=True)

    def _write(self, data: bytes) -> str:
        """The deck file written under ``decks/``, named by the time (and a number where a
        deck of that second is there); its name. Raises
        :class:`~cardtable.errors.NotWritten` naming it."""
        folder = self.folder / DECKS
        try:
            folder.mkdir(exist_ok=True)
        except FileExistsError:  # a file, or a link to nothing, where the folder goes
            raise NotWritten(Words(N_("{folder} is not a folder"), {"folder": folder}),
                             errno.ENOTDIR) from None
        except OSError as exc:  # a read-only system (the service's /etc), no permission
            raise NotWritten(Words(N_("{folder} cannot be made ({why})"), {
                "folder": folder, "why": os_words(exc)}), exc.errno) from None
        stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self._clock()))
        name, n = f"deck-{stamp}.npz", 1
        while (folder / name).exists():
            n += 1
            name = f"deck-{stamp}-{n}.npz"
        try:
            write_whole(folder / name, data)
        except OSError as exc:
            raise NotWritten(Words(N_("{path} cannot be written ({why})"), {
                "path": folder / name, "why": os_words(exc)}), exc.errno) from None
        return f"{DECKS}/{name}"

    def _written(self, number: int, data: bytes, learned: dict[str, Any]) -> dict[str, Any]:
        """The end of an enrolment whose deck is ``data``: written (``done``), or kept in
        memory where it cannot be (``failed``, ``can_write_again``): 52 cards are not
        asked for again because the disk was full."""
        try:
            name = self._write(data)
        except NotWritten as exc:
            with self._lock:
                if number == self._run_number:
                    self._unwritten = (data, learned)
            return {"state": "failed", "why": exc.words, "can_write_again": True}
        log.warning("set-up: a deck was enrolled into %s", self.folder / name)
        with self._lock:
            self._unwritten = None
        return {"state": "done", "deck": name, "can_write_again": False, **learned}

    def write_again(self) -> None:
        """Write the deck an enrolment could not write (its status says how it went).
        Raises :class:`RuntimeError` when there is none."""
        with self._lock:
            kept, number = self._unwritten, self._run_number
        if kept is None:
            raise RuntimeError("there is no enrolled deck waiting to be written")
        self._update(number, **self._written(number, *kept))

    def _run(self, camera: Any, number: int, stop: threading.Event) -> None:
        from hardware.camera.reader.enroll import (
            CameraStopped,
            EnrollError,
            build,
            court_letters,
            self_check,
            take_live,
        )
        from hardware.camera.reader.recognise import FrameError
        from referee.cards import full_deck

        end: dict[str, Any]
        try:
            try:
                seen = take_live(self._frames(camera, number, stop), self._shower(number),
                                 full_deck(), watch=self._watcher(number))
            finally:
                self._close(camera)  # the self-check reads the frames it kept
            self._update(number, card=None, checking=True)
            deck = build(seen)
            unread = self_check(deck, seen)
            if stop.is_set():  # stopped while it checked: nothing is written
                raise EnrollError(str(STOPPED))
            learned = {"letters": court_letters(deck),
                       "unread": [[str(card), None if got is None else str(got), why]
                                  for card, got, why in unread]}
            end = self._written(number, deck.to_bytes(), learned)
        except EnrollError as exc:
            end = {"state": "failed", "why": Words(N_(
                "the camera stopped before {card} was taken"), {"card": exc.card})
                if isinstance(exc, CameraStopped) else str(exc)}
            if stop.is_set():
                end = {"state": "stopped", "why": STOPPED}
        except OSError as exc:  # the camera failed
            end = {"state": "failed", "why": Words(N_("the camera failed: {why}"), {
                "why": os_words(exc)}) if not exc.filename else Words(N_(
                    "the camera {device} failed: {why}"), {"device": exc.filename,
                                                           "why": os_words(exc)})}
        except FrameError as exc:  # a frame no camera gives, said in words
            end = {"state": "failed", "why": Words(N_("the camera's frames cannot be read "
                                                      "({what})"), {"what": exc})}
        except Exception as exc:  # never a silent thread
            log.exception("set-up: the enrolment failed")
            end = {"state": "failed", "why": Words(N_("unexpected error ({what})"), {
                "what": f"{type(exc).__name__}: {exc}"})}
        self._update(number, checking=False, card=None, **end)
