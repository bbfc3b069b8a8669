"""A real Mosquitto broker on free loopback ports with a generated test setup (the fixtures
in ``conftest.py`` start it).

The broker gets a TCP and a websockets listener, ``allow_anonymous false``, a password file made
with ``mosquitto_passwd -b`` (users ``referee`` and ``display``) and an ACL in which ``referee``
may read and write ``cardtable/#`` and ``display`` may only read it. Nothing is mocked.

Without the ``mosquitto`` binary the tests that need it are skipped, unless the environment
variable ``CI`` is set: then they fail, since CI must install Debian's ``mosquitto`` package.
"""

from __future__ import annotations

import getpass
import os
import secrets
import shutil
import signal
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest

ACL_TEXT = """\
# Test ACL: the referee writes every table, displays only read.
user referee
topic readwrite cardtable/#

user display
topic read cardtable/#
"""


def _binary(name: str, fallback: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    return fallback if os.path.exists(fallback) else None


def _need(name: str, fallback: str) -> str:
    path = _binary(name, fallback)
    if path is None:
        reason = f"{name} is not installed (Debian package 'mosquitto'; bash .ci/provision)"
        if os.environ.get("CI"):
            pytest.fail(f"{reason}; .ci/run must install it")
        pytest.skip(reason)
    return path


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _accepts(host: str, port: int) -> bool:
    try:
        with socket.create_connection((host, port), timeout=0.2):
            return True
    except OSError:
        return False


@dataclass
class Broker:
    """A private Mosquitto: its ports, credentials and process, which tests may stop and
    start again (same ports, same configuration, retained messages lost: no persistence)."""

    binary: str
    workdir: Path
    port: int
    ws_port: int
    passwords: dict[str, str]
    host: str = "127.0.0.1"
    proc: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    config: Path | None = None

    def url(self, user: str | None = "referee", *, ws: bool = False) -> str:
        """``mqtt://user:pass@host:port`` (or ``ws://…`` for the websockets listener)."""
        auth = f"{user}:{self.passwords[user]}@" if user else ""
        if ws:
            return f"ws://{auth}{self.host}:{self.ws_port}/mqtt"
        return f"mqtt://{auth}{self.host}:{self.port}"

    @property
    def log_text(self) -> str:
        """The broker's log so far."""
        path = self.workdir / "mosquitto.log"
        return path.read_text(errors="replace") if path.exists() else ""

    def start(self, timeout: float = 10.0) -> float:
        """Start the broker and wait until both listeners accept; returns the instant
        (``time.monotonic()``) at which it was ready."""
        assert self.proc is None or self.proc.poll() is not None, "broker already running"
        assert self.config is not None
        self.proc = subprocess.Popen(
            [self.binary, "-c", str(self.config)],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, start_new_session=True,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"mosquitto exited with {self.proc.returncode}:\n"
                                   f"{self.log_text}")
            if _accepts(self.host, self.port) and _accepts(self.host, self.ws_port):
                return time.monotonic()
            time.sleep(0.01)
        self.stop()
        raise RuntimeError(f"mosquitto did not listen within {timeout} s:\n{self.log_text}")

    def stop(self) -> None:
        """Stop the broker (SIGTERM, then SIGKILL if it lingers)."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(5.0)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5.0)

    def restart(self, down_for: float = 0.0) -> float:
        """Stop, stay down ``down_for`` seconds, start; returns the instant it was ready."""
        self.stop()
        time.sleep(down_for)
        return self.start()


def make_broker(workdir: Path, acl_text: str = ACL_TEXT, extra_config: str = "") -> Broker:
    """Write a test configuration into ``workdir`` and return the (not yet started) broker;
    ``extra_config`` is appended (e.g. a TLS listener)."""
    binary = _need("mosquitto", "/usr/sbin/mosquitto")
    passwd_tool = _need("mosquitto_passwd", "/usr/bin/mosquitto_passwd")
    workdir.mkdir(parents=True, exist_ok=True)
    passwords = {"referee": secrets.token_hex(8), "display": secrets.token_hex(8)}
    passwd = workdir / "passwd"
    passwd.write_text("")
    for user, pw in passwords.items():
        subprocess.run([passwd_tool, "-b", str(passwd), user, pw], check=True,
                       capture_output=True)
    passwd.chmod(0o600)
    acl = workdir / "acl"
    acl.write_text(acl_text)
    acl.chmod(0o600)
    port, ws_port = free_port(), free_port()
    while ws_port == port:
        ws_port = free_port()
    config = workdir / "mosquitto.conf"
    config.write_text(
        # As root, Mosquitto would switch to the 'mosquitto' user, which cannot read the
        # pytest temporary folder: keep the current user.
        f"user {getpass.getuser()}\n"
        "per_listener_settings false\n"
        "allow_anonymous false\n"
        f"password_file {passwd}\n"
        f"acl_file {acl}\n"
        "persistence false\n"
        "set_tcp_nodelay true\n"
        f"log_dest file {workdir / 'mosquitto.log'}\n"
        "log_type error\nlog_type warning\nlog_type notice\nlog_type information\n"
        f"listener {port} 127.0.0.1\n"
        "protocol mqtt\n"
        f"listener {ws_port} 127.0.0.1\n"
        "protocol websockets\n"
        + extra_config
    )
    return Broker(binary=binary, workdir=workdir, port=port, ws_port=ws_port,
                  passwords=passwords, config=config)
