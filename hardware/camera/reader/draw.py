"""What the camera saw, drawn on the frame: the top card's outline as the recogniser found it
(green when it named the card, amber when the read was unclear) and the card it read, with the
confidence (``referee camera read --show``)."""

from __future__ import annotations

import cv2
import numpy as np

from hardware.camera.reader.recognise import Read
from hardware.camera.reader.warp import Array


def annotated(frame: Array, read: Read) -> Array:
    """A copy of ``frame`` (BGR) with the read drawn on it."""
    out = frame.copy()
    h, w = out.shape[:2]
    thick = max(2, round(w / 320))
    colour = (60, 200, 60) if read.card is not None else (0, 170, 255)
    if read.card is not None:
        text = f"{read.card.name()} ({read.card})  {read.confidence:.2f}"
    elif read.quad is not None:
        text = f"unclear ({read.reason})"
    else:
        text = "no card"
    if read.quad is not None:
        pts = np.round(read.quad.reshape(-1, 1, 2)).astype(np.int32)
        cv2.polylines(out, [pts], True, colour, thick, cv2.LINE_AA)
        # the corner the warp starts from: where the corner views are read
        cv2.circle(out, tuple(int(v) for v in pts[0, 0]), 2 * thick, colour, -1, cv2.LINE_AA)
    scale = w / 900
    (tw, th), base = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, thick)
    cv2.rectangle(out, (0, 0), (tw + 16, th + base + 16), (0, 0, 0), -1)
    cv2.putText(out, text, (8, th + 8), cv2.FONT_HERSHEY_SIMPLEX, scale, colour, thick,
                cv2.LINE_AA)
    return out
