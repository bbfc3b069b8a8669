"""``referee analyse``: many seeded games with the virtual players, played across processes,
and what they say: each seat's win rate, the first player's advantage, how long games last,
never-ending deals, and option values compared (the figures: :mod:`cardtable.analyse`).

Game ``i`` of option value ``j`` (0 without ``--compare``) is seeded ``S + j*K + i``: the same
``--seed`` and ``--games`` give the same games, so the same figures, whatever ``--jobs``.
"""

from __future__ import annotations

import argparse
import contextlib
import html
import io
import json
import multiprocessing
import multiprocessing.pool
import os
import signal
import time
from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from cardtable.analyse import CONFIDENCE, GameRecord, analysis, lengths, play_game
from cardtable.commands.argtypes import path_name, seed_number, whole_number
from cardtable.errors import CommandError, refused_write
from cardtable.extras import require
from cardtable.files import write_whole
from referee.games import GAME_NAMES, games
from referee.options import OptionError, parse_option_assignment

#: Games per task sent to a worker process: small enough for a live progress bar and an even
#: load, large enough that sending them costs nothing.
MAX_CHUNK = 10

Task = tuple[str, int, list[dict[str, Any]], list[tuple[int, int]]]


#: The most worker processes: more than any machine's cores gains nothing, and a typing slip
#: (--jobs 99999999999999999999) forked until the machine stood still.
MAX_JOBS = 256


def default_jobs() -> int:
    """All the cores this process may use."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def game_seeds(seed: int, games_per_variant: int, variants: int) -> list[tuple[int, int]]:
    """``(variant, seed)`` of every game, in order: variant ``j``'s game ``i`` has seed
    ``seed + j * games_per_variant + i``."""
    return [(j, seed + j * games_per_variant + i)
            for j in range(variants) for i in range(games_per_variant)]


def play_chunk(task: Task) -> list[GameRecord]:
    """Play one task's games (in a worker process, or in this one)."""
    game, players, variants, pairs = task
    return [play_game(game, players, seed, variants[v], v) for v, seed in pairs]


def _ignore_sigint() -> None:  # pragma: no cover - runs in the workers
    signal.signal(signal.SIGINT, signal.SIG_IGN)


