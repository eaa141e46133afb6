# The two commands a fresh clone needs: `make run` (the main job on embedded defaults) and `make test`.
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 600
export PREFECT_HOME ?= $(CURDIR)/.cache/prefect

.PHONY: setup run test
setup:
	bash scripts/setup.sh

# `python -m classforge_bench.pipeline.cli` is the `classforge` console script; it also works in a .venv set up
# with CLASSFORGE_REUSE_PYTHON (scripts/setup.sh), which has no console scripts.
# Two builds side by side: the composition track's replayed example, and the real-source track on
# the real repositories shipped in examples/real-repos (no LLM call; its own Prefect home and release
# folder, so neither waits for nor races the other's files). Both talk to one temporary Prefect server,
# started once for the whole run by `classforge_bench.pipeline.cli.server` (its health wait survives a slow start; a build given
# PREFECT_API_URL starts none). The example's progress shows first; then the real-source build's log,
# what it wrote so far and then live until it ends (it is not held back to the end).
# `make run REAL_SOURCE=0`: the example only.
REAL_SOURCE ?= 1
PY_CLI = .venv/bin/python -m classforge_bench.pipeline.cli
run: setup
	@mkdir -p .cache
	@if [ "$(REAL_SOURCE)" = 0 ]; then exec $(PY_CLI) build --config examples/classforge.toml; fi; \
	exec .venv/bin/python -m classforge_bench.pipeline.cli.server $(MAKE) --no-print-directory run-both-builds

.PHONY: run-both-builds
run-both-builds:
	@PREFECT_HOME=$(CURDIR)/.cache/prefect-real-source $(PY_CLI) build \
	  --config examples/real-source.toml > .cache/real-source-build.log 2>&1 & real=$$!; \
	$(PY_CLI) build --config examples/classforge.toml; example=$$?; \
	echo "real-source build (examples/real-source.toml; log: .cache/real-source-build.log):"; \
	tail -n +1 --pid=$$real -f .cache/real-source-build.log; \
	wait $$real; status=$$?; \
	[ $$example -eq 0 ] && [ $$status -eq 0 ]

# PREFECT_HOME (above) is under .cache, and Prefect makes only the last folder of it: without .cache,
# a fresh clone's first `make test` warned "Failed to create the Prefect home directory".
test: setup
	@mkdir -p .cache
	.venv/bin/python -m pytest -q

# The development loop: tests/unit and tests/core, and the quick files of every other folder of tests/
# (tests/unit/test_test_layout.py checks that each folder is named here), in under 2 minutes on a quiet
# machine (docs/development.md has the measured count and time); `make test` (what CI runs) is the whole suite.
FAST_TESTS = tests/unit tests/core \
  tests/benchmark/test_bench_passk.py tests/benchmark/test_bench_metrics.py tests/benchmark/test_bench_taxonomy.py \
  tests/benchmark/test_bench_extraction.py \
  tests/construct/test_copy_check.py tests/construct/test_static_checks.py tests/construct/test_pairing.py \
  tests/flows/test_cli_build_errors.py tests/flows/test_zombie_automation.py \
  tests/harvest/test_scan.py tests/harvest/test_domains.py tests/harvest/test_resolver.py \
  tests/llm/test_llm_cache.py tests/llm/test_llm_prompts_ledger.py \
  tests/quality/test_mutants.py tests/quality/test_plus_rules.py tests/quality/test_plus_convert.py \
  tests/realmodel/test_realmodel_script.py \
  tests/release/test_release_versions.py tests/release/test_card.py \
  tests/sandbox/test_sandbox_units.py
.PHONY: test-fast lint typecheck format
test-fast: setup
	@mkdir -p .cache
	.venv/bin/python -m pytest -q -m "not slow" $(FAST_TESTS)

# What tests/unit/test_tooling.py checks with the suite, one at a time.
lint: setup
	.venv/bin/python -m ruff check .
typecheck: setup
	.venv/bin/python -m mypy

# Rewrites the tree's import order and layout (the lint's other fixes are left to a person).
format: setup
	.venv/bin/python -m ruff check --fix --select I .
	.venv/bin/python -m ruff format .

# The documentation site (docs/, mkdocs.yml): built into site/, as the test suite builds it.
.PHONY: docs
docs: setup
	NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict
