"""The shipped weights against their manifest, ``weights.json`` beside them: every weights file
(``*.onnx``, ``*.npz``) of the folder listed, every listed file there, and each one's size and
SHA-256 those the manifest gives. Standard library only."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

FOLDER = Path(__file__).parent
MANIFEST = FOLDER / "weights.json"
#: What a weights file's name ends in.
SUFFIXES = (".onnx", ".npz")


def sha256(path: Path) -> str:
    """The SHA-256 of a file, in hex."""
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def manifest(path: Path = MANIFEST) -> dict[str, dict[str, Any]]:
    """The manifest's entries by file name."""
    with open(path, encoding="utf-8") as fh:
        return {entry["file"]: entry for entry in json.load(fh)["files"]}


def file_problems(path: Path, entry: dict[str, Any]) -> list[str]:
    """How one weights file differs from its manifest entry (none: it is the file listed)."""
    if not path.is_file():
        return [f"{path.name}: listed but missing"]
    out = []
    size = path.stat().st_size
    if size != entry["bytes"]:
        out.append(f"{path.name}: {size} bytes, the manifest says {entry['bytes']}")
    got = sha256(path)
    if got != entry["sha256"]:
        out.append(f"{path.name}: sha256 {got}, the manifest says {entry['sha256']}")
    return out


def problems(folder: Path = FOLDER, listed: Path = MANIFEST) -> list[str]:
    """Everything in which ``folder``'s weights and the manifest ``listed`` disagree."""
    entries = manifest(listed)
    found = sorted(p.name for p in folder.iterdir() if p.suffix in SUFFIXES)
    out = [f"{name}: not in the manifest" for name in found if name not in entries]
    for name, entry in sorted(entries.items()):
        out.extend(file_problems(folder / name, entry))
    return out
