"""Verdicts said aloud, or as short sounds, for the players who look at their cards and not at a
screen (``[speech]`` of table.toml; docs/i18n.md, "Spoken verdicts").

What is said of a change is decided once for every display (:func:`announcement`): the verdict
of the change that matters most, in words of the table's language, and a sound for the moments
a table hears (a slap that won the pile, a pile won otherwise, a photo finish, a false slap).
The web display speaks it in the browser (``web/speech.js``, ``web/sounds.js``); on the Pi the
:class:`Speaker` speaks it through a local engine: espeak-ng (Debian's ``espeak-ng``) or piper
(where installed), and plays the sounds with ``aplay``.

The speaker never delays a verdict: the service hands it each change (:meth:`Speaker.update`,
which only keeps the change and wakes a thread of its own) and the thread words it, runs the
engine and waits for it. While it speaks, newer changes replace each other: only the newest of
a burst is said next, the others are dropped (:attr:`Speaker.dropped`).
"""

from __future__ import annotations

import asyncio
import contextlib
import io
import logging
import math
import os
import shutil
import struct
import subprocess
import tempfile
import threading
import wave
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cardtable.i18n import ENGLISH_LANGUAGE, Language, language
from hardware.threads import background
from referee.describe import describe
from referee.model import VERDICT_KINDS, Verdict
from referee.races import PHOTO_FINISH_NS

if TYPE_CHECKING:
    from cardtable.service import RefereeService

log = logging.getLogger("cardtable.speech")

#: Which verdict of one change is said (smaller first), as the displays lead with it.
LEAD = {"game_over": 0, "round_over": 1, "pile_won": 2, "out": 3, "challenge": 4,
        "desync": 5, "illegal": 6, "false_slap": 7, "slap_lost": 8}
#: The sounds: a slap that won the pile, a pile won otherwise, a photo finish, a false slap.
SOUNDS = ("slap", "pile", "photo", "false")
#: What ``say`` may be: the words, the sounds, or both.
SAYS = ("words", "sounds", "both")
#: The engines a table names (or the path of a program taking espeak-ng's arguments).
ENGINES = ("espeak-ng", "piper")
#: espeak-ng's voice for each language of the referee (the code itself for any other).
ESPEAK_VOICES = {"sv": "sv", "en": "en-gb"}


@dataclass(frozen=True)
class Announcement:
    """What a change says: ``text`` (words, or None) and ``sound`` (one of :data:`SOUNDS`, or
    None)."""

    text: str | None
    sound: str | None


def announcement(change: Sequence[Mapping[str, Any]], names: Sequence[str],
                 lang: Language = ENGLISH_LANGUAGE, *, pile: Mapping[str, Any] | None = None,
                 photo_finish: bool = False) -> Announcement:
    """What one change (its verdicts, as JSON dicts) says: the verdict that matters most in
    words, and its sound. A change of late slaps only (``slap_lost``) says nothing, unless one
    lost by under a millisecond to the winner of ``pile`` (the latest ``pile_won``): then the
    race was a photo finish, a sound of its own. ``photo_finish``: the race of a pile won by a
    slap is already known to be one (a display that saw its late slaps)."""
    verdicts = [v for v in change if v.get("verdict") in VERDICT_KINDS]
    if not verdicts:
        return Announcement(None, None)
    lead = min(verdicts, key=lambda v: LEAD.get(str(v.get("verdict")), 5))
    kind = lead.get("verdict")
    if kind == "slap_lost":
        winner = None if pile is None else pile.get("seat")
        close = any(v.get("verdict") == "slap_lost" and v.get("to") == winner
                    and isinstance(v.get("margin_ns"), int)
                    and abs(v["margin_ns"]) < PHOTO_FINISH_NS for v in verdicts)
        return Announcement(None, "photo" if close and pile is not None
                            and pile.get("reason") in ("double", "bottom_match") else None)
    sound = None
    if kind == "pile_won":
        by_slap = lead.get("reason") in ("double", "bottom_match")
        sound = "photo" if by_slap and photo_finish else "slap" if by_slap else "pile"
    elif kind == "false_slap":
        sound = "false"
    try:
        text = describe(dict(lead), names, lang)
    except Exception:  # a verdict of a shape the words do not expect: said as nothing
        text = None
    return Announcement(text, sound)


