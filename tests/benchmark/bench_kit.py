"""A small dataset, its samples and an evaluation configuration, and a backend that counts runs: shared by the evaluator's resume, record and fault tests."""

from __future__ import annotations

import json
from pathlib import Path

from classforge_bench.pipeline.config import Config, EvaluateConfig

REPO = Path(__file__).resolve().parents[2]


SOLUTION = (
    "class Counter:\n    def __init__(self):\n        self.n = 0\n\n"
    "    def add(self, k):\n        self.n += k\n        return self.n\n\n"
    "    def reset(self):\n        self.n = 0\n        return self.n\n"
)


TESTS = (
    "import unittest\n\n"
    "class CounterTestAdd(unittest.TestCase):\n"
    "    def test_add(self):\n        self.assertEqual(Counter().add(2), 2)\n\n"
    "class CounterTestReset(unittest.TestCase):\n"
    "    def test_reset(self):\n        c = Counter()\n        c.add(3)\n        self.assertEqual(c.reset(), 0)\n"
)


SKELETON = (
    "class Counter:\n    def __init__(self):\n        pass\n\n"
    '    def add(self, k):\n        """Add k."""\n\n    def reset(self):\n        """Back to 0."""\n'
)


N_TASKS = 3


def dataset(tmp_path: Path) -> Path:
    path = tmp_path / "counters.jsonl"
    rows = [
        {
            "task_id": f"T{i}",
            "class_name": "Counter",
            "skeleton": SKELETON,
            "test": TESTS,
            "test_classes": ["CounterTestAdd", "CounterTestReset"],
            "solution_code": SOLUTION,
        }
        for i in range(N_TASKS)
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def variant(i: int, *, wrong: bool = False, slow: float = 0.0) -> str:
    """The solution, told apart by a marker; `wrong`: reset forgets to reset; `slow`: add sleeps."""
    code = SOLUTION.replace("self.n = 0\n        return self.n", "return self.n") if wrong else SOLUTION
    if slow:
        code = "import time\n" + code.replace("self.n += k", f"time.sleep({slow})\n        self.n += k")
    return f"# sample {i}\n{code}"


def samples(tmp_path: Path, *, slow: float = 0.0) -> Path:
    lines = []
    for i in range(8):
        program = variant(i, wrong=i % 3 == 1, slow=slow if i >= 3 else 0.0)
        lines.append({"task_id": f"T{i % N_TASKS}", "model": "m", "completion": f"```python\n{program}```"})
    lines.append({"task_id": "T0", "model": "m", "completion": "no code here"})  # no_code: never run
    path = tmp_path / "samples.jsonl"
    path.write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    return path


def config(root: Path, workers: int = 2) -> Config:
    cfg = Config()
    cfg.evaluate = EvaluateConfig(output_root=root, bootstrap_resamples=200, workers=workers)
    cfg.sandbox.scale_floor_s = 2.0
    cfg.sandbox.scale_factor = 4.0
    cfg.sandbox.grace_s = 1.0
    return cfg


class Counting:
    """The real backend, recording the program of every run."""

    def __init__(self, inner) -> None:
        self._inner = inner
        self.programs: list[str] = []

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def run(self, files, *args, **kwargs):
        self.programs.append(
            files["solution.py"] if isinstance(files["solution.py"], str) else files["solution.py"].decode()
        )
        return self._inner.run(files, *args, **kwargs)


def marker(program: str) -> str:
    return program.splitlines()[0]


def sample_files(run_dir: Path) -> list[Path]:
    return sorted((run_dir / "samples").rglob("*.json"))
