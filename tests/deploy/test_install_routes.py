"""The install routes of docs/install.md, as far as a machine without a Pi can take them
(issue 15.1, 15.4, 15.7).

On the Pi, apt puts ``python3-lgpio``, ``python3-picamera2`` and an older ``python3-gpiozero``
into the system interpreter's site-packages, and the referee's venv is made with
``python3 -m venv --system-site-packages`` so that it sees them, behind what pip installed into
the venv itself. Here a *system* interpreter is built in a temporary folder (a copy of this
Python's executable whose standard library is linked in, and whose site-packages is its own)
and given stand-ins for those apt modules; the venvs are made from it exactly as the guide
says (``--without-pip``: nothing is downloaded).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
INSTALL = ROOT / "docs" / "install.md"


def _dist(site: Path, name: str, version: str, files: dict[str, str]) -> None:
    """A stand-in distribution ``name`` ``version`` in ``site``: its files and its metadata."""
    for rel, text in files.items():
        path = site / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    info = site / f"{name}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n",
                                   encoding="utf-8")


def _gpiozero(site: Path, version: str) -> None:
    _dist(site, "gpiozero", version, {
        "gpiozero/__init__.py": f"__version__ = {version!r}\n"
                                "class InputDevice:\n    pass\n\nclass LED:\n    pass\n",
        "gpiozero/pins/__init__.py": "class Factory:\n    pass\n",
    })


@pytest.fixture(scope="module")
def system(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """``(python, site)``: a system interpreter of its own, and its site-packages with apt's
    stand-ins: lgpio, picamera2 (``from picamera2 import Picamera2``) and gpiozero 2.0.1."""
    prefix = tmp_path_factory.mktemp("system")
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    lib = prefix / "lib" / stdlib.name
    lib.mkdir(parents=True)
    for entry in stdlib.iterdir():
        if entry.name not in ("site-packages", "dist-packages"):
            (lib / entry.name).symlink_to(entry)
    (prefix / "bin").mkdir()
    base = Path(getattr(sys, "_base_executable", sys.executable)).resolve()
    python = prefix / "bin" / "python3"
    shutil.copy2(base, python)
    probe = subprocess.run([str(python), "-c", "import site, sys; print(sys.prefix); "
                            "print(site.getsitepackages()[0])"],
                           capture_output=True, text=True, env=_clean_env())
    if probe.returncode != 0 or probe.stdout.split("\n")[0] != str(prefix):
        pytest.skip(f"this Python cannot be copied into a prefix of its own: {probe.stderr}")
    site = Path(probe.stdout.split("\n")[1])
    site.mkdir(parents=True, exist_ok=True)
    _dist(site, "lgpio", "0.2.2.0", {"lgpio.py": "SET_PULL_NONE = 128\n"})
    _dist(site, "picamera2", "0.3.25", {
        "picamera2/__init__.py": "class Picamera2:\n    '''apt's python3-picamera2'''\n",
    })
    _gpiozero(site, "2.0.1")
    return python, site


def _clean_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "PYTHONNOUSERSITE")}


def _venv(system: tuple[Path, Path], where: Path, *, system_site: bool) -> Path:
    """A venv made from the system interpreter as docs/install.md makes it; its python."""
    python, _ = system
    args = [str(python), "-m", "venv", "--without-pip", str(where)]
    if system_site:
        args.insert(3, "--system-site-packages")
    subprocess.run(args, check=True, capture_output=True, env=_clean_env())
    return where / "bin" / "python"


def _site(venv_python: Path) -> Path:
    out = subprocess.run([str(venv_python), "-c", "import sysconfig; "
                          "print(sysconfig.get_paths()['purelib'])"],
                         capture_output=True, text=True, check=True, env=_clean_env())
    return Path(out.stdout.strip())


def _run(venv_python: Path, code: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(venv_python), "-c", code], capture_output=True, text=True,
                          env=_clean_env())


def test_a_system_site_packages_venv_sees_apts_lgpio_and_picamera2(
        system: tuple[Path, Path], tmp_path: Path) -> None:
    _, site = system
    venv = _venv(system, tmp_path / "venv", system_site=True)
    out = _run(venv, "import lgpio, picamera2; from picamera2 import Picamera2; "
               "print(lgpio.__file__); print(picamera2.__file__)")
    assert out.returncode == 0, out.stderr
    lgpio_file, camera_file = out.stdout.split()
    assert Path(lgpio_file).parent == site and Path(camera_file).parent.parent == site


def _camera_import() -> str:
    """The statement with which the camera card source imports picamera2
    (``hardware.camera.reader.sources.PicameraSource``), as it stands in the code."""
    import ast

    source = ROOT / "hardware" / "camera" / "reader" / "sources.py"
    tree = ast.parse(source.read_text(encoding="utf-8"))
    found = [ast.unparse(node) for node in ast.walk(tree)
             if isinstance(node, ast.ImportFrom | ast.Import)
             and "picamera2" in ast.unparse(node)]
    assert len(found) == 1, found
    return found[0]


def test_the_camera_sources_import_of_picamera2_works_through_the_venv(
        system: tuple[Path, Path], tmp_path: Path) -> None:
    statement = _camera_import()
    assert statement == "from picamera2 import Picamera2"  # what docs/install.md checks
    assert f'/opt/card-referee/bin/python -c "{statement}"' in INSTALL.read_text(
        encoding="utf-8")
    venv = _venv(system, tmp_path / "venv", system_site=True)
    out = _run(venv, f"{statement}\nprint(Picamera2.__doc__)")
    assert out.returncode == 0 and "apt's python3-picamera2" in out.stdout, out.stderr


def test_a_plain_venv_does_not(system: tuple[Path, Path], tmp_path: Path) -> None:
    venv = _venv(system, tmp_path / "venv", system_site=False)
    for module in ("lgpio", "picamera2"):
        out = _run(venv, f"import {module}")
        assert out.returncode != 0 and "ModuleNotFoundError" in out.stderr, module


def _with_project(venv: Path) -> None:
    """The project on the venv's path (as ``pip install .`` would put it, without its
    third-party dependencies: gpiozero is the venv's or apt's stand-in)."""
    (_site(venv) / "card_referee_src.pth").write_text(f"{ROOT}\n", encoding="utf-8")


CHECK = ("from hardware.pins import check_gpiozero, gpiozero_version\n"
         "from referee.errors import ConfigError\n"
         "print(*gpiozero_version())\n"
         "try:\n    check_gpiozero(4)\nexcept ConfigError as exc:\n    print('refused:', exc)\n"
         "else:\n    print('fine')\n")


def test_apts_older_gpiozero_showing_through_is_refused_with_a_chip_override(
        system: tuple[Path, Path], tmp_path: Path) -> None:
    _, site = system
    venv = _venv(system, tmp_path / "venv", system_site=True)
    _with_project(venv)
    out = _run(venv, CHECK)
    assert out.returncode == 0, out.stderr
    first, verdict = out.stdout.splitlines()[:2]
    assert first == f"2.0.1 {site}"
    assert verdict.startswith("refused: hardware.gpiochip: gpiochip = 4 would be ignored")
    assert "pip install 'gpiozero>=2.0.1.post3'" in verdict


def test_the_venvs_own_gpiozero_shadows_apts(system: tuple[Path, Path], tmp_path: Path) -> None:
    # What `pip install '.[pi]'` does in the venv: gpiozero>=2.0.1.post3 is not met by apt's
    # 2.0.1, so pip installs the fixed one into the venv, which comes first on sys.path.
    venv = _venv(system, tmp_path / "venv", system_site=True)
    _with_project(venv)
    _gpiozero(_site(venv), "2.0.1.post3")
    out = _run(venv, CHECK)
    assert out.returncode == 0, out.stderr
    assert out.stdout.splitlines() == [f"2.0.1.post3 {_site(venv)}", "fine"]


def test_the_project_requires_the_gpiozero_that_honours_the_chip() -> None:
    import tomllib

    from hardware.pins import GPIOZERO_FIXED

    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert f"gpiozero>={GPIOZERO_FIXED}" in project["dependencies"]


# -- the commands of the guide ---------------------------------------------------------------

def _shell_blocks() -> list[str]:
    return re.findall(r"```sh\n(.*?)```", INSTALL.read_text(encoding="utf-8"), re.S)


def test_the_guide_has_a_route_for_bookworm_and_one_for_trixie() -> None:
    text = INSTALL.read_text(encoding="utf-8")
    assert "Bookworm" in text and "Trixie" in text
    commands = "\n".join(_shell_blocks())
    # Trixie: apt's lgpio through the system site-packages, or the build packages before pip
    assert "python3 -m venv --system-site-packages /opt/card-referee" in commands
    assert "python3-lgpio" in commands
    assert re.search(r"apt-get install -y[^\n]*\bswig\b[^\n]*\bliblgpio-dev\b[^\n]*"
                     r"\bpython3-dev\b", commands)
    # every route installs the project with the pi extra into the venv, never system-wide
    installs = [line for line in commands.splitlines() if "pip install" in line]
    assert installs and all("/opt/card-referee/bin/pip install" in line for line in installs)
    assert "python3-picamera2" in commands


def test_the_guide_lists_what_is_unverified_without_a_pi() -> None:
    text = INSTALL.read_text(encoding="utf-8")
    assert "Not verified without a Raspberry Pi" in text


def test_every_shell_block_of_the_guide_is_valid_shell(tmp_path: Path) -> None:
    blocks = _shell_blocks()
    assert len(blocks) > 5
    for k, block in enumerate(blocks):
        script = tmp_path / f"block{k}.sh"
        script.write_text(block, encoding="utf-8")
        proc = subprocess.run(["sh", "-n", str(script)], capture_output=True, text=True)
        assert proc.returncode == 0, (block, proc.stderr)
