"""How the recogniser's thresholds were chosen: from a dump of reads of decks the networks never
saw (``python3 bench/camera_decks.py --folds 1 --first-seed 40000 --dump reads.jsonl``: each
fold's decks read with that fold's networks, on scenes other than those the bench reports), the
share right and wrong at each threshold.

``python3 -m training.calibrate reads.jsonl``: for the out-of-the-box threshold
(:data:`~hardware.camera.reader.recognise.THRESHOLD`, on the card's chance), the enrolled deck's
margin alone (:data:`~hardware.camera.reader.recognise.MARGIN`: what the deck's features would
name alone, which they no longer do), and the enrolled decision as
:func:`~hardware.camera.reader.recognise.decide_enrolled` makes it (margins
:data:`~hardware.camera.reader.recognise.AGREE` and ``MARGIN``), the shares of reads right and
wrong at each candidate, over all decks and for the worst deck; the thresholds chosen are the
least that keep the wrong share under the issue's limits with room to spare. Where the dump
has the deck's whole-card pictures, the same for their margin and likeness
(:data:`~hardware.camera.reader.recognise.PICTURE_MARGIN`, ``PICTURE_NEAR``); where it has the
pips' suit chances, both ways for each least chance of the other suit of the colour that
leaves a number card or ace unclear (:data:`~hardware.camera.reader.recognise.PIPS`); where it
has the pips' count, for each least chance of the counted card at which an unclear read is
named by it (:data:`~hardware.camera.reader.recognise.COUNTED`, and ``COUNTED_LAST``, asked
where no look named a card: on a dump's reads, the same).
"""

from __future__ import annotations

import argparse
import functools
import itertools
import json
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

from hardware.camera.reader.classify import Look, glyph_ranks, rank_chances
from hardware.camera.reader.recognise import (
    AGREE,
    AGREE_CHANCE,
    INDEX,
    MARGIN,
    THRESHOLD,
    Margins,
    Read,
    check_pips,
    confirm_by_count,
    enrolled_verdict,
    has_pips,
)
from hardware.camera.reader.templates import Match
from referee.cards import parse_card

AGREES = (0.0, 0.005, 0.01, 0.02)
AGREE_CHANCES = (0.0, 0.3, 0.5, 0.7)
OUT_OF_BOX = (0.5, 0.6, 0.7, 0.8, 0.85, 0.9, 0.93, 0.95, 0.97, 0.98, 0.99)
MARGINS = (0.0, 0.01, 0.02, 0.03, 0.04, 0.05, 0.06, 0.08, 0.1, 0.12, 0.15)
PICTURE_MARGINS = (0.02, 0.03, 0.05, 0.08, 0.1)
PICTURE_NEARS = (0.5, 0.6, 0.7, 0.8, 0.9)
PIPS_CANDIDATES = (0.8, 0.9, 0.95, 0.99, 0.999)
COUNTED_CANDIDATES = (0.1, 0.2, 0.3, 0.5, 0.7, 0.9)


def load(path: Path) -> list[dict[str, Any]]:
    """The dump's rows (one a scene)."""
    rows = []
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            row = json.loads(line)
            rows.append(row)
    return rows


def shares(rows: list[dict[str, Any]], named: Callable[[dict[str, Any]], str | None]
           ) -> tuple[float, float, float]:
    """The shares of rows that ``named`` names right and wrong (None: unclear), and the worst
    deck's wrong share."""
    right = wrong = 0
    by_deck: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for r in rows:
        by_deck[r["deck"]][1] += 1
        got = named(r)
        if got is None:
            continue
        if got == r["top"]:
            right += 1
        else:
            wrong += 1
            by_deck[r["deck"]][0] += 1
    n = max(1, len(rows))
    return right / n, wrong / n, max(w / max(1, t) for w, t in by_deck.values())


def curve(rows: list[dict[str, Any]], key: str, guess: str, candidates: tuple[float, ...],
          extra: Any = None) -> list[tuple[float, float, float, float]]:
    """For each candidate: the shares right and wrong over all rows, and the worst deck's
    wrong share, a row naming its ``guess`` where its ``key`` reaches the candidate."""
    out = []
    for c in candidates:
        def named(r: dict[str, Any], c: float = c) -> str | None:
            ok = key in r and (extra is None or extra(r)) and r[key] >= c
            return str(r[guess]) if ok else None

        out.append((c, *shares(rows, named)))
    return out


def enrolled(r: dict[str, Any], agree: float, margin: float,
             agree_chance: float = AGREE_CHANCE, picture: tuple[float, float] | None = None
             ) -> str | None:
    """The card :func:`~hardware.camera.reader.recognise.enrolled_verdict` names for a dumped
    read with these margins (None: unclear); ``picture``: the whole-card picture's least
    margin and likeness (None: the deck's pictures not used)."""
    if "margin" not in r or r.get("reason") in ("not the top card", "no card"):
        return None
    nearest = parse_card(r["match"])
    m = Match(nearest, r["score"], r["margin"], nearest)  # the runner-up is not dumped
    p = (Match(parse_card(r["picture"]), r["picture_score"], r["picture_margin"], nearest)
         if "picture" in r else None)
    read = enrolled_verdict(r["deck_index"] >= INDEX, parse_card(r["deck_guess"]),
                            r["deck_chance"], m, lambda: p, THRESHOLD,
                            margins=Margins(agree, agree_chance, margin, picture))
    return None if read.card is None else str(read.card)


