"""The deployment files: the systemd unit, the example configurations and the install guide.

The unit is read with a small parser of systemd's syntax (repeated keys are kept, which
configparser cannot do), and, where ``systemd-analyze`` is installed, verified by systemd itself.
Its ``ExecStart`` must be a command line that ``referee`` accepts. Every example configuration
must load with both configuration readers, and the one in the install guide too.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cardtable import config as refconfig
from cardtable.cli import build_parser
from hardware import config as hwconfig

ROOT = Path(__file__).resolve().parents[2]
UNIT = ROOT / "deploy" / "systemd" / "card-referee.service"
INSTALL = ROOT / "docs" / "install.md"
EXAMPLES = sorted([*ROOT.glob("deploy/*.toml"), *ROOT.glob("hardware/*.toml")])


def parse_unit(text: str) -> dict[str, list[tuple[str, str]]]:
    """A unit file as ``{section: [(key, value), …]}`` in file order (repeated keys kept)."""
    sections: dict[str, list[tuple[str, str]]] = {}
    current: list[tuple[str, str]] | None = None
    pending = ""
    for number, raw in enumerate(text.splitlines(), 1):
        line = pending + raw.strip()
        pending = ""
        if not line or line[0] in "#;":
            continue
        if line.endswith("\\"):
            pending = line[:-1] + " "
            continue
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], [])
            continue
        key, sep, value = line.partition("=")
        assert sep and current is not None, f"line {number}: not 'Key=value' in a section"
        current.append((key.strip(), value.strip()))
    return sections


@pytest.fixture(scope="module")
def unit() -> dict[str, list[tuple[str, str]]]:
    """The parsed unit file."""
    return parse_unit(UNIT.read_text(encoding="utf-8"))


def values(unit: dict[str, list[tuple[str, str]]], section: str, key: str) -> list[str]:
    """Every value of ``key`` in ``section``."""
    return [v for k, v in unit.get(section, []) if k == key]


def one(unit: dict[str, list[tuple[str, str]]], section: str, key: str) -> str:
    """The value of a key that must appear exactly once."""
    found = values(unit, section, key)
    assert len(found) == 1, f"[{section}] {key}= appears {len(found)} times"
    return found[0]


def test_unit_has_its_sections(unit: dict[str, list[tuple[str, str]]]) -> None:
    assert set(unit) == {"Unit", "Service", "Install"}
    assert one(unit, "Install", "WantedBy") == "multi-user.target"


def test_unit_runs_as_referee_with_gpio_and_serial_groups(
        unit: dict[str, list[tuple[str, str]]]) -> None:
    assert one(unit, "Service", "User") == "referee"
    assert one(unit, "Service", "Group") == "referee"
    groups = " ".join(values(unit, "Service", "SupplementaryGroups")).split()
    assert {"gpio", "dialout"} <= set(groups)


def test_unit_directories_and_lgpio_workdir(unit: dict[str, list[tuple[str, str]]]) -> None:
    assert one(unit, "Service", "RuntimeDirectory") == "card-referee"
    assert one(unit, "Service", "StateDirectory") == "card-referee"
    assert one(unit, "Service", "WorkingDirectory") == "/var/lib/card-referee"
    env = [item for v in values(unit, "Service", "Environment") for item in shlex.split(v)]
    assert "LG_WD=/run/card-referee" in env


def test_unit_restarts_always_but_not_for_a_configuration_error(
        unit: dict[str, list[tuple[str, str]]]) -> None:
    assert one(unit, "Service", "Restart") == "always"
    assert one(unit, "Service", "RestartSec") == "1"
    # `referee` exits with 2 for a configuration or usage error (cardtable.cli.main).
    assert one(unit, "Service", "RestartPreventExitStatus") == "2"
    # SIGINT is the signal on which `referee run` shuts down cleanly (KeyboardInterrupt).
    assert one(unit, "Service", "KillSignal") == "SIGINT"
    # 75 (a temporary failure: a GPIO chip not ready, a full disk) restarts like any exit; the
    # unit says which failures are which (cardtable.errors.startup_failure).
    from cardtable.errors import TemporaryFailure

    assert TemporaryFailure.exit_status == 75
    text = UNIT.read_text(encoding="utf-8")
    assert "#  75  a temporary failure" in text and "#   2  a configuration" in text
    assert "75" not in one(unit, "Service", "RestartPreventExitStatus").split()


def test_unit_is_hardened_but_reaches_gpio_and_serial(
        unit: dict[str, list[tuple[str, str]]]) -> None:
    assert one(unit, "Service", "NoNewPrivileges") == "yes"
    assert one(unit, "Service", "ProtectSystem") == "strict"
    assert one(unit, "Service", "ProtectHome") == "yes"
    assert one(unit, "Service", "CapabilityBoundingSet") == ""
    # A private /dev would have neither /dev/gpiochip* nor the serial ports; a device ACL
    # (ProtectClock=yes implies one) is resolved at start and would lock out a serial driver
    # loaded later, when the board is plugged in.
    assert values(unit, "Service", "PrivateDevices") in ([], ["no"])
    assert values(unit, "Service", "DevicePolicy") in ([], ["auto"])
    assert values(unit, "Service", "DeviceAllow") == []
    assert values(unit, "Service", "ProtectClock") in ([], ["no"])


def test_execstart_is_a_valid_referee_run_command(
        unit: dict[str, list[tuple[str, str]]]) -> None:
    argv = shlex.split(one(unit, "Service", "ExecStart"))
    assert argv[0] == "/opt/card-referee/bin/referee"  # the venv of docs/install.md
    assert argv[1] == "run"
    args = build_parser().parse_args(argv[1:])
    assert args.command == "run"
    assert args.config == "/etc/card-referee/table.toml"
    assert args.no_console, "under systemd there is no console to read"


def test_execstart_flags_are_listed_by_run_help(
        unit: dict[str, list[tuple[str, str]]]) -> None:
    argv = shlex.split(one(unit, "Service", "ExecStart"))
    help_text = subprocess.run(
        [sys.executable, "-c", "import sys; from cardtable.cli import main; sys.exit(main())",
         "run", "--help"], capture_output=True, text=True, check=True, cwd=ROOT).stdout
    for flag in (a.split("=")[0] for a in argv[2:] if a.startswith("-")):
        assert re.search(rf"(^|[\s,\[]){re.escape(flag)}\b", help_text), flag


def test_systemd_analyze_verify(tmp_path: Path) -> None:
    if shutil.which("systemd-analyze") is None:
        # .ci/run installs Debian's systemd package: in CI its absence is a failure.
        if os.environ.get("CI"):
            pytest.fail("systemd-analyze not found in CI (.ci/run installs systemd)")
        pytest.skip("systemd-analyze not found (apt-get install systemd)")
    # verify checks that ExecStart's program exists: point it at this interpreter instead of
    # the Pi's venv, and change nothing else.
    text = UNIT.read_text(encoding="utf-8")
    copy = tmp_path / UNIT.name
    copy.write_text(text.replace("/opt/card-referee/bin/referee", sys.executable),
                    encoding="utf-8")
    proc = subprocess.run(["systemd-analyze", "verify", str(copy)], capture_output=True,
                          text=True)
    report = [line for line in (proc.stdout + proc.stderr).splitlines() if UNIT.name in line]
    assert proc.returncode == 0 and not report, "\n".join(report) or proc.stderr


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: str(p.relative_to(ROOT)))
def test_example_configuration_loads(path: Path) -> None:
    config = refconfig.load_config(path)
    pins = hwconfig.load_config(path)
    assert len(pins.seats) == len(config.seats)


def test_the_examples_are_found() -> None:
    names = {p.name for p in EXAMPLES}
    assert {"table.full-mock.toml", "table.example.toml"} <= names


def test_full_mock_example_is_the_full_mock_stack() -> None:
    path = ROOT / "deploy" / "table.full-mock.toml"
    config = refconfig.load_config(path)
    assert config.card_source == "board" and config.board_port
    assert config.broker is not None
    assert hwconfig.load_config(path).pin_factory == "mock"


def test_full_mock_example_builds_every_edge(monkeypatch: pytest.MonkeyPatch) -> None:
    from cardtable.wiring import FeedOutput, build_service
    from firmware_bridge.edge import BoardEdge
    from hardware.slaps import GpioEdge

    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    config = refconfig.load_config(ROOT / "deploy" / "table.full-mock.toml")
    service = build_service(config, console=False)
    kinds = {type(edge) for edge in service.edges}
    assert {GpioEdge, BoardEdge, FeedOutput} <= kinds


def test_a_copy_of_the_full_mock_example_says_where_its_deck_is_looked_for(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 37: a copy of the example elsewhere found no deck beside it, and the error did
    not say why nor how to write one."""
    from cardtable.wiring import build_service
    from referee.errors import ConfigError

    monkeypatch.delenv("GPIOZERO_PIN_FACTORY", raising=False)
    copy = tmp_path / "table.toml"
    copy.write_text((ROOT / "deploy" / "table.full-mock.toml").read_text())
    with pytest.raises(ConfigError) as info:
        build_service(refconfig.load_config(copy), console=False)
    assert "board.deck" in str(info.value)
    assert f"taken from the configuration's folder, {tmp_path}" in str(info.value)
    assert f"referee deck synthetic {tmp_path / 'synthetic-deck.json'}" in str(info.value)


