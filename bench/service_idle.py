"""Resident memory and idle CPU of ``referee run`` on the full mock stack.

Starts a private Mosquitto on a free loopback port (anonymous, for the bench only), a virtual
board (``firmware_bridge emulate``, on a pseudo-terminal), and ``referee run --no-console`` on
``deploy/table.full-mock.toml`` with the emulator's pty, the broker's URL and a temporary
journal directory filled in (GPIO pads and seat LEDs on gpiozero mock pins,
``GPIOZERO_PIN_FACTORY=mock``). Once the referee's retained status on the broker is ``online``
and its retained state says the board is online (``alerts.board``: what every display reads,
not the wording of a log line), it waits a moment and then measures, from ``/proc``:

- ``rss_mb`` (VmRSS) and ``hwm_mb`` (VmHWM, the peak since start), in MiB;
- ``idle_cpu_pct``: utime + stime over ``--seconds`` (default 10), in % of one core;
- ``wakeups_per_s``: voluntary context switches per second (how often the idle process sleeps
  and is woken: timers, heartbeats), which does not depend on the machine's speed.

Baselines from the same run separate the interpreter's cost from the referee's: a bare
``python -c "import time; time.sleep(…)"``, one that only imports ``cardtable.cli``, and one that
imports everything ``referee run`` loads on this configuration (the service, the feed and
aiomqtt, gpiozero and the mock pins, the board link and pyserial). Every process it started is
stopped at the end; the referee with SIGINT, as systemd stops it (``clean_stop``: it exited 0
within 5 s).

    python3 bench/service_idle.py [--seconds 10] [--keep DIR]

Prints one JSON line. Exit status 1 when the stack could not be started.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import json
import os
import platform
import re
import select
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "deploy" / "table.full-mock.toml"
TARGETS = {"rss_mb": 60, "idle_cpu_pct": 2}
CLK_TCK = os.sysconf("SC_CLK_TCK")

#: What ``referee run`` imports for the full mock stack, for the "full stack imported" baseline.
FULL_STACK_IMPORTS = (
    "cardtable.cli", "cardtable.service", "cardtable.feed", "referee.describe",
    "hardware.config", "hardware.pins", "hardware.pads", "hardware.leds", "hardware.slaps",
    "hardware.mock", "firmware_bridge.edge", "firmware_bridge.link", "aiomqtt", "gpiozero",
    "serial", "serial_asyncio_fast",
)


class BenchError(Exception):
    """The stack could not be started; the message says which part and why."""


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _accepts(port: int) -> bool:
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=0.2):
            return True
    except OSError:
        return False


def _child_env() -> dict[str, str]:
    """The environment of the Python children (the installed packages, mock pins)."""
    env = dict(os.environ)
    env["GPIOZERO_PIN_FACTORY"] = "mock"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def _default_sigint() -> None:
    # A shell starting this bench in the background ignores SIGINT, and an ignored signal stays
    # ignored across exec: give the referee Python's usual SIGINT (KeyboardInterrupt) back.
    signal.signal(signal.SIGINT, signal.SIG_DFL)


class Stack:
    """The processes of one run; :meth:`close` stops every one that is still running."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.procs: list[subprocess.Popen[bytes]] = []

    def spawn(self, argv: list[str], *, log: str, stdout: int | None = subprocess.DEVNULL,
              env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
        """Start ``argv`` with its stderr in ``workdir/log``."""
        with open(self.workdir / log, "wb") as err:
            proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=stdout, stderr=err,
                                    env=env, cwd=self.workdir, preexec_fn=_default_sigint)
        self.procs.append(proc)
        return proc

    def close(self) -> None:
        """SIGTERM every process still running (SIGKILL after 5 s), newest first."""
        for proc in reversed(self.procs):
            if proc.poll() is None:
                proc.terminate()
        for proc in reversed(self.procs):
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(5)
            if proc.stdout is not None:
                proc.stdout.close()


def start_broker(stack: Stack) -> int:
    """A private Mosquitto on a free loopback port (anonymous clients allowed); its port."""
    binary = shutil.which("mosquitto") or (
        "/usr/sbin/mosquitto" if os.path.exists("/usr/sbin/mosquitto") else None)
    if binary is None:
        raise BenchError("mosquitto not found (apt-get install -y mosquitto)")
    port = _free_port()
    conf = stack.workdir / "mosquitto.conf"
    conf.write_text(
        # As root, Mosquitto would switch to the 'mosquitto' user, which cannot read the workdir.
        f"user {getpass.getuser()}\n"
        "allow_anonymous true\npersistence false\nset_tcp_nodelay true\n"
        f"log_dest file {stack.workdir / 'mosquitto.log'}\n"
        f"listener {port} 127.0.0.1\nprotocol mqtt\n"
    )
    proc = stack.spawn([binary, "-c", str(conf)], log="mosquitto.err")
    deadline = time.monotonic() + 10
    while not _accepts(port):
        if proc.poll() is not None or time.monotonic() > deadline:
            logs = (stack.workdir / "mosquitto.log", stack.workdir / "mosquitto.err")
            raise BenchError("mosquitto did not start: " + _tail(*logs))
        time.sleep(0.02)
    return port


