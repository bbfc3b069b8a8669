"""The operator's commands: one path for the console (typed, or over its socket) and the
operator page, so that both do the same thing, refuse the same things in the same words, and
are recorded the same way.

:func:`operate` carries out one command on a :class:`~cardtable.service.RefereeService` and
returns an :class:`Outcome` (what came of it, in words; a refusal's ``ok`` is False). Every
command that changes the table is recorded with who asked for it: as the ``by`` field of the
notice it sends to the displays (``paused``, ``resumed``, ``ended_by_operator``), and as a line
of the folder's operator log, ``<journal_dir>/operator-log.jsonl`` (wall time, table time,
who, the command and its arguments, whether it was done and what came of it). The game's
journal itself holds the game's inputs only (docs/journal.md); a correction replaces it and
keeps the journal before it beside it.

The words here are what a person reads on the console and the page, in the language of
whoever asked (``lang``: the page's, the table's at the console); the service's refusals are
:class:`~cardtable.errors.Refused` with words of any language. What a lower layer refuses in
its own words (a configuration key, a table option) stays in English.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from cardtable.errors import ConfigError, Refused
from cardtable.i18n import ENGLISH_LANGUAGE, Language, Words, said
from referee.describe import N_
from referee.errors import RefereeError

if TYPE_CHECKING:
    from cardtable.service import RefereeService

log = logging.getLogger("cardtable.operator")

#: The operator log's file name in the journal folder.
OPERATOR_LOG = "operator-log.jsonl"

#: The commands :func:`operate` knows (``state`` reads and changes nothing).
COMMANDS = ("pause", "resume", "end", "new", "deal", "correct")


@dataclass(frozen=True)
class Outcome:
    """What came of an operator's command: ``ok`` (False: refused, ``text`` says why),
    ``text`` in words; ``confirm``: refused only because it needs confirming (ending a game
    that is not over)."""

    ok: bool
    text: str
    confirm: bool = False

    def line(self) -> str:
        """The console's answer: a refusal starts with ``?``."""
        return self.text if self.ok else f"? {self.text}"

    def to_json(self) -> dict[str, Any]:
        """The answer of the operator page's API."""
        return {"ok": self.ok, "text": self.text, "confirm": self.confirm}


def _dealt(service: RefereeService, lang: Language) -> str:
    """The answer to ``new``/``end``: the new game, or why it waits."""
    if service.journal_fault is not None:
        return lang.gettext("the journal cannot be written ({fault}): the new game is dealt as "
                            "soon as it can be").format(fault=service.journal_fault)
    return lang.gettext("a new game is dealt")


def game_running(service: RefereeService) -> bool:
    """A game is being played: dealt, not over, and at least one input in."""
    table = service.table
    return table is not None and not table.engine.over and bool(table.inputs)


def operate(service: RefereeService, command: str, *, by: str,
            args: Mapping[str, Any] | None = None, confirmed: bool = True,
            lang: Language = ENGLISH_LANGUAGE) -> Outcome:
    """Carry out ``command`` (one of :data:`COMMANDS`) for ``by`` (who asked: ``console``,
    ``console socket``, or a paired phone's name) and record it.

    ``args``: ``correct`` takes ``card`` and ``line`` (None: the last card laid or drawn);
    ``new`` takes ``game``, ``seats``, ``dealer`` and ``options`` (all left out: the
    configured game again). ``confirmed`` False: ``new`` and ``end`` are refused with
    ``confirm`` set while a game is running (the page asks first; the console does not).
    The answer is in ``lang``."""
    args = dict(args or {})
    try:
        outcome = _carry_out(service, command, by, args, confirmed, lang)
    except (ValueError, RefereeError) as exc:  # the service's refusals, in words
        reason = exc.reason if isinstance(exc, ConfigError) else said(exc, lang)
        if isinstance(exc, ConfigError) and exc.key:
            reason = f"{_key_words(exc.key, lang)}: {reason}"
        outcome = Outcome(False, reason)
    if not (outcome.confirm or command not in COMMANDS):
        record(service, by, command, args, outcome)
    return outcome


#: The configuration keys a new game's form names, in words.
KEY_WORDS = {"table.seats": N_("seats"), "table.dealer": N_("dealer"), "table.game": N_("game")}


