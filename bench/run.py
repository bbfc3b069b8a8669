"""Run every benchmark in this folder, one after the other; each prints one JSON line.

Usage: ``python3 bench/run.py [NAME …]`` (names without ``.py``; default: all).

A bench fails when it exits non-zero (it found a real failure: a wrong result, a stack that
would not start) or when it printed no JSON line whose ``"bench"`` is its own name; the runner
then says which and why on stderr and exits 1 once all have run. Every line a bench prints goes
to stdout as it is.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def named_lines(stem: str, output: str) -> list[dict[str, object]]:
    """The JSON objects in ``output`` (one per line) whose ``bench`` is ``stem``."""
    found = []
    for line in output.splitlines():
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(obj, dict) and obj.get("bench") == stem:
            found.append(obj)
    return found


def clone_env(root: Path) -> dict[str, str]:
    """The environment with this clone first on the import path: a bench measures the code
    beside it, not whichever copy happens to be installed."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(root), env.get("PYTHONPATH", "")]))
    return env


def main(argv: list[str], here: Path = HERE) -> int:
    """Run the named benchmarks (all by default); exit non-zero if any failed."""
    scripts = sorted(p for p in here.glob("*.py") if p.name not in ("run.py", "__init__.py"))
    if argv:
        scripts = [p for p in scripts if p.stem in argv]
    failed: list[str] = []
    for script in scripts:
        print(f"# {script.stem}", flush=True)
        proc = subprocess.run([sys.executable, str(script)], cwd=here.parent,
                              stdout=subprocess.PIPE, text=True, env=clone_env(here.parent))
        sys.stdout.write(proc.stdout)
        sys.stdout.flush()
        if proc.returncode != 0:
            failed.append(f"{script.stem}: exit status {proc.returncode}")
        elif not named_lines(script.stem, proc.stdout):
            failed.append(f'{script.stem}: printed no JSON line with "bench": "{script.stem}"')
    for why in failed:
        print(f"bench failed: {why}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
