"""``referee replay``: judge a table journal again and print its verdicts and final state, in
words or as the JSON lines of docs/journal.md; with ``--slaps`` its slap races (the dispute view,
:mod:`referee.races`), with ``--stats`` each seat's slap statistics at its end."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cardtable.commands.argtypes import add_language_option, path_name
from cardtable.errors import CommandError
from cardtable.i18n import ENGLISH_LANGUAGE, Language, language
from referee.describe import (
    N_,
    describe,
    format_time,
    join_names,
    seat_name,
    seat_names,
    tally_words,
)
from referee.games import games
from referee.journal import Journal, JournalError, read_before, read_journal
from referee.races import (
    Race,
    journal_races,
    margin_text,
    ms_text,
    seat_statistics,
)
from referee.table import replay


def _cmd_replay(args: argparse.Namespace) -> int:
    try:
        journal = read_journal(args.journal)
        error = None
    except JournalError as exc:
        before = read_before(exc)
        if before is None:
            raise CommandError(f"{args.journal}: {exc}") from None
        journal, error = before, exc
    except OSError as exc:
        raise CommandError(f"cannot read {args.journal}: {exc.strerror}") from None
    stopped = None if error is None else {"line": error.line, "reason": error.reason}
    if args.slaps or args.stats:
        _timing(args, journal, finish=error is None, lang=language(args.lang), stopped=stopped)
        if error is not None:
            print(f"referee: {args.journal}: {error}", file=sys.stderr)
            return 1
        return 0
    result = replay(journal, finish=error is None)
    seats = journal.header.seats
    lang = language(args.lang)
    for v in result.verdicts:
        if args.json:
            print(json.dumps(v.to_json(), ensure_ascii=False))
        else:
            print(f"{format_time(v.t)}  {describe(v.to_json(), seats, lang)}")
    if args.json:  # a damaged journal's state is only up to the line before: said in the line
        last: dict[str, object] = {"state": result.state}
        if stopped is not None:
            last["stopped"] = stopped
        print(json.dumps(last, ensure_ascii=False))
    else:
        print(_state_text(result.state, lang))
    if error is not None:
        print(f"referee: {args.journal}: {error}", file=sys.stderr)
        return 1
    return 0


def _timing(args: argparse.Namespace, journal: Journal, *, finish: bool,
            lang: Language = ENGLISH_LANGUAGE, stopped: dict[str, object] | None = None) -> None:
    """``--slaps`` and ``--stats``: the races, then the statistics (``finish``: the journal is
    whole, so pending graces run out at its end, as the plain replay does), in ``lang``.
    ``stopped``: where a damaged journal's reading stopped, said in the last JSON line."""
    seats = journal.header.seats
    title = games[journal.header.game].title
    if args.slaps:
        found = journal_races(journal, finish=finish)
        for number, race in enumerate(found, 1):
            if args.json:
                print(json.dumps(race.to_json(seats), ensure_ascii=False))
            else:
                print(race_text(race, seats, number, lang))
        if args.json and stopped is not None and not args.stats:  # the last line says it
            print(json.dumps({"stopped": stopped}, ensure_ascii=False))
        if not found and not args.json:
            print(lang.gettext("No slap races: {title} has no slaps.").format(title=title)
                  if journal.header.game != "banka-bever"
                  else lang.gettext("No slap races in this journal."))
    if args.stats:
        state = replay(journal, finish=finish).state
        rows = seat_statistics(state)
        if args.json:
            line: dict[str, object] = {"over": state.get("over"), "seats": rows}
            if stopped is not None:
                line["stopped"] = stopped
            print(json.dumps(line, ensure_ascii=False))
        elif not rows:
            print(lang.gettext("No slap statistics: {title} has no slaps.").format(title=title))
        else:
            print(stats_text(rows, over=bool(state.get("over")), lang=lang))


def race_text(race: Race, seats: tuple[str, ...] | list[str], number: int | None = None,
              lang: Language = ENGLISH_LANGUAGE) -> str:
    """One race as a readable timeline: the card that opened it, each slap relative to it (ms
    with µs precision) with its margin to the winner, the ruling and its reason (in
    ``lang``)."""
    names = seat_names({"seats": list(seats)}, lang)
    head = lang.gettext("Race {number}").format(number=number) if number else lang.gettext("Race")
    o = race.opening
    if o is None:
        head += lang.gettext(", before the first lay")
    else:
        card = o.card or lang.gettext("a card")
        who = seat_name(names, o.seat) if o.seat is not None else ""
        what = {"lay": lang.gettext("{who} laid {card}"),
                "burn": lang.gettext("{who} burned {card} under the pile")}.get(
            o.how, lang.gettext("{card} laid")).format(who=who, card=card)
        head += lang.gettext(" at {time}: {what}").format(time=format_time(o.t), what=what)
    lines = [head]
    width = max((len(seat_name(names, s.seat)) for s in race.slaps), default=4)
    for s in race.slaps:
        when = ms_text(s.offset_ns) if s.offset_ns is not None else format_time(s.t)
        what = {"won": lang.gettext("WON"), "lost": lang.gettext("lost"),
                "false": lang.gettext("false slap"),
                "refused": lang.gettext("refused ({why})").format(
                    why=str(s.code).replace("_", " "))}[s.kind]
        line = f"  {when:>13}  {seat_name(names, s.seat):<{width}}  {what}"
        if s.kind == "lost" and s.margin_ns is not None:
            line += f"  {lost_text(s.margin_ns, seat_name(names, race.winner), lang)}"
        if s.burned:
            line += lang.gettext(", burned {n}").format(n=s.burned)
        lines.append(line)
    lines.append("  " + lang.gettext("Ruling: {why}").format(why=race.explanation(names, lang)))
    if race.photo_finish and race.deciding_margin_ns is not None:
        by = margin_text(race.deciding_margin_ns, sign=False)
        lines.append("  " + lang.gettext("PHOTO FINISH: decided by {margin}").format(margin=by))
    return "\n".join(lines) + "\n"