def _key_words(key: str, lang: Language) -> str:
    """A configuration key as the page names it: ``table.seats[2]`` → ``seat 3``."""
    if key.startswith("table.seats["):
        return lang.gettext("seat {number}").format(
            number=int(key[len("table.seats["):-1]) + 1)
    if key in KEY_WORDS:
        return lang.gettext(KEY_WORDS[key])
    return key.removeprefix("options.")


def _carry_out(service: RefereeService, command: str, by: str, args: dict[str, Any],
               confirmed: bool, lang: Language) -> Outcome:
    if command == "pause":
        if service.paused:  # said, and no second notice to the displays
            return Outcome(True, lang.gettext("already paused: inputs are ignored until "
                                              "'resume'"))
        service.pause(by)
        return Outcome(True, lang.gettext("paused: inputs are ignored until 'resume'"))
    if command == "resume":
        if not service.paused:
            return Outcome(True, lang.gettext("the game is not paused"))
        service.resume(by)
        return Outcome(True, lang.gettext("resumed"))
    if command == "end":
        if not confirmed and game_running(service):
            return Outcome(False, lang.gettext("the game is not over: end it?"), confirm=True)
        service.end_game(by)
        return Outcome(True, _dealt(service, lang))
    if command == "new":
        if any(k in args for k in ("game", "seats", "dealer", "options")):
            cfg = service.configured
            seats = args.get("seats", list(cfg.seats))
            if not isinstance(seats, list):
                raise Refused(Words(N_("seats: a list of names")))
            service.set_game(str(args.get("game", cfg.game)), seats,
                             _whole(args.get("dealer", 0), "dealer"),
                             _mapping(args.get("options", {}), "options"))
        if not confirmed and game_running(service):
            return Outcome(False, lang.gettext("a game is being played: end it and deal the "
                                               "new one?"), confirm=True)
        if game_running(service):
            service.end_game(by)
        else:
            service.start_game()
        return Outcome(True, _dealt(service, lang))
    if command == "deal":
        service.deal_round()
        return Outcome(True, lang.gettext("the next round is dealt"))
    if command == "correct":
        card = args.get("card")
        if not isinstance(card, str) or not card.strip():
            raise Refused(Words(N_("usage: correct CARD (the last card laid or drawn), or "
                                   "correct LINE CARD (LINE as numbered in the journal)")))
        line = args.get("line")
        if line is not None:
            line = _whole(line, "line")
        if service.table is None:
            raise Refused(Words(N_("no game has been dealt yet")))
        return Outcome(True, service.correct(line, card).say(lang))
    raise Refused(Words(N_("unknown command {command!r}"), {"command": command}))


def _whole(value: Any, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Refused(Words(N_("{what}: a whole number, got {value!r}"),
                            {"what": what, "value": value}))
    return value


def _mapping(value: Any, what: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise Refused(Words(N_("{what}: names and values"), {"what": what}))
    return value


def record(service: RefereeService, by: str, command: str, args: Mapping[str, Any],
           outcome: Outcome) -> None:
    """Append the command to the folder's operator log (never fails the command: a log that
    cannot be written is said in the log of the program)."""
    line = {"time": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "t": service.clock.now(), "by": by,
            "command": command, "args": dict(args), "ok": outcome.ok, "text": outcome.text}
    try:
        with open(service.journal_dir / OPERATOR_LOG, "a", encoding="utf-8") as fh:
            fh.write(json.dumps(line, ensure_ascii=False, default=str) + "\n")
    except OSError as exc:
        log.warning("operator log: cannot write %s (%s)", service.journal_dir / OPERATOR_LOG,
                    exc.strerror or exc)
    log.info("operator %s: %s → %s", by, command, outcome.line())


def read_log(service: RefereeService, last: int = 50) -> list[dict[str, Any]]:
    """The newest ``last`` lines of the operator log (lines that cannot be read are left
    out)."""
    try:
        with open(service.journal_dir / OPERATOR_LOG, "rb") as fh:
            fh.seek(0, 2)
            fh.seek(max(0, fh.tell() - 256 * 1024))  # the tail is enough, however long the log
            lines = fh.read().decode("utf-8", "replace").splitlines()[-last:]
    except OSError:
        return []
    out = []
    for text in lines:
        try:
            obj = json.loads(text)
        except ValueError:
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out
