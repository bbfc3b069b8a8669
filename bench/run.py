"""Run every benchmark in this folder, one after the other; each prints one JSON line.

Usage: ``python3 bench/run.py [NAME …]`` (names without ``.py``; default: all).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main(argv: list[str]) -> int:
    """Run the named benchmarks (all by default); exit non-zero if any failed."""
    scripts = sorted(p for p in HERE.glob("*.py") if p.name not in ("run.py", "__init__.py"))
    if argv:
        scripts = [p for p in scripts if p.stem in argv]
    failed = 0
    for script in scripts:
        print(f"# {script.stem}", flush=True)
        proc = subprocess.run([sys.executable, str(script)], cwd=HERE.parent)
        failed += proc.returncode != 0
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
