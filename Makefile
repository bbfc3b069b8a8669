# Developer commands. `make help` lists them; `make check` is what CI checks, `make ci` is CI.
PYTHON ?= python3

.DEFAULT_GOAL := help
.PHONY: help install quick test lint type bench check ci

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

install: ## install the project with its dev tools (pytest, ruff, mypy, import-linter, pre-commit)
	$(PYTHON) -m pip install -e '.[dev]'

quick: ## the fast loop: every test not marked slow (under 90 s on two cores)
	$(PYTHON) -m pytest -m "not slow"

test: ## run the whole test suite (the README's test command, without the install)
	$(PYTHON) -m pytest

lint: ## ruff, and lint-imports: who may import whom (pyproject.toml)
	$(PYTHON) -m ruff check .
	lint-imports --no-cache

type: ## mypy --strict over the four packages and training/
	$(PYTHON) -m mypy

bench: ## run every benchmark, one JSON line each
	$(PYTHON) bench/run.py

check: lint type test ## lint, type and test

ci: ## what CI runs: install Mosquitto and Chromium, the checks, then the README's test command
	bash .ci/run