def _guide_configs() -> list[str]:
    text = INSTALL.read_text(encoding="utf-8")
    return [block for block in re.findall(r"```toml\n(.*?)```", text, re.S)
            if "[table]" in block]


def test_install_guide_configuration_loads(tmp_path: Path) -> None:
    blocks = _guide_configs()
    assert blocks, "docs/install.md shows a whole table.toml"
    for k, block in enumerate(blocks):
        path = tmp_path / f"table{k}.toml"
        path.write_text(block, encoding="utf-8")
        config = refconfig.load_config(path)
        pins = hwconfig.load_config(path)
        assert len(pins.seats) == len(config.seats)
        assert config.journal_dir == Path("/var/lib/card-referee/journals")


def test_install_guide_names_the_paths_of_the_unit(
        unit: dict[str, list[tuple[str, str]]]) -> None:
    text = INSTALL.read_text(encoding="utf-8")
    for path in ("/opt/card-referee", "/etc/card-referee/table.toml",
                 "/var/lib/card-referee/journals", "/run/card-referee",
                 "deploy/systemd/card-referee.service", "deploy/mosquitto", "--no-console",
                 "referee deck enroll"):
        assert path in text, path


def test_install_guide_lists_the_console_commands() -> None:
    from cardtable.console import CONSOLE_HELP

    text = INSTALL.read_text(encoding="utf-8")
    words = {part.split()[0] for line in CONSOLE_HELP.splitlines()
             for part in line.split(":")[-1].split("|") if part.strip()}
    assert {"pause", "correct", "lay", "quit"} <= words
    for word in sorted(words):
        assert f"`{word}" in text, f"docs/install.md does not explain the console's {word!r}"


