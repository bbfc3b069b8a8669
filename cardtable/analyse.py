"""What ``referee analyse`` works out from many seeded games (:mod:`cardtable.commands.analyse`
plays them across processes and shows the figures).

:func:`play_game` plays one seeded game with the virtual players and keeps a
:class:`GameRecord` of it; everything else here is pure statistics over such records, with no
clock, no processes and no randomness, so the same records give the same figures whatever
order they came back in:

- :func:`wilson_interval`: a win rate's 95 % confidence interval (Wilson score);
- :func:`binomial_test`: the exact two-sided binomial test (the first player against a fair
  share of ``1/N``);
- :func:`two_proportion_test`: two win rates compared (pooled two-proportion z-test);
- :func:`welch_test`: two mean game lengths compared (Welch's t-test, Student's t with
  Welch–Satterthwaite degrees of freedom);
- :func:`summarise` and :func:`compare`: the figures of one option value, and of two side by
  side.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from cardtable.simulate import MAX_INPUTS, START_NS, Simulation
from referee.games import game as game_named
from referee.games.beggar_my_neighbour import play_notation

#: The confidence level of every interval, and the level at which a difference is called
#: significant (p below 1 - CONFIDENCE).
CONFIDENCE = 0.95
_NS_PER_MINUTE = 60 * 1_000_000_000
_COURTS = {11: "J", 12: "Q", 13: "K", 14: "A"}


@dataclass(frozen=True)
class GameRecord:
    """One analysed game: which option value (``variant``) and seed, who moved first and who
    won, and how long it lasted (cards laid, the game's ``tricks`` count, table time)."""

    variant: int
    seed: int
    first: int
    winners: tuple[int, ...]
    cards: int
    tricks: int
    ns: int
    inputs: int
    ended: bool
    never_ending: bool = False

    def to_json(self) -> list[Any]:
        """A compact JSON row (results.json keeps every game)."""
        return [self.variant, self.seed, self.first, list(self.winners), self.cards, self.tricks,
                self.ns, self.inputs, self.ended, self.never_ending]


def _notation(stack: Iterable[Any]) -> str:
    return "".join(_COURTS.get(card.rank, "-") for card in stack)


def play_game(game: str, players: int, seed: int, options: dict[str, Any],
              variant: int = 0) -> GameRecord:
    """Play one seeded game (the game ``referee simulate --seed`` plays) and record it.

    A two-seat Beggar My Neighbour deal without a time limit is first played by the record
    solver, which sees a loop: a deal that never ends is recorded as such without playing its
    endless game. Any other game still going after the simulator's limit of inputs
    (:data:`cardtable.simulate.MAX_INPUTS`) is recorded as not ended; in Beggar My
    Neighbour that too counts as never ending."""
    sim = Simulation(game, players, seed, options=options)
    header = sim.header
    beggar = game == "beggar-my-neighbour"
    if beggar and players == 2 and getattr(header.options, "time_limit_s", None) is None:
        stacks = header.deal.stacks  # type: ignore[union-attr]  # a seeded deal is known
        leader = (header.dealer + 1) % 2
        solved = play_notation(_notation(stacks[leader]), _notation(stacks[1 - leader]))
        if solved["status"] == "loop":
            return GameRecord(variant, seed, leader, (), solved["cards"], solved["tricks"], 0,
                              0, ended=False, never_ending=True)
    sim.run()
    state = sim.table.state()
    inputs = sim.table.inputs
    ended = bool(state.get("over"))
    return GameRecord(
        variant, seed, inputs[0].seat if inputs else 0, tuple(state.get("winners") or ()),
        int(state["cards_played"]), int(state["tricks"]), sim.t - START_NS, len(inputs),
        ended=ended, never_ending=beggar and not ended and len(inputs) >= MAX_INPUTS,
    )


# -- statistics ----------------------------------------------------------------------------------
def _z(confidence: float = CONFIDENCE) -> float:
    return statistics.NormalDist().inv_cdf(0.5 + confidence / 2)


def wilson_interval(successes: int, trials: int,
                    confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The Wilson score interval of a proportion: ``(low, high)``; ``(0, 1)`` for no trials."""
    if trials == 0:
        return 0.0, 1.0
    z = _z(confidence)
    p = successes / trials
    denominator = 1 + z * z / trials
    centre = (p + z * z / (2 * trials)) / denominator
    half = z / denominator * math.sqrt(p * (1 - p) / trials + z * z / (4 * trials * trials))
    return max(0.0, centre - half), min(1.0, centre + half)


def binomial_test(successes: int, trials: int, p: float) -> float:
    """The exact two-sided binomial test: the probability, with ``trials`` tries at ``p``, of a
    count no more likely than ``successes`` (1 for no trials)."""
    if trials == 0:
        return 1.0

    def log_pmf(k: int) -> float:
        if p in (0.0, 1.0):
            return 0.0 if k == (trials if p == 1.0 else 0) else -math.inf
        return (math.lgamma(trials + 1) - math.lgamma(k + 1) - math.lgamma(trials - k + 1)
                + k * math.log(p) + (trials - k) * math.log1p(-p))

    observed = log_pmf(successes)
    limit = observed + 1e-7  # counts as likely as the observed one, up to rounding
    total = math.fsum(math.exp(lp) for k in range(trials + 1) if (lp := log_pmf(k)) <= limit)
    return min(1.0, total)


def _normal_two_sided(z: float) -> float:
    return math.erfc(abs(z) / math.sqrt(2))


def two_proportion_test(k1: int, n1: int, k2: int, n2: int) -> tuple[float, float]:
    """Two proportions compared: ``(difference k2/n2 - k1/n1, two-sided p)`` of the pooled
    two-proportion z-test (p 1 when there is nothing to compare)."""
    if n1 == 0 or n2 == 0:
        return 0.0, 1.0
    p1, p2 = k1 / n1, k2 / n2
    pooled = (k1 + k2) / (n1 + n2)
    se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / n2))
    if se == 0:
        return p2 - p1, 1.0
    return p2 - p1, _normal_two_sided((p2 - p1) / se)


def _betainc(a: float, b: float, x: float) -> float:
    """The regularised incomplete beta function I_x(a, b) (continued fraction, Lentz)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    if x > (a + 1) / (a + b + 2):
        return 1.0 - _betainc(b, a, 1.0 - x)
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
                     + a * math.log(x) + b * math.log1p(-x)) / a
    tiny = 1e-300
    c, d = 1.0, 1.0 - (a + b) * x / (a + 1)
    d = 1.0 / (d if abs(d) > tiny else tiny)
    f = d
    for m in range(1, 500):
        for numerator in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                          -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1.0 + numerator * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + numerator / c
            c = c if abs(c) > tiny else tiny
            f *= c * d
        if abs(c * d - 1.0) < 1e-15:
            break
    return front * f


def student_t_two_sided(t: float, df: float) -> float:
    """The two-sided p of Student's t with ``df`` degrees of freedom."""
    if math.isinf(df):
        return _normal_two_sided(t)
    return _betainc(df / 2, 0.5, df / (df + t * t))


def welch_test(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Two means compared: ``(difference mean(ys) - mean(xs), two-sided p)`` of Welch's
    t-test (p 1 with fewer than two values on a side, or no spread at all)."""
    if len(xs) < 2 or len(ys) < 2:
        diff = (statistics.fmean(ys) - statistics.fmean(xs)) if xs and ys else 0.0
        return diff, 1.0
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    vx, vy = statistics.variance(xs, mx) / len(xs), statistics.variance(ys, my) / len(ys)
    if vx + vy == 0:
        return my - mx, 1.0 if my == mx else 0.0
    t = (my - mx) / math.sqrt(vx + vy)
    df = (vx + vy) ** 2 / (vx * vx / (len(xs) - 1) + vy * vy / (len(ys) - 1))
    return my - mx, student_t_two_sided(t, df)


def spread(values: Sequence[float]) -> dict[str, float | None]:
    """Mean, standard deviation, min, 10th percentile, median, 90th percentile and max."""
    if not values:
        return dict.fromkeys(("mean", "sd", "min", "p10", "median", "p90", "max"))
    ordered = sorted(values)
    deciles = (statistics.quantiles(ordered, n=10, method="inclusive") if len(ordered) > 1
               else [ordered[0]] * 9)
    return {
        "mean": statistics.fmean(ordered),
        "sd": statistics.stdev(ordered) if len(ordered) > 1 else 0.0,
        "min": ordered[0],
        "p10": deciles[0],
        "median": statistics.median(ordered),
        "p90": deciles[-1],
        "max": ordered[-1],
    }


def histogram(values: Sequence[float], bins: int = 20) -> dict[str, list[Any]]:
    """Equal-width bins over the values: ``edges`` (bins + 1) and ``counts``."""
    if not values:
        return {"edges": [], "counts": []}
    low, high = min(values), max(values)
    if high == low:
        return {"edges": [low, low + 1], "counts": [len(values)]}
    width = (high - low) / bins
    counts = [0] * bins
    for v in values:
        counts[min(int((v - low) / width), bins - 1)] += 1
    return {"edges": [low + i * width for i in range(bins + 1)], "counts": counts}


# -- figures -------------------------------------------------------------------------------------
def lengths(records: Iterable[GameRecord]) -> dict[str, list[float]]:
    """Cards laid, the game's ``tricks`` count and minutes of every game that ended."""
    ended = [r for r in records if r.ended]
    return {"cards": [r.cards for r in ended], "tricks": [r.tricks for r in ended],
            "minutes": [r.ns / _NS_PER_MINUTE for r in ended]}


def _rate(successes: int, trials: int) -> dict[str, float | int]:
    low, high = wilson_interval(successes, trials)
    return {"wins": successes, "games": trials, "rate": successes / trials if trials else 0.0,
            "low": low, "high": high}


def summarise(records: Sequence[GameRecord], n_seats: int) -> dict[str, Any]:
    """The figures of one option value: games, each seat's win rate with its Wilson interval
    (over every game played: a game that did not end has no winner; a shared win counts for
    each winner), the first player's win rate against a fair share of 1/N (exact binomial
    test), and the game lengths of the games that ended."""
    ordered = sorted(records, key=lambda r: r.seed)
    games = len(ordered)
    wins = [0] * n_seats
    for r in ordered:
        for w in r.winners:
            wins[w] += 1
    first_wins = sum(1 for r in ordered if r.first in r.winners)
    fair = 1 / n_seats
    first: dict[str, Any] = dict(_rate(first_wins, games))
    firsts = sorted({r.first for r in ordered})
    first.update({"seats": firsts, "fair": fair, "advantage": first["rate"] - fair,
                  "p": binomial_test(first_wins, games, fair)})
    first["significant"] = first["p"] < 1 - CONFIDENCE
    length = lengths(ordered)
    return {
        "games": games,
        "ended": sum(1 for r in ordered if r.ended),
        "never_ending": sum(1 for r in ordered if r.never_ending),
        "stopped": sum(1 for r in ordered if not r.ended and not r.never_ending),
        "seats": [_rate(w, games) for w in wins],
        "first_player": first,
        "length": {key: spread(values) for key, values in length.items()},
        "histogram": {key: histogram(values) for key, values in length.items()},
    }


def compare(base: Sequence[GameRecord], other: Sequence[GameRecord],
            n_seats: int) -> dict[str, Any]:
    """``other`` against ``base``: the difference in each seat's and the first player's win
    rate (two-proportion z-test) and in the mean cards, tricks and minutes (Welch's t-test),
    each with its two-sided p and whether it is significant at 5 % (each test on its own: with
    many figures compared, about one in twenty differs by chance)."""
    def proportion(k1: int, k2: int) -> dict[str, Any]:
        diff, p = two_proportion_test(k1, len(base), k2, len(other))
        return {"difference": diff, "p": p, "significant": p < 1 - CONFIDENCE,
                "test": "two-proportion z-test"}

    def won(records: Sequence[GameRecord], seat: int) -> int:
        return sum(1 for r in records if seat in r.winners)

    def first_won(records: Sequence[GameRecord]) -> int:
        return sum(1 for r in records if r.first in r.winners)

    out: dict[str, Any] = {
        "seats": [proportion(won(base, s), won(other, s)) for s in range(n_seats)],
        "first_player": proportion(first_won(base), first_won(other)),
        "length": {},
    }
    a, b = lengths(sorted(base, key=lambda r: r.seed)), lengths(sorted(other,
                                                                        key=lambda r: r.seed))
    for key in a:
        diff, p = welch_test(a[key], b[key])
        out["length"][key] = {"difference": diff, "p": p, "significant": p < 1 - CONFIDENCE,
                              "test": "Welch's t-test"}
    return out


def analysis(game: str, players: int, variants: Sequence[dict[str, Any]],
             records: Iterable[GameRecord]) -> dict[str, Any]:
    """Every figure of an analysis: per option value (``variants``, in order) its summary and,
    from the second on, its comparison with the first."""
    by_variant: list[list[GameRecord]] = [[] for _ in variants]
    for r in records:
        by_variant[r.variant].append(r)
    summaries = [summarise(rs, players) for rs in by_variant]
    return {
        "game": game,
        "title": game_named(game).title,
        "tally": game_named(game).tally,
        "players": players,
        "variants": [{"options": dict(v), **s} for v, s in zip(variants, summaries, strict=True)],
        "comparisons": [compare(by_variant[0], by_variant[i], players)
                        for i in range(1, len(variants))],
    }
