"""The MicroPython harness, ``firmware/harness/mpboard.py``, for the tests and the benches:
``firmware/`` is not a Python package, so :func:`load_mpboard` loads the file by its path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from typing import Any

#: The harness's file.
MPBOARD = Path(__file__).resolve().parents[2] / "firmware" / "harness" / "mpboard.py"


def load_mpboard() -> Any:
    """Load ``mpboard.py`` afresh as the module ``mpboard`` (also put in ``sys.modules``) and
    return it."""
    spec = importlib.util.spec_from_file_location("mpboard", MPBOARD)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["mpboard"] = module
    spec.loader.exec_module(module)
    return module