# --------------------------------------------------------------------------- the sounds


#: Each sound's notes: (start s, frequency Hz, end frequency Hz, length s, volume 0..1).
NOTES: dict[str, tuple[tuple[float, float, float, float, float], ...]] = {
    "slap": ((0.0, 140, 70, 0.14, 0.9),),
    "pile": ((0.0, 523, 523, 0.12, 0.5), (0.13, 784, 784, 0.18, 0.5)),
    "photo": ((0.0, 1568, 1568, 0.05, 0.4), (0.09, 1568, 1568, 0.05, 0.4),
              (0.18, 2093, 2093, 0.08, 0.4)),
    "false": ((0.0, 220, 110, 0.35, 0.5),),
}
RATE = 22050


def sound_wav(kind: str, rate: int = RATE) -> bytes:
    """One of :data:`SOUNDS` as a WAV file (16-bit mono), made here: no sound files ship."""
    notes = NOTES[kind]
    length = max(at + n for at, _, _, n, _ in notes) + 0.02
    samples = [0.0] * int(length * rate)
    for at, f0, f1, n, volume in notes:
        start, count = int(at * rate), int(n * rate)
        phase = 0.0
        for i in range(count):
            f = f0 + (f1 - f0) * i / count
            phase += 2 * math.pi * f / rate
            fade = min(1.0, (count - i) / (0.02 * rate), i / (0.002 * rate) + 0.01)
            samples[start + i] += volume * fade * math.sin(phase)
    data = b"".join(struct.pack("<h", max(-32767, min(32767, int(s * 32767))))
                    for s in samples)
    out = io.BytesIO()
    with wave.open(out, "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(data)
    return out.getvalue()


# --------------------------------------------------------------------------- the speaker


@dataclass(frozen=True)
class SpeechConfig:
    """``[speech]`` of table.toml: ``say`` (:data:`SAYS`), ``engine`` (:data:`ENGINES`, or
    the path of a program taking espeak-ng's arguments), ``voice`` (espeak-ng's voice, or
    piper's model file; default: the table's language's), ``player`` (plays the sounds and
    piper's speech, default ``aplay``)."""

    say: str = "words"
    engine: str = "espeak-ng"
    voice: str | None = None
    player: str = "aplay"


class Speaker:
    """The table's speaker: an output (and edge) of the service that says each change in
    ``lang`` (see the module's docstring). ``extra``: more arguments for espeak-ng (the bench
    writes its speech to ``-w /dev/null`` on a machine without a sound card)."""

    #: It submits no input (cardtable.service.Source).
    own_stamps = False

    def __init__(self, config: SpeechConfig, lang: Language, *,
                 extra: Sequence[str] = ()) -> None:
        self.config = config
        self.lang = lang
        self.extra = list(extra)
        #: Changes replaced by a newer one before they were said.
        self.dropped = 0
        #: What was said (words and sounds), the newest last (the last 50).
        self.said: list[str] = []
        self._slot: tuple[list[Verdict], list[str]] | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = False
        self._thread: threading.Thread | None = None
        self._process: subprocess.Popen[bytes] | None = None
        self._pile: Mapping[str, Any] | None = None
        self._sounds: Path | None = None
        self._failed = False

    @property
    def voice(self) -> str:
        """The engine's voice: the configured one, else the language's."""
        if self.config.voice:
            return self.config.voice
        return ESPEAK_VOICES.get(self.lang.code, self.lang.code)

    async def start(self, service: RefereeService | None = None) -> None:
        """Make the sounds' files and start the speaking thread."""
        if self.config.say in ("sounds", "both"):
            self._sounds = Path(tempfile.mkdtemp(prefix="referee-sounds-"))
            for kind in SOUNDS:
                (self._sounds / f"{kind}.wav").write_bytes(sound_wav(kind))
        self._thread = threading.Thread(target=self._run, name="speaker", daemon=True)
        self._thread.start()

    def update(self, verdicts: list[Verdict], state: dict[str, Any]) -> None:
        """As an output of the service: keep the change (replacing one not said yet) and wake
        the speaking thread. Returns at once."""
        if not verdicts:
            return
        with self._lock:
            if self._slot is not None:
                self.dropped += 1
            self._slot = (verdicts, state.get("seats") or [])
        self._wake.set()

    async def stop(self) -> None:
        """Stop speaking (a sentence being said is cut) and end the thread."""
        self._stopping = True
        self._wake.set()
        process = self._process
        if process is not None:
            with contextlib.suppress(OSError):
                process.kill()
        if self._thread is not None:
            await asyncio.to_thread(self._thread.join, 5)
        if self._sounds is not None:
            shutil.rmtree(self._sounds, ignore_errors=True)

    # -- the thread ----------------------------------------------------------------------------
    def _run(self) -> None:
        background()  # and the programs it starts: below the judging loop
        while True:
            self._wake.wait()
            self._wake.clear()
            if self._stopping:
                return
            with self._lock:
                taken, self._slot = self._slot, None
            if taken is None:
                continue
            verdicts, names = taken
            change = [v.to_json() for v in verdicts]
            said = announcement(change, names, self.lang, pile=self._pile)
            pile = next((v for v in change if v.get("verdict") == "pile_won"), None)
            if pile is not None:
                self._pile = pile
            try:
                if said.sound is not None and self.config.say in ("sounds", "both"):
                    self._play(said.sound)
                if said.text is not None and self.config.say in ("words", "both"):
                    self._speak(said.text)
            except OSError as exc:  # no engine, no sound card: said once in the log
                if not self._failed:
                    log.warning("speech: %s cannot be run (%s): the verdicts are not said",
                                self.config.engine, exc.strerror or exc)
                self._failed = True

    def _note(self, what: str) -> None:
        self.said.append(what)
        del self.said[:-50]

    def _wait(self, process: subprocess.Popen[bytes]) -> None:
        below(process)
        self._process = process
        try:
            process.wait()
        finally:
            self._process = None

    def _speak(self, text: str) -> None:
        self._note(text)
        if self.config.engine == "piper":
            self._piper(text)
            return
        engine = shutil.which(self.config.engine) or self.config.engine
        self._wait(subprocess.Popen([engine, "-v", self.voice, *self.extra, text],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL))

    def _piper(self, text: str) -> None:
        """piper reads the text on its standard input and writes raw audio for the player."""
        model = self.config.voice
        if not model:
            raise OSError(f"piper needs a voice model ([speech] voice) for {self.lang.code}")
        piper = subprocess.Popen(["piper", "--model", model, "--output_raw"],
                                 stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                 stderr=subprocess.DEVNULL)
        below(piper)
        player = subprocess.Popen([self.config.player, "-q", "-r", "22050", "-f", "S16_LE",
                                   "-t", "raw", "-"], stdin=piper.stdout,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert piper.stdin is not None and piper.stdout is not None
        piper.stdout.close()  # the player holds it now
        with contextlib.suppress(BrokenPipeError):
            piper.stdin.write(text.encode() + b"\n")
            piper.stdin.close()
        self._wait(player)
        piper.wait()

    def _play(self, sound: str) -> None:
        self._note(f"[{sound}]")
        if self._sounds is None:
            return
        self._wait(subprocess.Popen([self.config.player, "-q", str(self._sounds / f"{sound}.wav")],
                                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                    stderr=subprocess.DEVNULL))


#: How much lower than the referee's the speech programs' scheduling priority is: on a busy
#: Pi a voice may wait, a verdict may not.
NICER = 10


def below(process: subprocess.Popen[bytes]) -> None:
    """Run ``process`` at :data:`NICER` steps below this one's priority (from its first
    milliseconds: a preexec_fn is not safe in a threaded program)."""
    with contextlib.suppress(OSError):  # it may have ended already
        mine = os.getpriority(os.PRIO_PROCESS, 0)
        os.setpriority(os.PRIO_PROCESS, process.pid, min(19, mine + NICER))


def speaker_for(config: Any) -> Speaker | None:
    """The speaker a table's configuration asks for (``speech``, a :class:`SpeechConfig`),
    in its language; None without one."""
    speech = getattr(config, "speech", None)
    if speech is None:
        return None
    return Speaker(speech, language(config.language))
