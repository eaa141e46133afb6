"""The `classforge` command line: one subcommand per stage. Configuration is read here, at the edge.

A module per command (`build`, `evaluate`, ...) registers it on `app` (`cli/app.py`); the shared
support (`support`, `progress`, `flowlog`, `stopping`) sits below them.
"""

from classforge_bench.pipeline.cli import build, endpoints, evaluate, harvest, leaderboard, release, strengthen  # noqa: F401 - they register the commands
from classforge_bench.pipeline.cli.app import app

__all__ = ["app"]
