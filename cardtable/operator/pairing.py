"""Pairing phones with the table (docs/security.md): who may use the operator page.

- A **pairing code** of :data:`CODE_DIGITS` digits, with a **one-time token** for the QR code's
  address, is valid for :data:`CODE_TTL_S` seconds; both are replaced when a phone pairs with
  them, when they expire, and after :data:`CODE_MAX_WRONG` wrong codes in all (so the code
  cannot be found by trying: at most that many guesses of 10⁶ per code).
- Wrong codes are rate-limited per client address: after :data:`WRONG_PER_CLIENT` wrong codes
  in :data:`WRONG_WINDOW_S` seconds, every attempt from that address is refused until the
  window has passed (a right code too); and for the whole table: after
  :data:`TABLE_WRONG_PER_WINDOW` from every address together, every typed code is refused for
  a window, twice as long each time the budget is spent again (the QR code's token and this
  machine's own screen excepted).
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

import hmac
import json
import logging
import secrets
from collections import deque
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from itsdangerous import BadSignature, SignatureExpired, TimestampSigner

from cardtable.errors import PairingRefused
from cardtable.files import write_whole
from cardtable.i18n import Words
from cardtable.webserver import is_loopback
from referee.describe import N_, counted

log = logging.getLogger("cardtable.operator")

CODE_DIGITS = 6
CODE_TTL_S = 600.0
CODE_MAX_WRONG = 20
WRONG_PER_CLIENT = 5
WRONG_WINDOW_S = 60.0
SESSION_TTL_S = 30 * 24 * 3600
#: The longest name of a paired phone.
MAX_NAME = 40
#: Wrong codes the whole table takes in :data:`WRONG_WINDOW_S` seconds, from every address
#: together; past them every typed code (the right one too) is refused for a while that
#: doubles each time the budget is spent again (up to :data:`TABLE_BACKOFF_MAX_S`), and
#: starts again at a window once the table has been left alone for :data:`TABLE_QUIET_S`.
TABLE_WRONG_PER_WINDOW = 20
TABLE_BACKOFF_MAX_S = 16 * 60.0
TABLE_QUIET_S = 600.0
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
    #: Whether the code is in the log already.
    logged: bool = False


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
        self._key = key or secrets.token_bytes(32)
        self.signer = TimestampSigner(self._key, salt="operator-session")
        self.code = self._new_code(now)
        self._wrong: dict[str, deque[float]] = {}
        #: The table's wrong codes of the window, how often its budget was spent in a row,
        #: and until when typed codes are refused.
        self._table_wrong: deque[float] = deque()
        self._strikes = 0
        self._table_locked_until = 0.0

    # -- the code ------------------------------------------------------------------------------
    @staticmethod
    def _new_code(now: float) -> Code:
        digits = "".join(secrets.choice("0123456789") for _ in range(CODE_DIGITS))
        return Code(digits, secrets.token_urlsafe(24), now + CODE_TTL_S)

    def current(self, now: float) -> Code:
        """The code of now (a new one once the old one expired)."""
        if now >= self.code.until:
            self.code = self._new_code(now)
            self.log_code(now, "the one before expired", logging.INFO)
        return self.code

    def log_code(self, now: float, why: str, level: int = logging.WARNING) -> bool:
        """Write the code of now to the log, saying ``why``, unless it was written already (a
        code is logged once however often it is asked for). Whether it was written now."""
        code = self.current(now)
        if code.logged:
            return False
        code.logged = True
        log.log(level, "operator: pairing code %s (%s)", code.code, why)
        return True

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
        self._table_wrong.append(now)
        while self._table_wrong and self._table_wrong[0] <= now - WRONG_WINDOW_S:
            self._table_wrong.popleft()
        if len(self._table_wrong) >= TABLE_WRONG_PER_WINDOW:
            if now >= self._table_locked_until + TABLE_QUIET_S:
                self._strikes = 0  # left alone long enough: the back-off starts again
            self._strikes += 1
            wait = min(TABLE_BACKOFF_MAX_S, WRONG_WINDOW_S * 2 ** (self._strikes - 1))
            self._table_locked_until = now + wait
            self._table_wrong.clear()
            log.warning("operator: %d wrong pairing codes in %g s from every address together: "
                        "typed codes are refused for %g s", TABLE_WRONG_PER_WINDOW,
                        WRONG_WINDOW_S, wait)
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
             client: str, now: float, unnamed: str = "phone {n}") -> Device:
        """Pair a phone with the code (typed) or the token (the QR code's address); raises
        :class:`PairingRefused` with the reason in words. ``unnamed``: the name of a phone
        that gives none, in the page's language (``{n}``: how many are paired with it)."""
        wait = self.limited(client, now)
        if wait > 0:
            raise PairingRefused(Words(N_("too many wrong codes from this device: try again "
                                          "in {seconds} s"), {"seconds": max(1, round(wait))}))
        table_wait = self._table_locked_until - now
        if token is None and table_wait > 0 and not is_loopback(client):
            # The token of the QR code cannot be guessed, and the table's own screen is this
            # machine: neither is held up by guessing from elsewhere.
            raise PairingRefused(Words(N_(
                "too many wrong codes at this table: try again in {seconds} s, or scan the QR "
                "code"), {"seconds": max(1, round(table_wait))}))
        current = self.current(now)
        if token is not None:
            right = isinstance(token, str) and hmac.compare_digest(
                token.encode(), current.token.encode())
            why = Words(N_("this pairing link has been used or has expired: scan the new code"))
        else:
            typed = "".join(c for c in str(code or "") if not c.isspace())
            right = hmac.compare_digest(typed.encode(), current.code.encode())
            why = Words(N_("wrong code: type the code the table's display shows"))
        if not right:
            self._refuse_wrong(client, now)
            raise PairingRefused(why)
        if len(self.devices) >= MAX_DEVICES:
            raise PairingRefused(Words(N_("{n} phones are paired already: unpair one first"),
                                       {"n": MAX_DEVICES}))
        device = Device(secrets.token_urlsafe(18),
                        clean_name(name, unnamed.format(n=len(self.devices) + 1)),
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
            raise PairingRefused(Words(N_("no such phone is paired")))
        self._save()
        log.warning("operator: %s unpaired", device.name)
        return device

    def rename(self, device: Device, name: Any) -> None:
        """Give a phone another name."""
        device.name = clean_name(name, device.name)
        self._save()

    # -- kept on disk --------------------------------------------------------------------------
    def keep_in(self, folder: Path) -> None:
        """Keep the secret key and the paired phones in ``folder`` from now on (the set-up
        wizard's phones follow the table to the journal folder its file names)."""
        if self.folder is not None and folder.resolve() == self.folder.resolve():
            return
        try:
            folder.mkdir(parents=True, exist_ok=True)
            _write_private(folder / SECRET_FILE, self._key)
        except OSError as exc:
            log.warning("operator: cannot keep the paired phones in %s (%s)", folder,
                        exc.strerror or exc)
            return
        self.folder = folder
        self._save()

    def _load(self, folder: Path, now: float) -> bytes:
        secret = folder / SECRET_FILE
        try:
            key = secret.read_bytes()
        except FileNotFoundError:
            key = b""
        if len(key) < 32:
            key = secrets.token_bytes(32)
            _write_private(secret, key)
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
        try:
            _write_private(path, json.dumps([asdict(d) for d in self.devices.values()])
                           .encode("utf-8"))
        except OSError as exc:
            log.warning("operator: cannot keep the paired phones in %s (%s)", path,
                        exc.strerror or exc)


def _write_private(path: Path, data: bytes) -> None:
    """Write ``path`` readable by this user only (0600), whole or not at all, and synced: a
    power cut just after pairing leaves the phone paired (:func:`~cardtable.files.write_whole`;
    the plain rename before could leave an empty file, every phone to pair again)."""
    write_whole(path, data, mode=0o600)  # even where a person had made it readable