def start_emulator(stack: Stack) -> str:
    """``firmware_bridge emulate`` on a pty; the pty's path (the first line it prints)."""
    proc = stack.spawn(
        [sys.executable, "-c", "import sys; from firmware_bridge.cli import main; "
         "sys.exit(main())", "emulate", "--seed", "1"],
        log="emulator.err", stdout=subprocess.PIPE, env=_child_env())
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 15)
    line = proc.stdout.readline().decode().strip() if ready else ""
    if not line.startswith("/"):
        raise BenchError(f"firmware_bridge emulate printed no pty path ({line!r}): "
                         + _tail(stack.workdir / "emulator.err"))
    return line


def write_config(workdir: Path, pty: str, broker_url: str) -> Path:
    """``deploy/table.full-mock.toml`` with the pty, the broker URL and a journal directory of
    this run (so the bench runs the shipped example, not a look-alike)."""
    text = EXAMPLE.read_text(encoding="utf-8")
    for key, value in (("port", pty), ("url", broker_url),
                       ("journal_dir", str(workdir / "journals"))):
        text, n = re.subn(rf'(?m)^{key} = ".*"$', f"{key} = {json.dumps(value)}", text)
        if n != 1:
            raise BenchError(f"{EXAMPLE}: expected one line '{key} = \"…\"', found {n}")
    path = workdir / "table.toml"
    path.write_text(text, encoding="utf-8")
    shutil.copy(EXAMPLE.with_name("synthetic-deck.json"), workdir)  # its `deck`, beside it
    from cardtable.config import load_config

    config = load_config(path)  # the same check `referee run` makes first
    if config.board_port != pty or config.broker is None or config.card_source != "board":
        raise BenchError(f"{path}: the example no longer describes the full mock stack")
    return path


def start_referee(stack: Stack, config: Path) -> subprocess.Popen[bytes]:
    """``referee run --config CONFIG --no-console``, exactly as the console script runs it."""
    return stack.spawn(
        [sys.executable, "-c", "import sys; from cardtable.cli import main; sys.exit(main())",
         "run", "--config", str(config), "--no-console"],
        log="referee.log", env=_child_env())


async def _wait_online(port: int, table_id: str, timeout: float) -> str | None:
    """Until the retained ``status`` is ``online`` and the retained ``state`` has
    ``alerts.board == "online"``; None then, else what was missing when ``timeout`` ran out."""
    import aiomqtt

    base = f"cardtable/{table_id}/"
    status: bytes | None = None
    board: object = None
    try:
        async with asyncio.timeout(timeout):
            async with aiomqtt.Client("127.0.0.1", port, identifier="bench-service-idle") as c:
                await c.subscribe(base + "status", qos=1)
                await c.subscribe(base + "state", qos=1)
                async for message in c.messages:
                    payload = message.payload
                    if not isinstance(payload, bytes):
                        continue
                    if message.topic.matches(base + "status"):
                        status = payload
                    else:
                        with contextlib.suppress(ValueError, AttributeError):
                            board = (json.loads(payload).get("alerts") or {}).get("board")
                    if status == b"online" and board == "online":
                        return None
    except TimeoutError:
        pass
    if status != b"online":
        return f"the referee's status never became 'online' (last: {status!r})"
    return f"the referee's state never said the board is online (alerts.board: {board!r})"


def wait_online(stack: Stack, referee: subprocess.Popen[bytes], port: int, table_id: str,
                timeout: float = 30.0) -> None:
    """Until the referee's retained status is ``online`` and its retained state says the board
    is online (the state's ``alerts.board``, set by the board edge's ``board_online``)."""
    missing = asyncio.run(_wait_online(port, table_id, timeout))
    if missing is not None:
        if referee.poll() is not None:
            missing += f" (the referee exited with status {referee.returncode})"
        raise BenchError(missing + ": " + _tail(stack.workdir / "referee.log"))


def _tail(*paths: Path, lines: int = 15) -> str:
    out = []
    for path in paths:
        if path.exists():
            out += path.read_text(errors="replace").splitlines()[-lines:]
    return "\n".join(out) or "(no output)"


# -- /proc -------------------------------------------------------------------------------------
def proc_status(pid: int) -> dict[str, int]:
    """The numeric fields of ``/proc/PID/status`` (memory in kB as the kernel gives them)."""
    out: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        words = value.split()
        if words and words[0].isdigit():
            out[key] = int(words[0])
    return out


