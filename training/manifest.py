"""The weights manifest (``hardware/camera/reader/weights.json``) brought up to date for a file
training just wrote: its SHA-256 and size, the command, the day and commit, and the versions of
what made it. ``tests/hardware/camera/test_weights.py`` fails until the manifest says what
ships."""

from __future__ import annotations

import datetime
import json
import platform
import shutil
import subprocess
from pathlib import Path
from typing import Any

from hardware.camera.reader import weights

#: What the manifest says of remaking a file.
REPRODUCIBLE = ("every draw is seeded (the scenes, the samples, the training): the same command "
                "on the same libraries, fonts and card packages should write the same weights; "
                "not checked byte for byte (PyTorch's threads may sum in another order)")


def _version(cmd: list[str]) -> str:
    exe = shutil.which(cmd[0])
    if exe is None:
        return "not installed"
    done = subprocess.run([exe, *cmd[1:]], capture_output=True, text=True, check=False)
    return (done.stdout or done.stderr).strip().splitlines()[0] if done.returncode == 0 \
        else "unknown"


def versions() -> dict[str, str]:
    """The versions of what renders the training data and trains on it."""
    import cv2
    import numpy as np

    out = {"python": platform.python_version(), "opencv": cv2.__version__,
           "numpy": np.__version__}
    try:
        import onnx
        import torch

        out.update(torch=str(torch.__version__), onnx=str(onnx.__version__))
    except ImportError:  # pragma: no cover - training needs them
        pass
    out["rsvg-convert"] = _version(["rsvg-convert", "--version"]).removeprefix(
        "rsvg-convert version ")
    out["gnome-cards-data"] = _version(["dpkg-query", "-W", "-f=${Version}",
                                        "gnome-cards-data"])
    out["kdegames-card-data-kf5"] = _version(["dpkg-query", "-W", "-f=${Version}",
                                              "kdegames-card-data-kf5"])
    return out


def record(path: Path, command: str, note: str, manifest: Path = weights.MANIFEST) -> None:
    """Write ``path``'s entry into the manifest (when it is a shipped file, beside it)."""
    if path.parent.resolve() != manifest.parent.resolve():
        return  # a fold's network, in the cache: not shipped
    doc: dict[str, Any] = json.loads(manifest.read_text(encoding="utf-8"))
    commit = _version(["git", "-C", str(manifest.parent), "rev-parse", "--short", "HEAD"])
    entry = {"file": path.name, "sha256": weights.sha256(path), "bytes": path.stat().st_size,
             "command": command,
             "written": f"{datetime.date.today().isoformat()}, on commit {commit} (the code "
                        "that wrote it is that commit's, with the changes committed with the "
                        "file)",
             "versions": versions(), "reproducible": note}
    files = [e for e in doc["files"] if e["file"] != path.name] + [entry]
    doc["files"] = sorted(files, key=lambda e: str(e["file"]))
    manifest.write_text(json.dumps(doc, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
