"""The web site of ``referee run`` (and ``referee simulate --full-stack --operator``): the
table's own display at ``/`` (open, read-only), the operator page at ``/operator/`` with its
JSON API under ``/operator/api/``, the set-up wizard at ``/setup/`` (:mod:`.wizard`) and the
table check at ``/operator/api/check…`` (paired phones only; the guards are
:mod:`.guard`'s; docs/operator.md, docs/security.md).

:class:`OperatorSite` is an edge and an output of the service: it listens when the service
starts and stops with it, in the service's own asyncio loop. Every change the page asks for
goes through :func:`cardtable.operations.operate`, the console's path, as the paired phone's
name.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from aiohttp import web

from cardtable.display.web import add_display_routes, catalog, web_files
from cardtable.i18n import Language
from cardtable.operations import game_running, operate, read_log
from cardtable.operator.check import TableCheck
from cardtable.operator.guard import SHOW_CODE_S, GuardedSite, dumps, refusal
from cardtable.operator.local import LocalDisplay
from cardtable.operator.wizard import Wizard
from cardtable.webserver import StreamBudget
from referee.describe import N_
from referee.games import games
from referee.options import OptionSpec, option_specs, options_to_json

if TYPE_CHECKING:
    from cardtable.service import RefereeService

log = logging.getLogger("cardtable.operator")

#: Files of the display the operator page loads too (the race, the standings, the words).
SHARED = ("race.js", "race.css", "standings.js", "standings.css", "i18n.js")

#: Each option's name on the page, in words (the registry's names are the file's keys).
LABELS = {"time_limit_s": N_("time limit (seconds)"),
          "false_slap_penalty": N_("penalty for a false slap"),
          "collect_grace_ms": N_("time to slap a won challenge's pile (ms)"),
          "slap_back_in": N_("slap back into the game"),
          "bottom_match": N_("slap a bottom match"),
          "slap_resolution_us": N_("slaps at the same instant (µs)"),
          "reshuffle_discards": N_("reshuffle the discards into the stock"),
          "no_special_on_special": N_("no eight or ace on an eight or ace"),
          "no_special_finish": N_("no going out on an eight or ace"),
          "lappen": N_("call “lappen” before going out"),
          "points_game": N_("points game")}

#: A choice's value on the page, in words.
CHOICES = {"none": N_("none"), "burn": N_("burn a card")}

#: The allowed values of an option in words (the registry's ``allowed``, referee/options.py).
ALLOWED = {"true, false": N_("true, false"), "none, burn": N_("none, burn"),
           "a whole number of milliseconds from 0 to 60000": N_(
               "a whole number of milliseconds from 0 to 60000"),
           "a whole number of microseconds from 0 to 1000000": N_(
               "a whole number of microseconds from 0 to 1000000"),
           "a number of seconds from 0.000000001 (1 ns) to 86400, or none": N_(
               "a number of seconds from 0.000000001 (1 ns) to 86400, or none")}


class OperatorSite(GuardedSite):
    """The table's web site, an edge and an output of the service (see the module's
    docstring); the keywords are :class:`~cardtable.operator.guard.GuardedSite`'s, and
    ``config_path``: the configuration file the wizard rewrites."""

    #: It submits no input (cardtable.service.Source).
    own_stamps = False

    def __init__(self, service: RefereeService, *, host: str = "127.0.0.1", port: int = 0,
                 hosts: tuple[str, ...] = (), pairing_folder: Path | None = None,
                 clock: Callable[[], float] = time.time,
                 announce: Callable[[str], None] | None = None,
                 max_streams: int | None = None, config_path: Path | None = None) -> None:
        super().__init__(host=host, port=port, hosts=hosts, pairing_folder=pairing_folder,
                         clock=clock, announce=announce)
        self.service = service
        self.budget = StreamBudget(max_streams)
        self.display = LocalDisplay(service.config.table_id, self.budget,
                                    language=service.config.language)
        self.language = service.config.language
        shared = web_files()
        self.shared = {name: shared.files[name] for name in SHARED}
        add_display_routes(self.app, "/", lambda request: self.display.streams)
        self.check = TableCheck(self, service)
        self.wizard = Wizard(self, config_path, service=service)
        self._routes(self.app)
        self.server.on_stop.append(self.display.streams.close)
        if not self.pairing.devices:  # the first phone: the table's screen shows the code
            self.show_code(SHOW_CODE_S)

    # -- the edge and output -------------------------------------------------------------------
    async def start(self, service: RefereeService) -> None:
        """Listen, and say where (with the pairing code and address). An address that cannot
        be used is said in the log, and the table goes on without its pages (refereeing comes
        first)."""
        await self.display.start(service)
        await self.listen("operator page: {base}operator/ (the table's display: {base})")

    async def stop(self) -> None:
        """Stop listening; end the pages' streams and a deck being enrolled (its camera let
        go)."""
        self.wizard.enrolment.stop()
        await self.display.stop()
        await self.server.stop()
        await asyncio.to_thread(self.wizard.enrolment.join, 5.0)

    def update(self, verdicts: list[Any], state: dict[str, Any]) -> None:
        """As an output of the service: the display follows the table."""
        self.display.update(verdicts, state)

    def show_code(self, seconds: float) -> None:
        """Let the table's own screen show the pairing code for ``seconds`` (0: stop now):
        its display's scene says until when (never the code)."""
        super().show_code(seconds)
        self.display.extra["pairing"] = self.show_code_until or None
        self.display.publish()

    # -- routes --------------------------------------------------------------------------------
    def _routes(self, app: web.Application) -> None:
        r = app.router
        r.add_get("/operator", self.to_page)
        r.add_get("/operator/", self.operator_page)
        r.add_get("/operator/{name:[a-z0-9]+\\.(js|css)}", self.asset)
        r.add_get("/operator/catalog.json", catalog)
        r.add_get("/operator/api/table", self.table)
        r.add_get("/operator/api/games", self.games)
        r.add_get("/operator/api/history", self.history)
        r.add_post("/operator/api/command", self.command)

    async def to_page(self, request: web.Request) -> web.StreamResponse:
        raise web.HTTPMovedPermanently("/operator/")

    async def operator_page(self, request: web.Request) -> web.StreamResponse:
        return self.page("operator.html")

    async def asset(self, request: web.Request) -> web.StreamResponse:
        name = request.match_info["name"]
        if name in self.shared:
            body, kind = self.shared[name]
            return web.Response(body=body, headers={"Content-Type": kind})
        return self.page(name)

    async def table(self, request: web.Request) -> web.StreamResponse:
        self.paired(request)
        return web.json_response(self.table_json(self.lang(request)), dumps=dumps)

    def table_json(self, lang: Language | None = None) -> dict[str, Any]:
        """What the operator page shows of the table now (its scene in ``lang``, default the
        table's language)."""
        svc = self.service
        cfg, conf = svc.config, svc.configured
        state = svc.state()
        spec = games[cfg.game]
        return {
            "table": cfg.table_id, "game": cfg.game, "title": spec.title,
            "seats": list(state.get("seats") or cfg.seats), "card_source": cfg.card_source,
            "options": options_to_json(cfg.options),
            "configured": {"game": conf.game, "seats": list(conf.seats),
                           "dealer": conf.dealer, "options": options_to_json(conf.options)},
            "running": game_running(svc), "over": bool(state.get("over")),
            "paused": svc.paused, "can_deal": (spec.in_rounds
                                               and state.get("phase") == "round_over"),
            "other_game": svc.other_game, "journal_fault": svc.journal_fault,
            "last_card": self._last_card(), "scene": self.display.scene(lang),
            "pads": self.pads(),
        }

    def pads(self) -> int | None:
        """How many seats the table has pads for (None: no pads)."""
        wired = self.service.configured.raw.get("seats")
        return len(wired) if isinstance(wired, list) and wired else None

    def _last_card(self) -> dict[str, Any] | None:
        """The last card laid or drawn, as the card source read it: its journal line."""
        table = self.service.table
        if table is None:
            return None
        seats = list(table.header.seats)
        for k in range(len(table.inputs) - 1, -1, -1):
            inp = table.inputs[k]
            if inp.act in ("lay", "draw"):
                if inp.card is None:  # a virtual deck: the card the referee turned
                    return None
                return {"line": k + 2, "seat": inp.seat, "name": seats[inp.seat],
                        "act": inp.act, "card": str(inp.card),
                        "source": self.service.config.card_source}
        return None

    async def games(self, request: web.Request) -> web.StreamResponse:
        self.paired(request)
        lang = self.lang(request)

        def spec_json(spec: OptionSpec) -> dict[str, Any]:
            out = spec.to_json()
            out["help"] = lang.gettext(spec.help) if spec.help else ""
            if spec.allowed in ALLOWED:
                out["allowed"] = lang.gettext(ALLOWED[spec.allowed])
            if spec.name in LABELS:
                out["label"] = lang.gettext(LABELS[spec.name])
            out["choice_labels"] = {c: lang.gettext(CHOICES[c]) for c in out.get("choices") or ()
                                    if c in CHOICES}
            return out

        return web.json_response({"games": [
            {"name": g.name, "title": g.title, "min_seats": g.min_seats,
             "max_seats": g.max_seats, "options": [spec_json(s) for s in option_specs(g.options)]}
            for g in games.values()], "pads": self.pads()})

    async def history(self, request: web.Request) -> web.StreamResponse:
        self.paired(request)
        return web.json_response({"history": self.display.history,
                                  "log": read_log(self.service, 20)}, dumps=dumps)

    async def command(self, request: web.Request) -> web.StreamResponse:
        device = self.change(request)
        got = await self.body(request)
        lang = self.lang(request)
        name = got.get("command")
        if not isinstance(name, str):
            return refusal(400, lang.gettext("which command?"))
        args = got.get("args") or {}
        if not isinstance(args, dict):
            return refusal(400, lang.gettext("the command's arguments: names and values"))
        outcome = operate(self.service, name, by=device.name, args=args,
                          confirmed=got.get("confirmed") is True, lang=lang)
        await asyncio.sleep(0.05)  # let the service take it, so the answer's table is new
        return web.json_response(outcome.to_json())