def lost_text(margin_ns: int, winner: str, lang: Language = ENGLISH_LANGUAGE) -> str:
    """How a lost slap stands to the winner's: ``+500 µs after Cia``, or (the tie rule) ``3 µs
    before Cia, same instant``."""
    if margin_ns > 0:
        return lang.gettext("{margin} after {winner}").format(margin=margin_text(margin_ns),
                                                              winner=winner)
    if margin_ns == 0:
        return lang.gettext("at the same nanosecond as {winner} (tie rule)").format(
            winner=winner)
    return lang.gettext("{margin} before {winner}, same instant (tie rule)").format(
        margin=margin_text(-margin_ns, sign=False), winner=winner)


def stats_text(rows: list[dict[str, Any]], *, over: bool,
               lang: Language = ENGLISH_LANGUAGE) -> str:
    """The per-seat slap statistics as a table (in ``lang``)."""
    def ms(ns: Any) -> str:
        return "-" if ns is None else ms_text(ns, sign=False)

    head = (lang.gettext("Slap statistics at the end of the game") if over
            else lang.gettext("Slap statistics so far (the game is not over)"))
    cols = tuple(lang.gettext(c) for c in STATS_COLUMNS)
    table = [cols] + [(r["name"], *(str(r[k]) for k in ("slaps", "wins", "false_slaps",
                                                          "races_lost", "missed")),
                       ms(r["median_reaction_ns"]), ms(r["best_reaction_ns"])) for r in rows]
    widths = [max(len(row[i]) for row in table) for i in range(len(cols))]
    out = [head + ":"]
    for row in table:
        out.append("  " + "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                                    for i, (cell, w) in enumerate(zip(row, widths, strict=True))))
    return "\n".join(out)


#: ``--stats``' columns.
STATS_COLUMNS = (N_("seat"), N_("slaps"), N_("wins"), N_("false"), N_("lost"), N_("missed"),
                 N_("median reaction"), N_("best reaction"))


def _state_text(state: dict[str, Any], lang: Language) -> str:
    seats = seat_names(state, lang)
    counts = ", ".join(f"{s} {c}" for s, c in zip(seats, state["counts"], strict=False))
    turn = state.get("turn")
    tally = tally_words(games[str(state.get("game"))].tally, state["tricks"], lang)
    lines = [lang.gettext("Cards held: {counts}").format(counts=counts),
             lang.gettext("Cards played: {n}, {tally}").format(n=state["cards_played"],
                                                               tally=tally)]
    if state.get("winners"):
        lines.append(lang.gettext("Winner: {names}").format(
            names=join_names([seats[w] for w in state["winners"]], lang)))
    elif turn is not None:
        lines.append(lang.gettext("Turn: {name}").format(name=seats[turn]))
    return "\n".join(lines)


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``replay`` subcommand."""
    p = sub.add_parser(
        "replay", help="judge a table journal and print its verdicts",
        description="Judge a table journal (JSON Lines, see docs/journal.md) and print every "
        "verdict in judging order, then the final state. A malformed line stops the replay "
        "with its line number and reason (exit status 1); verdicts before it are printed.",
    )
    p.add_argument("journal", type=path_name, help="path of the journal file")
    p.add_argument("--json", action="store_true",
                   help="print the verdict lines and the final state line of docs/journal.md "
                   "(with --slaps: one JSON object per race; with --stats: one object)")
    p.add_argument("--slaps", action="store_true",
                   help="instead of the verdicts, print every slap race (Banka bäver): the "
                   "card that opened it, each slap in ms after it, the margins to the winner, "
                   "the ruling and its reason; PHOTO FINISH when decided by under 1 ms")
    p.add_argument("--stats", action="store_true",
                   help="instead of the verdicts, print each seat's slap statistics at the "
                   "end of the journal: slaps, wins, false slaps, races lost, missed chances, "
                   "median and best reaction time")
    add_language_option(p)
    p.set_defaults(func=_cmd_replay)
