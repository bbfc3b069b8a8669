"""The floors (docs/design.md, "Who may import whom") hold, and the checks of them cover everything.

- Floor 1, the rules library (``referee`` and ``referee.games``), loads and imports nothing but
  the standard library and floor 1, on a fresh interpreter and in its source text.
- Floor 2, the edges (``hardware``, ``firmware_bridge``), never imports ``cardtable``, the
  table program (floor 3), nor each other.
- Floor 1 has no import cycle, module by module.
- The import-linter contracts in ``pyproject.toml`` state the floors as layers over every
  package the project installs, and forbid floor 1 every third-party dependency of the project,
  so a new package or a new dependency cannot slip past ``lint-imports``.
- The library's examples (README.md, ``referee/__init__.py``, ``referee/games/__init__.py``)
  run as doctests.
"""

from __future__ import annotations

import ast
import doctest
import importlib
import importlib.metadata
import re
import subprocess
import sys
import tomllib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grimp
import pytest

ROOT = Path(__file__).resolve().parents[1]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
STDLIB = frozenset(sys.stdlib_module_names)
FLOOR_2 = ("hardware", "firmware_bridge")
APP = "cardtable"
FLOORS = ["cardtable", "hardware | firmware_bridge", "referee"]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def in_package(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


def is_floor_1(name: str) -> bool:
    return in_package(name, "referee")


def floor_1_files() -> list[Path]:
    return sorted((ROOT / "referee").rglob("*.py"))


def floor_2_files() -> list[Path]:
    return sorted(p for package in FLOOR_2 for p in (ROOT / package).rglob("*.py"))


FLOOR_1_MODULES = sorted(module_name(p) for p in floor_1_files())


def test_the_floors_are_where_the_checks_look() -> None:
    """The file walk finds the floors (so an empty walk cannot make the other tests pass)."""
    assert {"referee", "referee.table", "referee.games", "referee.games.vandatta"} <= set(
        FLOOR_1_MODULES)
    assert all(is_floor_1(m) for m in FLOOR_1_MODULES)
    assert len(floor_2_files()) > 10


# --- (i) a fresh interpreter -------------------------------------------------------------------

def loaded_by(code: str) -> set[str]:
    """The modules in ``sys.modules`` after running ``code`` on a fresh interpreter, started
    from the repository root so that it imports this tree."""
    run = subprocess.run(
        [sys.executable, "-c", f"{code}\nimport sys\nprint('\\n'.join(sys.modules))"],
        cwd=ROOT, capture_output=True, text=True, timeout=60, check=False)
    assert run.returncode == 0, run.stderr
    return set(run.stdout.split())


@pytest.mark.parametrize("imports", [
    "import referee",
    "import referee.games",
    "\n".join(f"import {m}" for m in FLOOR_1_MODULES),
], ids=["referee", "referee.games", "every-floor-1-module"])
def test_importing_the_library_loads_only_the_standard_library(imports: str) -> None:
    # What the interpreter loads anyway (site may preload third-party modules, e.g. certifi).
    before = loaded_by("pass")
    new = loaded_by(imports) - before
    assert "referee" in new
    foreign = sorted(m for m in new
                     if not is_floor_1(m) and m.partition(".")[0] not in STDLIB)
    assert not foreign, "loaded outside the standard library and floor 1: " + ", ".join(foreign)


# --- (ii) the source text ----------------------------------------------------------------------

def imported_names(path: Path) -> Iterator[tuple[int, str]]:
    """Every module a file imports, as ``(line, dotted name)``, wherever the import statement is
    (top level, function, ``TYPE_CHECKING``, ``try``). ``from a import b`` gives ``a`` and
    ``a.b`` (``b`` may be a submodule); a relative import is resolved against the file's
    package. Calls of ``importlib.import_module``/``__import__`` give ``<dynamic ...>``: the
    static checks cannot see what they load."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            yield node.lineno, module
            for alias in node.names:
                if alias.name != "*":
                    yield node.lineno, f"{module}.{alias.name}"
        elif isinstance(node, ast.Call):
            func = node.func
            called = (func.attr if isinstance(func, ast.Attribute)
                      else func.id if isinstance(func, ast.Name) else "")
            if called in ("import_module", "__import__"):
                arg = node.args[0] if node.args else None
                text = arg.value if isinstance(arg, ast.Constant) else "?"
                yield node.lineno, f"<dynamic {called}({text!r})>"


def where(path: Path, line: int) -> str:
    return f"{path.relative_to(ROOT)}:{line}"


def test_floor_1_source_imports_only_the_standard_library_and_floor_1() -> None:
    found = []
    for path in floor_1_files():
        for line, name in imported_names(path):
            top = name.partition(".")[0]
            if name.startswith("<dynamic"):
                found.append(f"{where(path, line)} {name}")
            elif in_package(name, APP) or not (top in STDLIB or is_floor_1(name)):
                found.append(f"{where(path, line)} imports {name}")
    assert not found, "\n".join(found)


def test_floor_2_source_never_imports_the_table_program_nor_the_other_edge() -> None:
    found = []
    for path in floor_2_files():
        own = module_name(path).partition(".")[0]
        above = [APP, *(p for p in FLOOR_2 if p != own)]
        for line, name in imported_names(path):
            if any(in_package(name, p) or (name.startswith("<dynamic") and p in name)
                   for p in above):
                found.append(f"{where(path, line)} imports {name}")
    assert not found, "\n".join(found)


def strongly_connected(graph: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's strongly connected components with more than one module (or a self-import)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1 or v in graph[v]:
                found.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return found


def test_floor_1_has_no_import_cycle() -> None:
    """Module by module (package ``__init__`` files included), over the imports that run:
    an import under ``if TYPE_CHECKING:`` is not executed, so it cannot make a cycle at import
    time (``lint-imports`` checks the same floor as packages, see pyproject.toml)."""
    graph = grimp.build_graph("referee", exclude_type_checking_imports=True, cache_dir=None)
    floor = {m for m in graph.modules if is_floor_1(m)}
    assert floor == set(FLOOR_1_MODULES)
    edges = {m: graph.find_modules_directly_imported_by(m) & floor for m in floor}
    cycles = strongly_connected(edges)
    assert not cycles, "import cycles: " + "; ".join(" <-> ".join(c) for c in cycles)


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert strongly_connected({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        ["a", "b", "c"]]
    assert strongly_connected({"a": {"a"}, "b": set()}) == [["a"]]


# --- (iii) the import-linter contract covers the floor -----------------------------------------

def contract(contract_id: str) -> dict[str, Any]:
    contracts = PYPROJECT["tool"]["importlinter"]["contracts"]
    [found] = [c for c in contracts if c.get("id") == contract_id]
    return found


def matched(graph: grimp.ImportGraph, expressions: list[str], as_packages: bool) -> set[str]:
    """The modules a list of import-linter module expressions names, as import-linter reads
    them (grimp's own wildcard matching; with ``as_packages`` their descendants too)."""
    modules: set[str] = set()
    for expression in expressions:
        modules |= (graph.find_matching_modules(expression) if "*" in expression
                    else {expression} & graph.modules)
    if as_packages:
        modules |= {d for m in modules for d in graph.find_descendants(m)}
    return modules


def import_names(requirement: str) -> set[str]:
    """The top-level import names of a requirement (``pyserial`` → ``serial``), from the
    installed distribution; a distribution that is not installed (``lgpio`` on a laptop) is
    taken by its own name. Private names (``_pytest``, mypyc's hashed module) are left out."""
    dist = re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0]
    key = re.sub(r"[-_.]+", "-", dist).lower()
    names = {top for top, dists in importlib.metadata.packages_distributions().items()
             if key in {re.sub(r"[-_.]+", "-", d).lower() for d in dists}
             and top.isidentifier() and not top.startswith("_")}  # not private helpers
    return names or {key.replace("-", "_")}


def test_every_floor_1_module_is_a_source_of_the_contract() -> None:
    rules = contract("rules-library")
    graph = grimp.build_graph("referee", cache_dir=None)
    sources = matched(graph, list(rules["source_modules"]),
                      bool(rules.get("as_packages", True)))
    skipped = sorted(set(FLOOR_1_MODULES) - sources)
    assert not skipped, "floor-1 modules that lint-imports does not check: " + ", ".join(skipped)
    strangers = sorted(m for m in sources if not is_floor_1(m))
    assert not strangers, "sources of the contract outside floor 1: " + ", ".join(strangers)


@pytest.mark.slow
def test_the_contract_forbids_the_other_floors_and_every_dependency() -> None:
    rules = contract("rules-library")
    forbidden = set(rules["forbidden_modules"])
    as_packages = bool(rules.get("as_packages", True))
    for package in (*FLOOR_2, APP):
        assert package in forbidden
        assert as_packages or f"{package}.**" in forbidden, f"{package}'s submodules"
    project = PYPROJECT["project"]
    requirements = [*project["dependencies"],
                    *(r for extra in project["optional-dependencies"].values() for r in extra)]
    missing = [f"{r} ({', '.join(sorted(import_names(r) - forbidden))})"
               for r in requirements if import_names(r) - forbidden]
    assert not missing, "dependencies floor 1 may import: " + ", ".join(missing)


def installed_packages() -> set[str]:
    """The top-level packages the wheel installs (pyproject's package find)."""
    include = PYPROJECT["tool"]["setuptools"]["packages"]["find"]["include"]
    return {pattern.rstrip("*") for pattern in include}


def test_the_layers_contract_states_the_floors_over_every_installed_package() -> None:
    floors = contract("floors")
    assert floors["type"] == "layers"
    assert floors["layers"] == FLOORS
    assert floors.get("containers") in (None, [])
    named = {p.strip() for layer in floors["layers"] for p in layer.split("|")}
    assert named == installed_packages() == set(
        PYPROJECT["tool"]["importlinter"]["root_packages"])
    # A package folder on disk that the contract does not name would sit outside the floors
    # (the tests and the training scripts are not installed: they sit above every floor).
    on_disk = {p.parent.name for p in ROOT.glob("*/__init__.py")} - {"tests", "training"}
    assert on_disk <= named, f"packages outside the floors: {sorted(on_disk - named)}"


# --- (iv) the examples run ---------------------------------------------------------------------

def run_doctests(tests: list[doctest.DocTest]) -> tuple[int, str]:
    """Run doctests; the number of examples tried, and the report of any failure."""
    out: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    for test in tests:
        runner.run(test, out=out.append)
    results = runner.summarize(verbose=False)
    assert results.failed == 0, "".join(out)
    return results.attempted, "".join(out)


def test_the_readme_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ```python block of README.md with ``>>>`` runs as a doctest, from the repository
    root (its paths are relative to it)."""
    monkeypatch.chdir(ROOT)
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    parser = doctest.DocTestParser()
    tests = []
    for block in re.finditer(r"^```python\n(.*?)^```", text, re.DOTALL | re.MULTILINE):
        if ">>>" in block[1]:
            line = text.count("\n", 0, block.start(1))
            tests.append(parser.get_doctest(block[1], {}, "README.md", "README.md", line))
    attempted, _ = run_doctests(tests)
    assert attempted >= 5, "README.md has no Python example to run"


@pytest.mark.parametrize("name", ["referee", "referee.games"])
def test_the_package_docstring_examples_run(name: str) -> None:
    module = importlib.import_module(name)
    attempted, _ = run_doctests(doctest.DocTestFinder().find(module, name))
    assert attempted >= 2, f"{name} has no doctest"


# --- the checks run in CI ----------------------------------------------------------------------

def test_ci_runs_the_checks_then_exactly_the_readmes_test_command() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [command] = re.findall(
        r"^(python3 -m pip install -e '\.\[dev\]' && python3 -m pytest -n auto)$", readme,
        re.MULTILINE)
    lines = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()]
    assert command in lines, ".ci/run must run the README's test command as it is written"
    checks = ["python3 -m ruff check .", "python3 -m mypy", "lint-imports --no-cache"]
    missing = [c for c in checks if c not in lines]
    assert not missing, ".ci/run does not run: " + ", ".join(missing)
    assert max(lines.index(c) for c in checks) < lines.index(command), "checks come first"
    # What the tests need is installed by the one script a person runs too (README, issue 37).
    assert lines.index("bash .ci/provision") < lines.index(command)
    assert "bash .ci/provision" in readme
    assert "apt-get install" in (ROOT / ".ci" / "provision").read_text()


def test_the_installed_version_is_referee_version() -> None:
    """pyproject takes its version from ``referee.__version__``: one place, one number."""
    import importlib.metadata

    import referee

    assert importlib.metadata.version("card-referee") == referee.__version__