def cpu_seconds(pid: int) -> float:
    """utime + stime of all the process's threads, in seconds."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat[stat.rindex(")") + 2:].split()  # after "pid (comm) "
    return (int(fields[11]) + int(fields[12])) / CLK_TCK  # fields 14 and 15 of proc(5)


def measure_idle(pid: int, seconds: float) -> dict[str, float]:
    """CPU in % of one core and voluntary wake-ups per second over ``seconds``."""
    s0, c0, t0 = proc_status(pid), cpu_seconds(pid), time.monotonic()
    time.sleep(seconds)
    s1, c1, t1 = proc_status(pid), cpu_seconds(pid), time.monotonic()
    elapsed = t1 - t0
    woke = s1["voluntary_ctxt_switches"] - s0["voluntary_ctxt_switches"]
    return {"cpu_pct": 100.0 * (c1 - c0) / elapsed, "wakeups_per_s": woke / elapsed,
            "elapsed": elapsed}


def _mb(kb: int) -> float:
    return round(kb / 1024, 1)


@contextlib.contextmanager
def _sleeper(stack: Stack, code: str, name: str) -> Iterator[subprocess.Popen[bytes]]:
    proc = stack.spawn([sys.executable, "-c", code + "\nprint('ready', flush=True)\n"
                        "import time\ntime.sleep(600)"],
                       log=f"{name}.err", stdout=subprocess.PIPE, env=_child_env())
    assert proc.stdout is not None
    ready, _, _ = select.select([proc.stdout], [], [], 30)
    if not ready or proc.stdout.readline().strip() != b"ready":
        raise BenchError(f"baseline {name} did not start: " + _tail(stack.workdir / f"{name}.err"))
    try:
        yield proc
    finally:
        proc.terminate()
        proc.wait(5)


def baselines(stack: Stack) -> dict[str, float]:
    """RSS in MiB of Python asleep: bare, with ``cardtable.cli`` imported, with the full stack's
    modules imported."""
    out = {}
    for name, code in (
        ("python_sleep_rss_mb", "pass"),
        ("import_referee_cli_rss_mb", "import cardtable.cli"),
        ("import_full_stack_rss_mb", "import " + ", ".join(FULL_STACK_IMPORTS)),
    ):
        with _sleeper(stack, code, name) as proc:
            out[name] = _mb(proc_status(proc.pid)["VmRSS"])
    return out


def stop_referee(proc: subprocess.Popen[bytes]) -> bool:
    """SIGINT (systemd's KillSignal); True when it exited 0 within 5 s."""
    proc.send_signal(signal.SIGINT)
    try:
        return proc.wait(5) == 0
    except subprocess.TimeoutExpired:
        return False


def run(seconds: float, workdir: Path) -> dict[str, object]:
    """Start the stack in ``workdir``, measure, stop it; the result line."""
    stack = Stack(workdir)
    try:
        port = start_broker(stack)
        pty = start_emulator(stack)
        emulator = stack.procs[-1]
        config = write_config(workdir, pty, f"mqtt://127.0.0.1:{port}")
        t0 = time.monotonic()
        referee = start_referee(stack, config)
        wait_online(stack, referee, port, "mock1")
        startup = time.monotonic() - t0
        time.sleep(2.0)  # past the link's start-up burst of clock-sync exchanges
        e0 = cpu_seconds(emulator.pid)
        idle = measure_idle(referee.pid, seconds)
        emulator_pct = 100.0 * (cpu_seconds(emulator.pid) - e0) / idle["elapsed"]
        status = proc_status(referee.pid)
        if referee.poll() is not None:
            raise BenchError("the referee exited while measured: "
                             + _tail(workdir / "referee.log"))
        base = baselines(stack)
        clean = stop_referee(referee)
    finally:
        stack.close()
    rss, hwm = _mb(status["VmRSS"]), _mb(status["VmHWM"])
    cpu = round(idle["cpu_pct"], 2)
    return {
        "bench": "service_idle",
        "rss_mb": rss,
        "hwm_mb": hwm,
        "idle_cpu_pct": cpu,
        "seconds": round(idle["elapsed"], 2),
        "wakeups_per_s": round(idle["wakeups_per_s"], 1),
        "threads": status["Threads"],
        "startup_s": round(startup, 2),
        "targets": TARGETS,
        "meets": {"rss_mb": rss < TARGETS["rss_mb"], "hwm_mb": hwm < TARGETS["rss_mb"],
                  "idle_cpu_pct": cpu < TARGETS["idle_cpu_pct"]},
        "baseline": base,
        "referee_over_full_imports_mb": round(rss - base["import_full_stack_rss_mb"], 1),
        "emulator_cpu_pct": round(emulator_pct, 2),
        "clean_stop": clean,
        "python": platform.python_version(),
        "machine": platform.machine(),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the bench and print its JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="how long idle CPU is measured (default 10)")
    parser.add_argument("--keep", metavar="DIR",
                        help="work in DIR and keep the logs, config and journal there")
    args = parser.parse_args(argv)
    try:
        if args.keep:
            workdir = Path(args.keep).resolve()
            workdir.mkdir(parents=True, exist_ok=True)
            result = run(args.seconds, workdir)
        else:
            with tempfile.TemporaryDirectory(prefix="service-idle-") as tmp:
                result = run(args.seconds, Path(tmp))
    except BenchError as exc:
        print(f"service_idle: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
