"""docs/tutorial.md runs as written: its bash blocks in one shell from the checkout (`classforge`
being this checkout's CLI), each command's output holding the lines the page shows after it.

The comparison tolerates what differs per run and machine: `$WORK` stands for the folder the
tutorial made, a release version is the day it ran, a run id ends in a hash, rich pads table
columns to their content, and `...` in an expected block stands for lines left out."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TUTORIAL = ROOT / "docs" / "tutorial.md"
BLOCK = re.compile(r"^```(bash|text)\n(.*?)^```$", re.S | re.M)


def blocks() -> list[tuple[str, str | None]]:
    """Each bash block with the text block that follows it before the next bash block (None: no output shown)."""
    pairs: list[tuple[str, str | None]] = []
    for kind, body in BLOCK.findall(TUTORIAL.read_text(encoding="utf-8")):
        if kind == "bash":
            pairs.append((body, None))
        elif pairs and pairs[-1][1] is None:
            pairs[-1] = (pairs[-1][0], body)
    return pairs


def normalised(text: str, work: str = "$WORK") -> list[str]:
    text = text.replace(work, "$WORK")
    text = re.sub(r"\b\d{4}\.\d{2}\.\d{2}(?![\d.])", "VERSION", text)  # in a run id too (VERSION__model__hash)
    text = re.sub(r"__[0-9a-f]{12}\b", "__HASH", text)
    text = re.sub(r"[─━]+", "-", text)  # rich sizes its rules and columns to the content
    return [" ".join(line.split()) for line in text.splitlines() if line.strip()]


def unmatched(expected: str, actual: list[str]) -> list[str]:
    """Expected lines not found, in order, among the actual ones (`...` lines skip nothing of their own)."""
    missing, at = [], 0
    for line in normalised(expected):
        if line == "...":
            continue
        hits = [i for i in range(at, len(actual)) if actual[i] == line]
        if hits:
            at = hits[0] + 1
        else:
            missing.append(line)
    return missing


def test_the_comparison_finds_a_line_that_is_not_there():
    actual = normalised("a\nrelease: released 1 task(s) as 2026.11.28 at /x/y/out\nb", work="/x/y")
    assert unmatched("...\nrelease: released 1 task(s) as 2025.01.01 at $WORK/out", actual) == []
    assert unmatched("b\na", actual) == ["a"]  # order counts
    assert unmatched("release: released 2 task(s)", actual) == ["release: released 2 task(s)"]
    # a version is the day the tutorial ran, in a run id too
    run_dir = normalised("/x/y/results/2026.11.29__m__fedcba987654/", work="/x/y")
    assert unmatched("$WORK/results/2026.11.28__m__0123456789ab/", run_dir) == []


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_the_tutorial_runs_as_written(prefect_harness, tmp_path):
    if not (ROOT / ".venv-plus" / "bin" / "python").exists():
        pytest.skip("the plus generator's virtualenv (.venv-plus) is not set up: scripts/setup.sh makes it")
    pairs = blocks()
    assert len(pairs) == 6 and [expected is not None for _, expected in pairs] == [False, False] + [True] * 4
    script = ["set -euo pipefail", f'classforge() {{ "{sys.executable}" -m classforge_bench.pipeline.cli "$@"; }}']
    for i, (commands, _) in enumerate(pairs):
        script += [f'echo "@@@ block {i} WORK=${{WORK:-}}"', commands]
    from prefect.settings import PREFECT_API_URL

    env = os.environ | {
        "TMPDIR": str(tmp_path),  # the tutorial's `mktemp -d`
        # the suite's Prefect server, started once (a temporary server per build is slow to start
        # on a busy machine: issue 32's first item)
        "PREFECT_API_URL": str(PREFECT_API_URL.value()),
        "PREFECT_HOME": str(tmp_path / "prefect"),
        "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
        "HF_HUB_OFFLINE": "1",
        "COLUMNS": "200",
    }
    done = subprocess.run(
        ["bash", "-c", "\n".join(script)],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert done.returncode == 0, done.stdout[-5000:]
    sections = re.split(r"^@@@ block (\d+) WORK=(.*)$", done.stdout, flags=re.M)[1:]
    outputs = {int(sections[i]): (sections[i + 1], sections[i + 2]) for i in range(0, len(sections), 3)}
    work = outputs[1][0]
    assert work.startswith(str(tmp_path))
    for i, (_, expected) in enumerate(pairs):
        if expected is not None:
            assert unmatched(expected, normalised(outputs[i][1], work)) == [], (i, outputs[i][1][-2000:])
    assert {p.name for p in Path(work).iterdir()} >= {"board.html", "board.csv", "board.json", "board.tex"}
