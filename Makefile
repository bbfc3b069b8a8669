# Developer commands. `make help` lists them; `make check` is what CI checks, `make ci` is CI.
PYTHON ?= python3

.DEFAULT_GOAL := help
.PHONY: help install quick test lint type bench check ci messages catalogs

help: ## list the targets
	@grep -E '^[a-z]+:.*## ' $(MAKEFILE_LIST) | awk -F ':.*## ' '{printf "  make %-8s %s\n", $$1, $$2}'

install: ## install the project with its dev tools (pytest, ruff, mypy, import-linter, pre-commit)
	$(PYTHON) -m pip install -e '.[dev]'

quick: ## the fast loop: every test not marked slow, on every core (under 90 s on two)
	$(PYTHON) -m pytest -n auto -m "not slow"

test: ## run the whole test suite (the README's test command, without the install)
	$(PYTHON) -m pytest -n auto

lint: ## ruff, and lint-imports: who may import whom (pyproject.toml)
	$(PYTHON) -m ruff check .
	lint-imports --no-cache

type: ## mypy --strict over the four packages and training/
	$(PYTHON) -m mypy

bench: ## run every benchmark, one JSON line each
	$(PYTHON) bench/run.py

# The words to translate (docs/i18n.md): Babel extracts them from the sources into the templates
# cardtable/locale/*.pot and merges them into each language's .po; `catalogs` compiles the .mo
# files the program reads (committed: they ship in the wheel). PYTHONPATH=. lets Babel import
# the pages' HTML extractor (cardtable.i18n.extract_html) from this checkout.
LOCALE = cardtable/locale
EXTRACT = PYTHONPATH=. pybabel -q extract --sort-output --add-location=file -c Translators: \
	--project=card-referee --copyright-holder="the card-table referee's authors"

messages: ## extract the words to translate and merge them into each language's catalogs
	$(EXTRACT) -F $(LOCALE)/python.cfg -k N_ -k Nn_:1,2 -k _option:2 -o $(LOCALE)/referee.pot .
	$(EXTRACT) -F $(LOCALE)/pages.cfg -k t -k tn:1,2 -o $(LOCALE)/pages.pot .
	pybabel -q update -D referee -i $(LOCALE)/referee.pot -d $(LOCALE) --no-fuzzy-matching --ignore-obsolete
	pybabel -q update -D pages -i $(LOCALE)/pages.pot -d $(LOCALE) --no-fuzzy-matching --ignore-obsolete

catalogs: ## compile the catalogs (.po) into the .mo files the program reads
	pybabel compile -D referee -d $(LOCALE) --statistics
	pybabel compile -D pages -d $(LOCALE) --statistics

check: lint type test ## lint, type and test

ci: ## what CI runs: install Mosquitto and Chromium, the checks, then the README's test command
	bash .ci/run
