# The two commands a fresh clone needs: `make run` (the main job on embedded defaults) and `make test`.
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 600
export PREFECT_HOME ?= $(CURDIR)/.cache/prefect

.PHONY: setup run test
setup:
	bash scripts/setup.sh

# `python -m pipeline.cli` is the `classforge` console script; it also works in a .venv set up
# with CLASSFORGE_REUSE_PYTHON (scripts/setup.sh), which has no console scripts.
# Two builds side by side: the composition track's replayed example, and the real-source track on
# the real repositories shipped in examples/real-repos (no LLM call; its own Prefect home and release
# folder, so neither waits for nor races the other). Its output follows the example's.
run: setup
	@mkdir -p .cache
	@PREFECT_HOME=$(CURDIR)/.cache/prefect-real-source .venv/bin/python -m pipeline.cli build \
	  --config examples/real-source.toml > .cache/real-source-build.log 2>&1 & real=$$!; \
	.venv/bin/python -m pipeline.cli build --config examples/classforge.toml; example=$$?; \
	wait $$real; status=$$?; cat .cache/real-source-build.log; \
	[ $$example -eq 0 ] && [ $$status -eq 0 ]

test: setup
	.venv/bin/python -m pytest -q

# The documentation site (docs/, mkdocs.yml): built into site/, as the test suite builds it.
.PHONY: docs
docs: setup
	NO_MKDOCS_2_WARNING=1 .venv/bin/python -m mkdocs build --strict
