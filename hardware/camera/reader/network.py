"""The reader's two small ONNX networks, run by onnxruntime when it is installed (the camera
extra installs it), else by OpenCV's ``dnn`` module.

Both give the same outputs (within 2e-5, ``tests/hardware/camera/test_network.py``);
onnxruntime is about twice as quick on these networks (``bench/camera.py``: the locator 3.3
against 7.0 ms a frame at 1280x960 on one core of the bench machine). Either runs on the
calling thread alone: the camera reads on a thread of its own, and the rest of the table
keeps the other cores.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal

import cv2
import numpy as np
import numpy.typing as npt

Array = npt.NDArray[Any]
Runtime = Literal["auto", "onnxruntime", "opencv"]

__all__ = ["Network", "load", "runtimes"]


def _onnxruntime() -> Any | None:
    try:
        return importlib.import_module("onnxruntime")
    except ImportError:
        return None


def runtimes() -> list[str]:
    """The runtimes this install can use, the one ``auto`` picks first."""
    return (["onnxruntime"] if _onnxruntime() is not None else []) + ["opencv"]


class Network:
    """One network: :meth:`run` gives the named outputs (all, in the file's order, when none
    are named) for one input batch (float32, NCHW)."""

    def __init__(self, path: Path, runtime: Runtime = "auto") -> None:
        self.path = path
        ort = _onnxruntime() if runtime in ("auto", "onnxruntime") else None
        if runtime == "onnxruntime" and ort is None:
            raise ImportError("onnxruntime is not installed (pip install '.[camera]')")
        self.runtime: str = "onnxruntime" if ort is not None else "opencv"
        if ort is not None:
            options = ort.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            options.log_severity_level = 3  # errors only: no notices on the table's log
            self._session = ort.InferenceSession(str(path), options,
                                                 providers=["CPUExecutionProvider"])
            self._input = self._session.get_inputs()[0].name
            self.outputs = [o.name for o in self._session.get_outputs()]
        else:
            self._net = cv2.dnn.readNetFromONNX(str(path))
            self.outputs = list(self._net.getUnconnectedOutLayersNames())

    def run(self, blob: Array, outputs: Sequence[str] | None = None) -> list[Array]:
        """The outputs ``outputs`` (default: all) for ``blob``."""
        names = list(outputs or self.outputs)
        blob = np.ascontiguousarray(blob, np.float32)
        if self.runtime == "onnxruntime":
            got = self._session.run(names, {self._input: blob})
        else:
            self._net.setInput(blob)
            got = self._net.forward(names)
        return [np.asarray(a, np.float32) for a in got]


@lru_cache(maxsize=16)
def load(path: Path, fresh: int = 0, runtime: Runtime = "auto") -> Network:
    """The network in ``path``, loaded once per ``fresh`` (a new number reads a file rewritten
    in place again) and runtime."""
    return Network(path, runtime)