def picture_grid(rows: list[dict[str, Any]]
                 ) -> list[tuple[float, float, float, float, float]]:
    """With the shipped margins, for each picture margin and likeness: the shares right and
    wrong, and the worst deck's wrong share."""
    out = []
    for margin, near in itertools.product(PICTURE_MARGINS, PICTURE_NEARS):
        out.append((margin, near, *shares(rows, functools.partial(
            enrolled, agree=AGREE, margin=MARGIN, picture=(margin, near)))))
    return out


def enrolled_grid(rows: list[dict[str, Any]]
                  ) -> list[tuple[float, float, float, float, float, float]]:
    """For each agreeing margin and chance and each margin alone: the shares right and wrong,
    and the worst deck's wrong share."""
    out = []
    for agree, chance, margin in itertools.product(AGREES, AGREE_CHANCES, MARGINS):
        out.append((agree, chance, margin,
                    *shares(rows, functools.partial(enrolled, agree=agree, margin=margin,
                                                    agree_chance=chance))))
    return out


def pips_grid(rows: list[dict[str, Any]]
              ) -> list[tuple[float | None, float, float, float, float]]:
    """For each least chance of the twin suit by the pips (None: pips not looked at): the
    shares right and wrong out of the box and enrolled, as the reads named them before the
    pips were looked at."""
    def named(key: str, least: float | None) -> Callable[[dict[str, Any]], str | None]:
        def name(r: dict[str, Any]) -> str | None:
            card = r.get(key)
            if not isinstance(card, str):
                return None
            if least is None or "pips" not in r:
                return card
            c = parse_card(card)
            if has_pips(c) and check_pips(Read(c, 1.0), np.asarray(r["pips"]), least).card is None:
                return None
            return card
        return name

    out = []
    for least in (None, *PIPS_CANDIDATES):
        right, wrong, _ = shares(rows, named("named", least))
        e_right, e_wrong, _ = shares(rows, named("enrolled_named", least))
        out.append((least, right, wrong, e_right, e_wrong))
    return out


def counted_grid(rows: list[dict[str, Any]]) -> list[tuple[float | None, float, float, float]]:
    """For each least chance at which an unclear read is named by its pips' count (None:
    never; :func:`~hardware.camera.reader.recognise.confirm_by_count`): the shares right and
    wrong out of the box, and the worst deck's wrong share."""
    meaning = glyph_ranks()

    def named(least: float | None) -> Callable[[dict[str, Any]], str | None]:
        def name(r: dict[str, Any]) -> str | None:
            if r.get("reason") != "pips counted" and r.get("named") is not None:
                return str(r["named"])
            if (least is None or not r.get("indexed")
                    or any(k not in r for k in ("count", "pips", "glyphs", "suits"))):
                return None
            guess = Read(None, r["chance"], reason="unclear", guess=parse_card(r["guess"]))
            look = Look(np.asarray(r["glyphs"]), np.asarray(r["suits"]), np.zeros(0))
            pips = np.asarray(r["pips"])
            got = confirm_by_count(guess, rank_chances(look, meaning)[0], r["suit"],
                                   r["count"], lambda: pips, THRESHOLD, least).card
            return None if got is None else str(got)
        return name

    return [(least, *shares(rows, named(least))) for least in (None, *COUNTED_CANDIDATES)]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m training.calibrate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dump", type=Path)
    args = ap.parse_args(argv)
    rows = load(args.dump)
    print(f"{len(rows)} reads of {len({r['deck'] for r in rows})} decks")
    print("out of the box: threshold, right, wrong, worst deck's wrong")
    for c, right, wrong, worst in curve(rows, "chance", "guess", OUT_OF_BOX,
                                        lambda r: r.get("indexed") and r.get("on_top", 1) >= 0):
        print(f"  {c:5.2f}  {right:.4f}  {wrong:.4f}  {worst:.4f}")
    print("enrolled: margin, right, wrong, worst deck's wrong")
    for c, right, wrong, worst in curve(rows, "margin", "match", MARGINS):
        print(f"  {c:5.2f}  {right:.4f}  {wrong:.4f}  {worst:.4f}")
    print("enrolled, deck and classifier together: agree, agree chance, margin, right, wrong, "
          "worst deck's wrong")
    for agree, chance_, margin, right, wrong, worst in enrolled_grid(rows):
        print(f"  {agree:5.3f}  {chance_:4.2f}  {margin:5.2f}  {right:.4f}  {wrong:.4f}  "
              f"{worst:.4f}")
    if any("pips" in r for r in rows):
        print("a number card or ace unclear where its pips are this sure of the other suit of "
              "its colour: least chance, right and wrong out of the box, right and wrong enrolled")
        for least, right, wrong, e_right, e_wrong in pips_grid(rows):
            name = "none" if least is None else f"{least:5.3f}"
            print(f"  {name:>5}  {right:.4f}  {wrong:.4f}  {e_right:.4f}  {e_wrong:.4f}")
    if any("count" in r for r in rows):
        print("an unclear read named by its pips' count where the counted card is this likely: "
              "least chance, right, wrong, worst deck's wrong")
        for least, right, wrong, worst in counted_grid(rows):
            name = "none" if least is None else f"{least:4.2f}"
            print(f"  {name:>5}  {right:.4f}  {wrong:.4f}  {worst:.4f}")
    if any("picture" in r for r in rows):
        print(f"enrolled, and the deck's pictures where that is unclear (agree {AGREE}, margin "
              f"{MARGIN}): picture margin, likeness, right, wrong, worst deck's wrong")
        without = shares(rows, functools.partial(enrolled, agree=AGREE, margin=MARGIN))
        print("  none        " + "  ".join(f"{x:.4f}" for x in without))
        for margin, near, right, wrong, worst in picture_grid(rows):
            print(f"  {margin:4.2f}  {near:4.2f}  {right:.4f}  {wrong:.4f}  {worst:.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
