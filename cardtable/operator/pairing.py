"""Pairing phones with the table (docs/security.md): who may use the operator page.

- A **pairing code** of :data:`CODE_DIGITS` digits, with a **one-time token** for the QR code's
  address, is valid for :data:`CODE_TTL_S` seconds; both are replaced when a phone pairs with
  them, when they expire, and after :data:`CODE_MAX_WRONG` wrong codes in all (so the code
  cannot be found by trying: at most that many guesses of 10⁶ per code).
- Wrong codes are rate-limited per client address: after :data:`WRONG_PER_CLIENT` wrong codes
  in :data:`WRONG_WINDOW_S` seconds, every attempt from that address is refused until the
  window has passed (a right code too).
- A paired phone is a :class:`Device` with a random id and its own CSRF token; its session
  cookie is the id signed with the table's secret key (itsdangerous, with a time stamp) and is
  taken for :data:`SESSION_TTL_S` seconds after it was signed (each visit signs it again).
  Unpairing a device ends its session at once, whatever its cookie says.
- The secret key and the paired devices are kept in the journal folder
  (``operator-secret``, mode 0600, and ``operator-devices.json``): a restart keeps the phones
  paired.

Nothing here reads a clock of its own: ``now`` (seconds) is passed in, so the tests can move
time.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import os
import secrets
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from itsdangerous import BadSignature, SignatureExpired, TimestampSigner

from cardtable.errors import PairingRefused
from referee.describe import counted

log = logging.getLogger("cardtable.operator")

CODE_DIGITS = 6
CODE_TTL_S = 600.0
CODE_MAX_WRONG = 20
WRONG_PER_CLIENT = 5
WRONG_WINDOW_S = 60.0
SESSION_TTL_S = 30 * 24 * 3600
#: The longest name of a paired phone.
MAX_NAME = 40
#: The most phones paired at once (pairing one more is refused until one is unpaired).
MAX_DEVICES = 32
#: Client addresses whose wrong codes are remembered at once (the oldest is forgotten).
MAX_CLIENTS = 1024

SECRET_FILE = "operator-secret"
DEVICES_FILE = "operator-devices.json"


@dataclass
class Device:
    """A paired phone: ``id`` (in its signed cookie), ``name``, ``csrf`` (the token its every
    change must carry), when it was paired and last seen (wall-clock seconds)."""

    id: str
    name: str
    csrf: str
    paired: float
    seen: float

    def public(self) -> dict[str, Any]:
        """What the page lists of it (never its token)."""
        return {"id": self.id, "name": self.name, "paired": self.paired, "seen": self.seen}


@dataclass
class Code:
    """The pairing code of now and its one-time token."""

    code: str
    token: str
    until: float
    wrong: int = 0


def clean_name(name: Any, fallback: str) -> str:
    """A phone's name as given, made safe to show: text without control characters, at most
    :data:`MAX_NAME` characters; ``fallback`` when nothing is left."""
    if not isinstance(name, str):
        return fallback
    text = "".join(c for c in name if c.isprintable()).strip()[:MAX_NAME]
    return text or fallback


class Pairing:
    """The table's paired phones and its pairing code (see the module's docstring), kept in
    ``folder`` (None: in memory only)."""

    def __init__(self, folder: Path | None, now: float) -> None:
        self.folder = folder
        self.devices: dict[str, Device] = {}
        key = None
        if folder is not None:
            try:
                folder.mkdir(parents=True, exist_ok=True)
                key = self._load(folder, now)
            except OSError as exc:  # the journal folder is said to be unusable elsewhere
                log.warning("operator: cannot keep the paired phones in %s (%s): they are "
                            "kept until the referee stops", folder, exc.strerror or exc)
                self.folder = None
        self.signer = TimestampSigner(key or secrets.token_bytes(32), salt="operator-session")
        self.code = self._new_code(now)
        self._wrong: dict[str, deque[float]] = {}

    # -- the code ------------------------------------------------------------------------------
    @staticmethod
    def _new_code(now: float) -> Code:
        digits = "".join(secrets.choice("0123456789") for _ in range(CODE_DIGITS))
        return Code(digits, secrets.token_urlsafe(24), now + CODE_TTL_S)

    def current(self, now: float) -> Code:
        """The code of now (a new one once the old one expired)."""
        if now >= self.code.until:
            self.code = self._new_code(now)
            log.info("operator: a new pairing code: %s", self.code.code)
        return self.code

    def renew(self, now: float) -> Code:
        """Replace the code and token now."""
        self.code = self._new_code(now)
        return self.code

    def _refuse_wrong(self, client: str, now: float) -> None:
        """Count a wrong code of ``client``; replace the code after too many in all."""
        seen = self._wrong.setdefault(client, deque())
        seen.append(now)
        if len(self._wrong) > MAX_CLIENTS:
            self._wrong.pop(next(iter(self._wrong)))
        self.code.wrong += 1
        if self.code.wrong >= CODE_MAX_WRONG:
            log.warning("operator: %d wrong pairing codes: the code is replaced",
                        self.code.wrong)
            self.renew(now)

    def limited(self, client: str, now: float) -> float:
        """Seconds ``client`` must wait before it may try a code again (0: it may now)."""
        seen = self._wrong.get(client)
        if not seen:
            return 0.0
        while seen and seen[0] <= now - WRONG_WINDOW_S:
            seen.popleft()
        if len(seen) < WRONG_PER_CLIENT:
            return 0.0
        return seen[0] + WRONG_WINDOW_S - now

    def pair(self, *, code: str | None = None, token: str | None = None, name: Any = None,
             client: str, now: float) -> Device:
        """Pair a phone with the code (typed) or the token (the QR code's address); raises
        :class:`PairingRefused` with the reason in words."""
        wait = self.limited(client, now)
        if wait > 0:
            raise PairingRefused(f"too many wrong codes from this device: try again in "
                                 f"{max(1, round(wait))} s")
        current = self.current(now)
        if token is not None:
            right = isinstance(token, str) and hmac.compare_digest(
                token.encode(), current.token.encode())
            why = "this pairing link has been used or has expired: scan the new code"
        else:
            typed = "".join(c for c in str(code or "") if not c.isspace())
            right = hmac.compare_digest(typed.encode(), current.code.encode())
            why = "wrong code: type the code the table's display shows"
        if not right:
            self._refuse_wrong(client, now)
            raise PairingRefused(why)
        if len(self.devices) >= MAX_DEVICES:
            raise PairingRefused(f"{MAX_DEVICES} phones are paired already: unpair one first")
        device = Device(secrets.token_urlsafe(18),
                        clean_name(name, f"phone {len(self.devices) + 1}"),
                        secrets.token_urlsafe(24), now, now)
        self.devices[device.id] = device
        self.renew(now)  # one code, one phone
        self._save()
        log.warning("operator: %s paired (%s paired)", device.name,
                    counted(len(self.devices), "phone"))
        return device

    # -- sessions ------------------------------------------------------------------------------
    def cookie(self, device: Device) -> str:
        """The session cookie's value for ``device`` (signed now)."""
        return self.signer.sign(device.id).decode()

    def device(self, cookie: str | None, now: float) -> Device | None:
        """The paired device a session cookie belongs to, or None (no cookie, a forged or
        expired one, or a device unpaired since)."""
        if not cookie:
            return None
        try:
            device_id = self.signer.unsign(cookie, max_age=SESSION_TTL_S).decode()
        except (BadSignature, SignatureExpired, UnicodeDecodeError):
            return None
        device = self.devices.get(device_id)
        if device is not None:
            device.seen = now
        return device

    @staticmethod
    def csrf_ok(device: Device, token: str | None) -> bool:
        """Whether a change carries the device's own CSRF token."""
        return bool(token) and hmac.compare_digest(str(token).encode(), device.csrf.encode())

    def unpair(self, device_id: str) -> Device:
        """Unpair a phone (its session ends at once)."""
        device = self.devices.pop(device_id, None)
        if device is None:
            raise PairingRefused("no such phone is paired")
        self._save()
        log.warning("operator: %s unpaired", device.name)
        return device

    def rename(self, device: Device, name: Any) -> None:
        """Give a phone another name."""
        device.name = clean_name(name, device.name)
        self._save()

    # -- kept on disk --------------------------------------------------------------------------
    def _load(self, folder: Path, now: float) -> bytes:
        secret = folder / SECRET_FILE
        try:
            key = secret.read_bytes()
        except FileNotFoundError:
            key = b""
        if len(key) < 32:
            key = secrets.token_bytes(32)
            tmp = secret.with_suffix(".tmp")
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as fh:
                fh.write(key)
            os.replace(tmp, secret)
        try:
            raw = json.loads((folder / DEVICES_FILE).read_text(encoding="utf-8"))
            for item in raw if isinstance(raw, list) else []:
                device = Device(**{k: item[k] for k in ("id", "name", "csrf", "paired",
                                                        "seen")})
                self.devices[device.id] = device
        except FileNotFoundError:
            pass
        except (ValueError, TypeError, KeyError, OSError) as exc:
            log.warning("operator: %s cannot be read (%s): no phone is paired",
                        folder / DEVICES_FILE, exc)
        return key

    def _save(self) -> None:
        if self.folder is None:
            return
        path = self.folder / DEVICES_FILE
        tmp = path.with_suffix(".tmp")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                json.dump([asdict(d) for d in self.devices.values()], fh)
            os.replace(tmp, path)
        except OSError as exc:
            with contextlib.suppress(OSError):
                tmp.unlink()
            log.warning("operator: cannot keep the paired phones in %s (%s)", path,
                        exc.strerror or exc)
