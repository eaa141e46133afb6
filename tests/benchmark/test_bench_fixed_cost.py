"""What a short command loads (issue 22, goal 2): `classforge --help` loads neither the configuration
models (pydantic) nor matplotlib; scoring a samples file loads neither matplotlib (plots only with
--plots) nor the OpenAI SDK (no model is asked) nor libcst (only plus suites need it; issue 31). Checked in a fresh interpreter by the modules it
imported, not by time."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_PROBE = """
import json, sys
from typer.testing import CliRunner
from classforge_bench.pipeline.cli import app
result = CliRunner().invoke(app, json.loads(sys.argv[1]))
loaded = sorted({m.split(".")[0] for m in sys.modules} & {"pydantic", "matplotlib", "openai", "libcst"})
print(json.dumps({"exit": result.exit_code, "output": result.output, "loaded": loaded}))
"""


def _probe(args: list[str], cwd: Path) -> dict:
    root = Path(__file__).resolve().parents[2]
    done = subprocess.run(
        [sys.executable, "-c", _PROBE, json.dumps(args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
        check=False,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_help_loads_neither_the_configuration_models_nor_matplotlib(tmp_path):
    got = _probe(["--help"], tmp_path)
    assert got["exit"] == 0 and "evaluate" in got["output"]
    assert got["loaded"] == []


def test_scoring_a_samples_file_draws_no_plot_unless_asked(classeval, classeval_path, tmp_path):
    task = classeval.by_id()["ClassEval_8"]
    samples = tmp_path / "one.jsonl"
    samples.write_text(json.dumps({"task_id": task.task_id, "completion": task.solution_code}) + "\n", encoding="utf-8")
    args = ["evaluate", "--dataset", str(classeval_path), "--samples", str(samples), "--out", str(tmp_path / "r")]
    got = _probe(args, tmp_path)
    assert got["exit"] == 0, got["output"]
    assert got["loaded"] == ["pydantic"]  # no matplotlib, no OpenAI SDK, no libcst (ClassEval has no plus suites)
    (run_dir,) = (tmp_path / "r").iterdir()
    assert not (run_dir / "passk.png").exists() and (run_dir / "summary.md").is_file()
    drawn = _probe(args + ["--plots"], tmp_path)
    assert drawn["exit"] == 0 and "matplotlib" in drawn["loaded"] and (run_dir / "passk.png").is_file()
