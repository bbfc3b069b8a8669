"""Golden verdicts: every journal under ``tests/data`` replays to the verdicts it gave when the
golden file was written.

``python3 -m tests.golden --write`` writes the simulation journals (``tests/data/golden/sim``)
and the golden file (``tests/data/golden/verdicts.json``: per journal, the number of lines and
the SHA-256 of ``referee replay JOURNAL --json``); ``python3 -m tests.golden`` checks every
journal against it and exits 1 naming each one that differs. ``tests/test_golden.py`` runs the
check in the suite. The golden file was written by the code before the re-layout (issue 9), so
the check proves the re-layout changed no verdict.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import sys
from pathlib import Path

from cardtable.cli import main as referee_main
from referee.model import without_timing

DATA = Path(__file__).resolve().parent / "data"
GOLDEN = DATA / "golden" / "verdicts.json"
SIM = DATA / "golden" / "sim"

#: Simulated games whose journals are kept: (game, players, seed, options).
SIMULATIONS: tuple[tuple[str, int, int, tuple[str, ...]], ...] = tuple(
    [("beggar-my-neighbour", n, s, ()) for n in (2, 3, 4) for s in (1, 2)]
    + [("banka-bever", n, s, ()) for n in (2, 4, 8) for s in (1, 2, 7)]
    + [("banka-bever", 4, 3, ("false_slap_penalty=burn", "slap_back_in=true"))]
    + [("banka-bever", 3, 5, ("bottom_match=false", "collect_grace_ms=300"))]
    + [("vandatta", n, s, ()) for n in (2, 3, 5, 7) for s in (1, 4)]
    + [("vandatta", 3, 4, ("points_game=true",))]
    + [("vandatta", 4, 2, ("lappen=true", "no_special_on_special=true"))]
    + [("vandatta", 4, 9, ("no_special_finish=true", "reshuffle_discards=false"))]
)


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = referee_main(argv)
    return code, out.getvalue()


def sim_name(game: str, n: int, seed: int, options: tuple[str, ...]) -> str:
    """The file name of one simulated game's journal."""
    opts = "".join(f"_{o.replace('=', '-')}" for o in options)
    return f"{game}_{n}p_seed{seed}{opts}.jsonl"


def journals() -> list[Path]:
    """Every journal under ``tests/data``, sorted (``*.expected.jsonl`` hold verdicts)."""
    return sorted(p for p in DATA.rglob("*.jsonl") if not p.name.endswith(".expected.jsonl"))


#: The keys an ``illegal`` verdict gained in issue 35: the id of its sentence and the
#: sentence's arguments, so that a display words it in any language.
REFUSAL_WORDING = ("why", "args")


def as_before_timing(text: str) -> str:
    """``referee replay --json`` output as it read before the slap timing fields (issue 11)
    and the refusals' ``why`` and ``args`` (issue 35): without
    :data:`referee.model.TIMING_FIELDS` in verdict lines, ``why`` and ``args`` in ``illegal``
    verdicts and ``timing`` in the state, so the golden file proves that no verdict changed
    (their ``reason`` included)."""
    lines = []
    for line in text.splitlines(keepends=True):
        obj = json.loads(line)
        if "state" in obj and isinstance(obj["state"], dict):
            obj["state"].pop("timing", None)
        else:
            obj = without_timing(obj)
            if obj.get("verdict") == "illegal":
                obj = {k: v for k, v in obj.items() if k not in REFUSAL_WORDING}
        lines.append(json.dumps(obj, ensure_ascii=False) + "\n")
    return "".join(lines)


def fingerprint(path: Path) -> dict[str, object]:
    """The exit status, line count and SHA-256 of ``referee replay PATH --json``."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code, text = _run(["replay", str(path), "--json"])
    text = as_before_timing(text) + err.getvalue().replace(str(path), path.name)
    return {
        "exit": code,
        "lines": text.count("\n"),
        "sha256": hashlib.sha256(text.encode()).hexdigest(),
    }


def write() -> None:
    """Write the simulation journals and the golden file from the code as it is now."""
    SIM.mkdir(parents=True, exist_ok=True)
    for game, n, seed, options in SIMULATIONS:
        path = SIM / sim_name(game, n, seed, options)
        path.unlink(missing_ok=True)
        argv = ["simulate", "--game", game, "--players", str(n), "--seed", str(seed),
                "--fast", "--journal", str(path)]
        for o in options:
            argv += ["-o", o]
        code, _ = _run(argv)
        if code != 0:
            raise SystemExit(f"simulate {argv} exited {code}")
    golden = {str(p.relative_to(DATA)): fingerprint(p) for p in journals()}
    GOLDEN.write_text(json.dumps(golden, indent=1, sort_keys=True) + "\n")
    print(f"wrote {len(golden)} fingerprints to {GOLDEN}")


def check() -> list[str]:
    """The journals whose replay differs from the golden file (or that it lacks)."""
    golden = json.loads(GOLDEN.read_text())
    bad = []
    seen = set()
    for p in journals():
        rel = str(p.relative_to(DATA))
        seen.add(rel)
        if golden.get(rel) != fingerprint(p):
            bad.append(rel)
    bad += [f"{rel} (missing)" for rel in golden if rel not in seen]
    return bad


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        write()
    else:
        differ = check()
        for rel in differ:
            print(f"differs: {rel}")
        print(f"{len(journals())} journals replayed, {len(differ)} differ")
        sys.exit(1 if differ else 0)
