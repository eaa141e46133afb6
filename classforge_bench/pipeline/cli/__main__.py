"""`python -m classforge_bench.pipeline.cli` is the `classforge` console script."""

from classforge_bench.pipeline.cli import app

app()
