"""How promptly the sandbox stops a runaway suite: wall time against the limit plus the grace.

    .venv/bin/python benchmarks/stop_latency.py [--limits 1 2 4] [--repeat 3]

The timing claims the test suite no longer makes (they moved with the machine's load): a test
class that loops forever is stopped at its limit, and the whole run costs about the limit plus
`sandbox.grace_s`. For each limit, one run at a time, the median of --repeat runs of
  * a suite whose only class loops forever (stopped by the wall limit), and
  * a passing suite (what start-up and teardown cost),
printed side by side with the ratio wall / (limit + grace). Run it beside a loaded machine
(`for i in 1 2 3; do (while :; do :; done) & done`) to see what load does to the ratios.
Not a test: it prints a table.
"""

from __future__ import annotations

import argparse
import os
import statistics
import time

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.sandbox import run_suite

SOLUTION = "class Counter:\n    def __init__(self):\n        self.n = 0\n"
PASSING = "import unittest\nclass CounterTest(unittest.TestCase):\n    def test_n(self):\n        self.assertEqual(Counter().n, 0)\n"
LOOPING = "import unittest\nclass CounterTest(unittest.TestCase):\n    def test_n(self):\n        while True:\n            pass\n"


def _median_wall(tests: str, limit_s: float, config: SandboxConfig, repeat: int) -> tuple[float, float, str]:
    walls, measured, status = [], [], ""
    for _ in range(repeat):
        started = time.monotonic()
        result = run_suite(SOLUTION, tests, ["CounterTest"], config=config, limit_s=limit_s, coverage=False)
        walls.append(time.monotonic() - started)
        measured.append(result.wall_s)
        status = result.status.value
    return statistics.median(walls), statistics.median(measured), status


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--limits", type=float, nargs="+", default=[1.0, 2.0, 4.0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    config = SandboxConfig()
    print(
        f"load average {os.getloadavg()[0]:.1f}; grace {config.grace_s} s; isolation {config.isolation}; "
        f"median of {args.repeat}"
    )
    print(f"{'limit s':>8} {'passing s':>10} {'looping s':>10} {'runner s':>9} {'looping/(limit+grace)':>22}  status")
    for limit in args.limits:
        passing, _, _ = _median_wall(PASSING, limit, config, args.repeat)
        looping, runner, status = _median_wall(LOOPING, limit, config, args.repeat)
        print(
            f"{limit:8.1f} {passing:10.2f} {looping:10.2f} {runner:9.2f} {looping / (limit + config.grace_s):22.2f}  {status}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
