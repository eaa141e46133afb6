# The two commands a fresh clone needs: `make run` (the main job on embedded defaults) and `make test`.
export PREFECT_SERVER_ANALYTICS_ENABLED ?= false
export PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS ?= 60
export PREFECT_HOME ?= $(CURDIR)/.cache/prefect

.PHONY: setup run test
setup:
	bash scripts/setup.sh

# `python -m pipeline.cli` is the `classforge` console script; it also works in a .venv set up
# with CLASSFORGE_REUSE_PYTHON (scripts/setup.sh), which has no console scripts.
# Two builds: the composition track's replayed example, then the real-source track on the real
# repositories shipped in examples/real-repos (no LLM call).
run: setup
	.venv/bin/python -m pipeline.cli build --config examples/classforge.toml
	.venv/bin/python -m pipeline.cli build --config examples/real-source.toml

test: setup
	.venv/bin/python -m pytest -q