def test_console_helper_is_valid_shell() -> None:
    script = ROOT / "deploy" / "referee-console.sh"
    subprocess.run(["sh", "-n", str(script)], check=True)
    text = script.read_text(encoding="utf-8")
    assert "runuser -u referee" in text and "--no-console" not in text.split("runuser", 1)[1]
    if shutil.which("shellcheck"):
        subprocess.run(["shellcheck", str(script)], check=True)


def test_console_helper_runs_a_relative_config_by_its_real_path(tmp_path: Path) -> None:
    """Issue 15.6: the helper checks CONFIG where it was started and then runs the referee
    in the state folder; it passes the configuration's real path, not the relative name."""
    if os.geteuid() != 0:
        pytest.skip("the helper refuses to run without root")
    stubs = tmp_path / "stubs"
    stubs.mkdir()
    record = tmp_path / "runuser.txt"
    for name, body in {
        "systemctl": 'exit 3',  # is-active: not running
        "install": 'for a; do last=$a; done; mkdir -p "$last"',  # no user referee needed
        "runuser": f'{{ pwd; echo "$@"; echo "LG_WD=$LG_WD"; }} > "{record}"',
    }.items():
        stub = stubs / name
        stub.write_text(f"#!/bin/sh\n{body}\n", encoding="utf-8")
        stub.chmod(0o755)
    venv = tmp_path / "venv" / "bin"
    venv.mkdir(parents=True)
    (venv / "referee").write_text("#!/bin/sh\n", encoding="utf-8")
    (venv / "referee").chmod(0o755)
    (tmp_path / "etc").mkdir()
    (tmp_path / "etc" / "table.toml").write_text("[table]\n", encoding="utf-8")
    env = {**os.environ, "PATH": f"{stubs}:{os.environ['PATH']}",
           "CARD_REFEREE_VENV": str(tmp_path / "venv"),
           "CARD_REFEREE_STATEDIR": str(tmp_path / "state"),
           "CARD_REFEREE_RUNDIR": str(tmp_path / "run"),
           "CARD_REFEREE_ENVFILE": str(tmp_path / "no-environment")}
    subprocess.run(["sh", str(ROOT / "deploy" / "referee-console.sh"), "etc/table.toml"],
                   cwd=tmp_path, env=env, check=True, capture_output=True, text=True)
    cwd, argv, lg_wd = record.read_text(encoding="utf-8").splitlines()
    assert cwd == str(tmp_path / "state")
    assert argv.split() == ["-u", "referee", "--", str(tmp_path / "venv" / "bin" / "referee"),
                            "run", "--config", str(tmp_path / "etc" / "table.toml")]
    assert lg_wd == f"LG_WD={tmp_path / 'run'}"


def test_the_full_mock_stack_knows_the_emulators_cards(tmp_path: Path) -> None:
    """10.18: the full mock stack by hand reads real cards: its configuration names the shipped
    synthetic deck, which is the emulator's own (``referee deck synthetic`` writes it)."""
    from cardtable.cli import main
    from firmware_bridge.deck import Deck, synthetic_deck

    config = refconfig.load_config(ROOT / "deploy" / "table.full-mock.toml")
    assert config.deck_file is not None and config.deck_file.exists()
    shipped = Deck.load(config.deck_file)
    assert dict(shipped.items()) == dict(synthetic_deck().items()) and len(shipped) == 52
    written = tmp_path / "deck.json"
    assert main(["deck", "synthetic", str(written)]) == 0
    assert dict(Deck.load(written).items()) == dict(synthetic_deck().items())
    assert main(["deck", "synthetic", str(written)]) == 2  # not written over without --overwrite
    text = (ROOT / "deploy" / "table.full-mock.toml").read_text()
    assert "referee deck synthetic" in text
