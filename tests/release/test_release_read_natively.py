"""The evaluator reads a classforge release as written: the one task model, no quirk repair."""

from __future__ import annotations

from pathlib import Path

from classforge_bench.pipeline.core.task import JudgeVote, SourceRef, Task
from classforge_bench.pipeline.formats.loader import load_dataset
from classforge_bench.pipeline.formats.release_rows import read_release_rows
from tests.release.release_taskgen import make_tasks


def test_a_release_loads_natively_with_its_typed_columns(release: Path) -> None:
    loaded = load_dataset(release)
    assert loaded.format == "classforge-release"
    assert loaded.fixes_applied == [] and loaded.notices == []
    rows = read_release_rows(release)
    assert [t.task_id for t in loaded.tasks] == [r["task_id"] for r in rows]
    for task, row in zip(loaded.tasks, rows):
        assert task.source == "classforge-release"
        # What the release stored as JSON text comes back as the model's own types, not strings.
        assert all(isinstance(v, JudgeVote) for v in task.judge_votes or [])
        assert all(isinstance(s, SourceRef) for s in task.sources or [])
        # Reading and writing are inverse: the row the writer made is the row the task makes.
        assert task.to_row() == row


def test_a_release_row_is_not_repaired_like_classeval(write) -> None:
    """ClassEval's loader strips a test class name's stray whitespace (a quirk of that dataset). A
    classforge release is checked when written; reading it must not rewrite what was published."""
    tasks = make_tasks()
    method = tasks[0]["methods_info"][0]
    tasks[0]["test_classes"] = [
        " " + method["test_class"] if tc == method["test_class"] else tc for tc in tasks[0]["test_classes"]
    ]
    method["test_class"] = " " + method["test_class"]
    folder = write(tasks)
    task = next(t for t in load_dataset(folder).tasks if t.task_id == tasks[0]["task_id"])
    assert task.methods_info[0].test_class.startswith(" ")
    assert Task.from_row(task.to_row(), source=task.source) == task
