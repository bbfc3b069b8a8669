"""Enrolling a deck from a phone: the wizard's *Enrol this deck* (``/setup/``).

The camera's frames are read on a thread of their own by
:func:`hardware.camera.reader.enroll.take_live`, as ``referee camera enroll --device`` reads
them: each of the 52 cards is asked for in turn and taken once it has lain still. The page polls
:meth:`Enrolment.status` for the card asked for and the count taken, and
:meth:`Enrolment.picture` for what the camera sees. At the end the deck file is written beside
the configuration, in ``decks/`` (:data:`DECKS`), and the page's next save names it as
``[camera] deck``. One enrolment at a time; stopping it writes nothing.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from cardtable.files import write_whole

log = logging.getLogger("cardtable.operator")

#: The folder beside the configuration file where the wizard writes the decks it enrols.
DECKS = "decks"
#: A deck file a web page may name as ``[camera] deck``: one the wizard wrote (no other path).
DECK_NAME = re.compile(DECKS + r"/[A-Za-z0-9][A-Za-z0-9._-]{0,63}\.npz")
#: The states of :meth:`Enrolment.status`.
STATES = ("idle", "running", "done", "stopped", "failed")


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
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._starting = False  # a camera being opened for a new enrolment
        self._latest: Any = None  # the newest frame's picture (BGR), for the page
        self._outline: Any = None  # the card's outline in it, and what it showed
        self._seeing = ""
        self._status: dict[str, Any] = self._fresh("idle")

    @staticmethod
    def _fresh(state: str, source: str | None = None) -> dict[str, Any]:
        return {"state": state, "source": source, "card": None, "done": 0, "total": 52,
                "no_colour": False, "seeing": "", "checking": False, "deck": None,
                "letters": {}, "unread": [], "why": None}

    def running(self) -> bool:
        """Whether an enrolment is under way."""
        with self._lock:
            return bool(self._status["state"] == "running")

    def status(self) -> dict[str, Any]:
        """What the page shows: ``state`` (:data:`STATES`), the ``source``, the ``card`` asked
        for now, ``done`` of ``total`` taken, ``seeing`` (what the newest frame showed:
        ``no card``, ``the card before``, ``moving``, ``still``), ``no_colour`` (the camera
        gives none),
        ``checking`` (all taken, the self-check under way), and at the end the ``deck`` file
        (relative to the configuration's folder), the ``letters`` it prints for its courts and
        aces, the cards its self-check did not read (``unread``: the card, what it was read as
        or null, why), or ``why`` it stopped."""
        with self._lock:
            return {**self._status, "letters": dict(self._status["letters"]),
                    "unread": list(self._status["unread"])}

    def start(self, source: str) -> None:
        """Open ``source`` and start asking for the cards. Raises :class:`RuntimeError` when
        an enrolment is under way, :class:`OSError` when the camera cannot be opened and
        :class:`ImportError` without the camera extra."""
        with self._lock:  # the camera is opened outside it: status() never waits on that
            if self._status["state"] == "running" or self._starting:
                raise RuntimeError("a deck is being enrolled: finish or stop it first")
            self._starting = True
        try:
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
            self._stop.clear()
            self._latest, self._outline, self._seeing = None, None, ""
            self._status = self._fresh("running", source)
            self._thread = threading.Thread(target=self._run, args=(camera,),
                                            name="enrolment", daemon=True)
            self._thread.start()

    def stop(self) -> None:
        """Stop at the next frame; nothing is written."""
        self._stop.set()

    def join(self, timeout: float | None = None) -> None:
        """Wait for the enrolment's thread to end (tests, and a wizard shutting down)."""
        thread = self._thread
        if thread is not None:
            thread.join(timeout)

    def picture(self) -> bytes | None:
        """The newest frame the enrolment saw, as a JPEG, the card's outline drawn on it
        (green lying still, amber otherwise; None before the first frame)."""
        import cv2
        import numpy as np

        image, (outline, seeing) = self._latest, (self._outline, self._seeing)
        if image is None:
            return None
        if outline is not None:
            image = image.copy()
            colour = (0, 200, 0) if seeing == "still" else (0, 170, 255)
            cv2.polylines(image, [np.asarray(outline, np.int32).reshape(-1, 1, 2)], True,
                          colour, max(2, image.shape[1] // 320))
        ok, jpeg = cv2.imencode(".jpg", image, [cv2.IMWRITE_JPEG_QUALITY, 75])
        return bytes(jpeg.tobytes()) if ok else None

    def _frames(self, camera: Any) -> Iterator[Any]:
        for frame in camera.frames():
            if self._stop.is_set():
                return
            self._latest = frame.image
            yield frame

    def _watch(self, what: str, outline: Any) -> None:
        self._outline, self._seeing = outline, what
        with self._lock:
            self._status["seeing"] = what

    def _show(self, card: Any, what: str) -> None:
        with self._lock:
            if what == "lay":
                self._status.update(card=str(card), no_colour=False)
            elif what == "no colour":
                self._status["no_colour"] = True
            else:
                self._status["done"] += 1

    @staticmethod
    def _close(camera: Any) -> None:
        try:
            camera.close()
        except Exception:  # closing must not hide how the enrolment ended
            log.debug("set-up: the camera did not close", exc_info=True)

    def _run(self, camera: Any) -> None:
        from hardware.camera.reader.enroll import (
            EnrollError,
            build,
            glyph_names,
            self_check,
            take_live,
        )
        from referee.cards import full_deck

        end: dict[str, Any]
        try:
            try:
                seen = take_live(self._frames(camera), self._show, full_deck(),
                                 watch=self._watch)
            finally:
                self._close(camera)  # the self-check reads the frames it kept
            with self._lock:
                self._status.update(card=None, checking=True)
            deck = build(seen)
            stamp = time.strftime("%Y%m%d-%H%M%S", time.localtime(self._clock()))
            name = f"{DECKS}/deck-{stamp}.npz"
            (self.folder / DECKS).mkdir(exist_ok=True)
            write_whole(self.folder / name, deck.to_bytes())
            letters = {"A" if r == 14 else "JQK"[r - 11]: g
                       for r, g in sorted(glyph_names(deck).items()) if r > 10}
            end = {"state": "done", "deck": name, "letters": letters,
                   "unread": [[str(card), None if got is None else str(got), why]
                              for card, got, why in self_check(deck, seen)]}
            log.warning("set-up: a deck was enrolled into %s", self.folder / name)
        except EnrollError as exc:
            end = {"state": "stopped" if self._stop.is_set() else "failed", "why": str(exc)}
        except OSError as exc:  # the camera failed, or the deck file cannot be written
            end = {"state": "failed", "why": f"{exc.strerror or exc}" + (
                f": {exc.filename}" if exc.filename else "")}
        except Exception as exc:  # a frame no camera gives; never a silent thread
            log.exception("set-up: the enrolment failed")
            end = {"state": "failed", "why": f"{type(exc).__name__}: {exc}"}
        end["checking"] = False
        with self._lock:
            self._status.update(end)