def play_all(game: str, players: int, variants: list[dict[str, Any]],
             pairs: Sequence[tuple[int, int]], jobs: int,
             on_games: Callable[[int], None] = lambda n: None,
             on_start: Callable[[], contextlib.AbstractContextManager[Any]] | None = None,
             ) -> tuple[list[GameRecord], bool]:
    """Play every ``(variant, seed)`` in ``jobs`` processes (this one when ``jobs`` is 1),
    telling ``on_games`` how many games each finished batch held. Returns the records (in no
    particular order) and whether Ctrl-C stopped the run: what had finished is kept."""
    records: list[GameRecord] = []
    start = on_start or contextlib.nullcontext
    size = max(1, min(MAX_CHUNK, len(pairs) // (jobs * 16) if jobs > 1 else 1))
    tasks: list[Task] = [(game, players, variants, list(pairs[i:i + size]))
                         for i in range(0, len(pairs), size)]
    try:
        if jobs == 1:
            with start():
                for task in tasks:
                    done = play_chunk(task)
                    records += done
                    on_games(len(done))
        else:
            # The workers are forked before the progress bar starts its thread; Ctrl-C reaches
            # this process only (the workers ignore it), which stops them.
            context = multiprocessing.get_context(
                "fork" if "fork" in multiprocessing.get_all_start_methods() else None)
            with context.Pool(jobs, initializer=_ignore_sigint) as pool, start():
                # A few tasks ahead of the workers, not all of them: stopping the pool then
                # has little to throw away, and the main process waits in short steps, so
                # Ctrl-C is seen at once.
                waiting: deque[multiprocessing.pool.AsyncResult[list[GameRecord]]] = deque()
                queue = iter(tasks)
                while True:
                    while len(waiting) < 3 * jobs and (ahead := next(queue, None)) is not None:
                        waiting.append(pool.apply_async(play_chunk, (ahead,)))
                    if not waiting:
                        break
                    oldest = waiting.popleft()
                    while not oldest.ready():
                        oldest.wait(0.1)
                    done = oldest.get()
                    records += done
                    on_games(len(done))
    except KeyboardInterrupt:
        return records, True
    return records, False


def _compare_values(text: str, options_class: Any) -> tuple[str, list[Any]]:
    if "=" not in text:
        raise CommandError(f"--compare {text!r}: expected key=value1,value2 "
                           "(e.g. false_slap_penalty=none,burn)")
    key, raw = text.split("=", 1)
    key = key.strip()
    words = [w.strip() for w in raw.split(",")]
    if not all(words):
        raise CommandError(f"--compare {text!r}: a value is empty (two commas in a row, or one "
                           "at an end)")
    if len(words) < 2:
        raise CommandError(f"--compare {text!r}: give two values or more, separated by commas")
    values = []
    for word in words:
        try:
            values.append(parse_option_assignment(f"{key}={word}", options_class)[1])
        except OptionError as exc:
            raise CommandError(f"--compare: {exc}") from None
    twice = [w for k, w in enumerate(words) if values[k] in values[:k]]
    if twice:  # true,true had compared a value with itself
        raise CommandError(f"--compare {text!r}: {twice[0]!r} is given twice: give other "
                           "values")
    return key, values


def _variants(args: argparse.Namespace) -> tuple[list[dict[str, Any]], str | None]:
    spec = games[args.game]
    base: dict[str, Any] = {}
    try:
        for text in args.option or []:
            key, value = parse_option_assignment(text, spec.options)
            if key in base:  # the last had won without a word
                raise CommandError(f"-o {key!r} is given twice: give it once")
            base[key] = value
        spec.check_seats(args.players)
        spec.parse_options(base)
    except (OptionError, ValueError) as exc:
        raise CommandError(str(exc)) from None
    if args.compare and len(args.compare) > 1:  # the first had been dropped without a word
        raise CommandError("--compare is given twice: one option is compared at a time")
    if not args.compare:
        return [base], None
    key, values = _compare_values(args.compare[0], spec.options)
    if key in base:
        raise CommandError(f"--compare {key}: the option is also given with -o; give it once")
    variants = [{**base, key: v} for v in values]
    for v in variants:
        try:
            spec.parse_options(v)
        except (OptionError, ValueError) as exc:
            raise CommandError(f"--compare: {exc}") from None
    return variants, key


def _rate_column() -> Any:
    """The progress bar's games/s column."""
    from rich.progress import ProgressColumn
    from rich.text import Text

    class RateColumn(ProgressColumn):
        def render(self, task: Any) -> Text:
            speed = task.finished_speed or task.speed
            return Text("" if speed is None else f"{speed:,.0f} games/s",
                        style="progress.data.speed")

    return RateColumn()


#: The most games ``--games`` plays per option value: at about 100 games a second, hours of
#: work; the seeds are made up front and every game's record is kept for the report, so a
#: number with no bound would take the memory before the first game.
MOST_GAMES = 1_000_000


def _cmd_analyse(args: argparse.Namespace) -> int:
    if not 1 <= args.games <= MOST_GAMES:
        raise CommandError(f"--games must be 1 to {MOST_GAMES:,} (games per option value)")
    variants, key = _variants(args)
    jobs = args.jobs if args.jobs is not None else default_jobs()
    if jobs < 1:
        raise CommandError("--jobs must be 1 or more")
    if jobs > MAX_JOBS:
        raise CommandError(f"--jobs {jobs}: at most {MAX_JOBS} processes (this machine has "
                           f"{os.cpu_count() or 1} cores)")
    out = Path(args.out) if args.out else None
    if out is not None:
        require("analyse", "--out (the report's plots)")
        if out.exists() and not out.is_dir():
            raise CommandError(f"--out {out}: not a folder")
        try:  # before the games are played, not after: their figures must have a place
            out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise CommandError(f"--out {out}: cannot make the folder "
                               f"({exc.strerror or exc})") from None
    pairs = game_seeds(args.seed, args.games, len(variants))
    jobs = min(jobs, len(pairs))  # a process per game at the most
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    err = Console(stderr=True)
    progress = Progress(TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(),
                        _rate_column(), TimeElapsedColumn(), TextColumn("left"),
                        TimeRemainingColumn(), console=err, disable=not err.is_terminal)
    bar = progress.add_task(f"{games[args.game].title}, {args.players} seats", total=len(pairs))
    if not err.is_terminal:  # no progress bar: say what is going on, once
        err.print(f"playing {len(pairs)} games in {jobs} process{'es' if jobs > 1 else ''}")
    started = time.perf_counter()
    records, interrupted = play_all(args.game, args.players, variants, pairs, jobs,
                                    on_games=lambda n: progress.advance(bar, n),
                                    on_start=lambda: progress)
    seconds = time.perf_counter() - started
    results = analysis(args.game, args.players, variants, records)
    results.update({
        "games_asked": args.games, "seed": args.seed, "compare": key,
        "interrupted": interrupted,
        "run": {"jobs": jobs, "seconds": round(seconds, 3),
                "games_per_s": round(len(records) / seconds, 1) if seconds > 0 else None},
    })
    if interrupted:
        err.print(f"interrupted: {len(records)} of {len(pairs)} games played; the figures are "
                  "theirs")
    if args.json:
        print(json.dumps(results, ensure_ascii=False))
    else:
        Console().print(terminal_report(results))
    if out is not None:
        try:
            write_report(out, results, records)
        except OSError as exc:
            raise refused_write(f"cannot write the report in {out} ({exc.strerror or exc})",
                                exc) from None
        except KeyboardInterrupt:  # a second Ctrl-C: say so rather than leave it unsaid
            err.print(f"stopped while the report was written: {out} may lack some of its "
                      "files (each there is whole)")
            return 130
        print(f"report: {out / 'report.html'} (and results.json)")
    return 130 if interrupted else 0


# -- the terminal table ----------------------------------------------------------------------
def _pct(rate: dict[str, Any]) -> str:
    return f"{rate['rate']:.1%} ({rate['low']:.1%}–{rate['high']:.1%})"


def _variant_name(results: dict[str, Any], i: int) -> str:
    key = results["compare"]
    if key is None:
        return "games"
    value = results["variants"][i]["options"][key]
    return f"{key}={json.dumps(value) if not isinstance(value, str) else value}"


def _diff(c: dict[str, Any], percent: bool) -> str:
    d = f"{c['difference']:+.1%}" if percent else f"{c['difference']:+.2f}"
    return f"{d} (p {c['p']:.3f}{', significant' if c['significant'] else ''})"


def terminal_report(results: dict[str, Any]) -> Any:
    """The figures as a rich table: one column per option value and, with --compare, the
    difference of each other value from the first with its p."""
    from rich.table import Table

    variants = results["variants"]
    table = Table(title=f"{results['title']}, {results['players']} seats: "
                        f"{sum(v['games'] for v in variants)} games (seed {results['seed']})",
                  caption=f"win rates with {CONFIDENCE:.0%} Wilson intervals; differences: "
                          "two-proportion z-test (rates), Welch's t-test (lengths)")
    table.add_column("")
    for i in range(len(variants)):
        table.add_column(_variant_name(results, i), justify="right")
    comparisons = results["comparisons"]
    for i in range(1, len(variants)):
        table.add_column(f"difference {i}−0", justify="right")

    def row(label: str, cells: list[str], diffs: list[str]) -> None:
        table.add_row(label, *cells, *diffs)

    row("games", [str(v["games"]) for v in variants], [""] * len(comparisons))
    if any(v["never_ending"] for v in variants) or results["game"] == "beggar-my-neighbour":
        row("never-ending deals", [str(v["never_ending"]) for v in variants],
            [""] * len(comparisons))
    if any(v["stopped"] for v in variants):
        row("stopped unfinished", [str(v["stopped"]) for v in variants], [""] * len(comparisons))
    for seat in range(results["players"]):
        row(f"seat {seat} wins", [_pct(v["seats"][seat]) for v in variants],
            [_diff(c["seats"][seat], True) for c in comparisons])
    first = variants[0]["first_player"]
    row(f"first player (seat {','.join(map(str, first['seats']))}) wins",
        [_pct(v["first_player"]) for v in variants],
        [_diff(c["first_player"], True) for c in comparisons])
    row(f"  against a fair {first['fair']:.1%}",
        [f"{v['first_player']['advantage']:+.1%} (p {v['first_player']['p']:.3f})"
         for v in variants], [""] * len(comparisons))
    for measure, label in (("cards", "cards laid"), ("tricks", results["tally"]),
                           ("minutes", "minutes")):
        fmt = "{:.1f}" if measure == "minutes" else "{:.0f}"
        cells = []
        for v in variants:
            s = v["length"][measure]
            cells.append("—" if s["mean"] is None else
                         f"{fmt.format(s['mean'])} (median {fmt.format(s['median'])}, "
                         f"{fmt.format(s['p10'])}–{fmt.format(s['p90'])})")
        row(f"{label}: mean", cells, [_diff(c["length"][measure], False) for c in comparisons])
    return table


# -- report.html -----------------------------------------------------------------------------
def write_report(folder: Path, results: dict[str, Any], records: Sequence[GameRecord]) -> None:
    """Write results.json (the figures and every game), the plots as PNG files and
    report.html, which shows them."""
    folder.mkdir(parents=True, exist_ok=True)
    full = dict(results)
    full["records"] = {"columns": ["variant", "seed", "first", "winners", "cards", "tricks",
                                   "ns", "inputs", "ended", "never_ending"],
                       "rows": [r.to_json() for r in sorted(records,
                                                            key=lambda r: (r.variant, r.seed))]}
    # each file whole or not at all (a full disk had left results.json cut short)
    write_whole(folder / "results.json", json.dumps(full, ensure_ascii=False, indent=1) + "\n")
    images = plots(folder, results, records)
    write_whole(folder / "report.html", report_html(results, images))


def _save(fig: Any, path: Path) -> None:
    """A plot written whole (:func:`~cardtable.files.write_whole`)."""
    buf = io.BytesIO()
    fig.savefig(buf, dpi=100, format="png")
    write_whole(path, buf.getvalue())


def plots(folder: Path, results: dict[str, Any], records: Sequence[GameRecord]) -> list[
        tuple[str, str]]:
    """Draw the plots into ``folder``: ``(file name, what it shows)`` of each."""
    from matplotlib.figure import Figure

    variants = results["variants"]
    names = [_variant_name(results, i) for i in range(len(variants))]
    n = results["players"]
    out: list[tuple[str, str]] = []

    fig = Figure(figsize=(7, 3.8), layout="constrained")
    ax = fig.subplots()
    width = 0.8 / len(variants)
    for i, v in enumerate(variants):
        xs = [s + (i - (len(variants) - 1) / 2) * width for s in range(n)]
        rates = [r["rate"] for r in v["seats"]]
        errors = [[r["rate"] - r["low"] for r in v["seats"]],
                  [r["high"] - r["rate"] for r in v["seats"]]]
        ax.bar(xs, rates, width, yerr=errors, capsize=3, label=names[i])
    ax.axhline(1 / n, color="grey", linestyle="--", linewidth=1, label=f"fair share 1/{n}")
    ax.set_xticks(range(n), [f"seat {s}" for s in range(n)])
    ax.set_ylabel("win rate")
    ax.set_title(f"{results['title']}, {n} seats: win rate per seat, "
                 f"{CONFIDENCE:.0%} Wilson intervals")
    ax.legend(fontsize="small")
    _save(fig, folder / "winrates.png")
    out.append(("winrates.png", "each seat's win rate with its 95 % interval"))

    fig = Figure(figsize=(10, 3.4), layout="constrained")
    axes = fig.subplots(1, 3)
    by_variant: list[list[GameRecord]] = [[] for _ in variants]
    for r in records:
        by_variant[r.variant].append(r)
    for ax, (measure, label) in zip(axes, (("cards", "cards laid"),
                                           ("tricks", results["tally"]),
                                           ("minutes", "minutes at a human pace")), strict=True):
        for i, rs in enumerate(by_variant):
            values = lengths(sorted(rs, key=lambda r: r.seed))[measure]
            if values:
                ax.hist(values, bins=30, histtype="step", linewidth=1.5, label=names[i])
        ax.set_xlabel(label)
        ax.set_ylabel("games")
    axes[0].legend(fontsize="small")
    fig.suptitle("How long games last (games that ended)")
    _save(fig, folder / "lengths.png")
    out.append(("lengths.png", "histograms of the game lengths"))

    if len(variants) > 1:
        fig = Figure(figsize=(9, 3.4), layout="constrained")
        left, right = fig.subplots(1, 2)
        xs = list(range(len(variants)))
        firsts = [v["first_player"] for v in variants]
        left.errorbar(xs, [f["rate"] for f in firsts],
                      yerr=[[f["rate"] - f["low"] for f in firsts],
                            [f["high"] - f["rate"] for f in firsts]], fmt="o", capsize=4)
        left.axhline(1 / n, color="grey", linestyle="--", linewidth=1)
        left.set_xticks(xs, names)
        left.set_ylabel("first player's win rate")
        means, halves = [], []
        for i, v in enumerate(variants):
            s = v["length"]["cards"]
            count = sum(1 for r in by_variant[i] if r.ended)
            means.append(s["mean"] or 0.0)
            halves.append(1.96 * (s["sd"] or 0.0) / max(count, 1) ** 0.5)
        right.errorbar(xs, means, yerr=halves, fmt="o", capsize=4)
        right.set_xticks(xs, names)
        right.set_ylabel("mean cards laid (95 % interval)")
        fig.suptitle(f"Per option value: {results['compare']}")
        _save(fig, folder / "compare.png")
        out.append(("compare.png", "the first player's win rate and the mean length per "
                                   "option value"))
    return out


def report_html(results: dict[str, Any], images: list[tuple[str, str]]) -> str:
    """The report page: the figures as tables and the plots (image files beside it)."""
    esc = html.escape
    variants = results["variants"]
    names = [_variant_name(results, i) for i in range(len(variants))]
    head = "".join(f"<th>{esc(n)}</th>" for n in names)
    rows = []
    for seat in range(results["players"]):
        cells = "".join(f"<td>{esc(_pct(v['seats'][seat]))}</td>" for v in variants)
        rows.append(f"<tr><th>seat {seat} wins</th>{cells}</tr>")
    cells = "".join(f"<td>{esc(_pct(v['first_player']))}, "
                    f"{v['first_player']['advantage']:+.1%} against 1/{results['players']} "
                    f"(p {v['first_player']['p']:.3f})</td>" for v in variants)
    rows.append(f"<tr><th>first player wins</th>{cells}</tr>")
    for measure, label in (("cards", "cards laid"), ("tricks", results["tally"]),
                           ("minutes", "minutes")):
        cells = "".join(
            "<td>—</td>" if v["length"][measure]["mean"] is None else
            f"<td>{v['length'][measure]['mean']:.1f} (median "
            f"{v['length'][measure]['median']:.1f})</td>" for v in variants)
        rows.append(f"<tr><th>{esc(label)}: mean</th>{cells}</tr>")
    rows.append("<tr><th>never-ending deals</th>"
                + "".join(f"<td>{v['never_ending']}</td>" for v in variants) + "</tr>")
    comparisons = ""
    for i, c in enumerate(results["comparisons"], start=1):
        items = [f"<li>first player: {esc(_diff(c['first_player'], True))}</li>"]
        items += [f"<li>{esc(label)}: {esc(_diff(c['length'][m], False))}</li>"
                  for m, label in (("cards", "cards laid"), ("tricks", results["tally"]),
                                   ("minutes", "minutes"))]
        comparisons += (f"<h3>{esc(names[i])} against {esc(names[0])}</h3><ul>"
                        + "".join(items) + "</ul>")
    figures = "".join(f'<figure><img src="{esc(f)}" alt="{esc(a)}"><figcaption>{esc(a)}'
                      "</figcaption></figure>" for f, a in images)
    title = f"{results['title']}, {results['players']} seats"
    note = " (interrupted: the games played so far)" if results.get("interrupted") else ""
    return f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{esc(title)}: referee analyse</title>
<style>body{{font-family:sans-serif;max-width:1100px;margin:2em auto}}
table{{border-collapse:collapse}}td,th{{border:1px solid #ccc;padding:.3em .6em;text-align:right}}
img{{max-width:100%}}</style></head><body>
<h1>{esc(title)}</h1>
<p>{sum(v['games'] for v in variants)} seeded games{esc(note)}, first seed {results['seed']};
win rates with {CONFIDENCE:.0%} Wilson intervals; the first player against a fair share by the
exact binomial test; option values compared by the two-proportion z-test (rates) and Welch's
t-test (lengths), significant at p &lt; 0.05.</p>
<table><tr><th></th>{head}</tr>{''.join(rows)}</table>
{comparisons}
{figures}
</body></html>
"""


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the ``analyse`` subcommand."""
    p = sub.add_parser(
        "analyse", help="play many seeded games and report win rates and game lengths",
        description="Play K seeded games with the virtual players, across processes, and "
        "report each seat's win rate with a 95 % Wilson interval, the first player's "
        "advantage, how long games last (cards, tricks or rounds, minutes at the simulated "
        "human pace) and never-ending Beggar My Neighbour deals; with --compare, the same for "
        "each value of one option side by side, with the difference and whether it is "
        "significant. The same --seed and --games give the same figures for any --jobs. "
        "Ctrl-C stops and reports the games played so far (exit status 130).",
    )
    p.add_argument("--game", required=True, choices=GAME_NAMES, help="which game to play")
    p.add_argument("--players", type=whole_number, default=4, help="number of seats (default 4)")
    p.add_argument("--games", type=whole_number, default=1000, metavar="K",
                   help="games to play per option value, 1 to 1,000,000 (default 1000)")
    p.add_argument("--option", "-o", action="append", metavar="KEY=VALUE",
                   help="a table option for every game, e.g. -o collect_grace_ms=800 "
                   "(repeatable)")
    p.add_argument("--compare", metavar="KEY=V1,V2", action="append",
                   help="play K games for each value of one option and compare them, e.g. "
                   "--compare false_slap_penalty=none,burn")
    p.add_argument("--jobs", "-j", type=whole_number, metavar="J",
                   help="worker processes (default: every core, here "
                   f"{default_jobs()})")
    p.add_argument("--seed", type=seed_number, default=1,
                   help="the first game's seed (default 1); game i of option value j has seed "
                   "SEED + j*K + i")
    p.add_argument("--out", metavar="DIR", type=path_name,
                   help="also write DIR/results.json (the figures and every game) and "
                   "DIR/report.html with its plots (needs matplotlib: the analyse extra)")
    p.add_argument("--json", action="store_true",
                   help="print the figures as one JSON object instead of the table")
    p.set_defaults(func=_cmd_analyse)
