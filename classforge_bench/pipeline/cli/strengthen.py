"""`classforge strengthen`: plus suites for an existing dataset."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from classforge_bench.pipeline.cli.support import (
    fail,
)
from classforge_bench.pipeline.core.errors import ClassforgeError

if TYPE_CHECKING:
    pass

from classforge_bench.pipeline.cli.app import ConfigOpt, _live_bar, _load, app, console

SeedsOpt = Annotated[
    bool,
    typer.Option(
        "--seeds/--no-seeds",
        help="also make tests from each task's own tests: literals mutated within its contract, call "
        "sequences spliced on one object (plus.seeds)",
    ),
]
SelectOpt = Annotated[
    bool,
    typer.Option(
        "--select/--no-select",
        help="keep only the plus tests that kill a mutant of the reference the others miss, or show an "
        "outcome or path they never do (plus.select_by_mutants)",
    ),
]


@app.command()
def strengthen(
    dataset: Annotated[
        str,
        typer.Option(
            "--dataset",
            "-d",
            help="what `evaluate --dataset` takes: 'classeval', a JSON/JSONL/Parquet file or a release folder",
        ),
    ],
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            "-o",
            help="folder the strengthened dataset is written to; for a "
            "release folder, the new version's folder (its name is the version)",
        ),
    ],
    task: Annotated[list[str] | None, typer.Option("--task", help="only this task id (repeatable)")] = None,
    seeds: SeedsOpt = True,
    select: SelectOpt = True,
    config: ConfigOpt = None,
) -> None:
    """Write DATASET again with a generated, validated `plus` suite per task (Pynguin and the task's own
    tests mutated, in the sandbox)."""
    from classforge_bench.pipeline.formats.hub import resolve_dataset
    from classforge_bench.pipeline.quality.plus.dataset import strengthen_dataset

    cfg = _load(config)
    # A dataset's own tests are what strengthening starts from: seeds and selection are on unless refused.
    cfg.plus = cfg.plus.model_copy(update={"seeds": seeds, "select_by_mutants": select})
    with _live_bar("strengthen") as bar:
        bar_id = bar.add_task("tasks", total=None)

        def progress(done_task, suite, reused: bool) -> None:
            bar.update(
                bar_id,
                advance=1,
                description=f"{done_task.task_id}: {suite.tests} plus tests" + (" (cached)" if reused else ""),
            )

        try:
            source = resolve_dataset(dataset)
            summary = strengthen_dataset(
                source,
                out,
                cfg.sandbox,
                cfg.plus,
                task_ids=task or None,
                on_task=progress,
                **_strengthen_writer(source, out, cfg.plus),
            )
        except ClassforgeError as exc:
            fail(exc)
        except KeyboardInterrupt:
            fail("interrupted; every finished task's plus suite is cached: run the same command to resume", 130)
    _print_strengthened(summary)


def _print_strengthened(summary) -> None:
    console.print(
        f"{summary.tasks} tasks ({summary.reused} from the cache): {summary.plus_tests} plus tests kept, "
        f"{summary.with_plus} tasks have at least one"
    )
    if summary.dropped:
        console.print("dropped: " + ", ".join(f"{r} {n}" for r, n in summary.dropped.items()))
    if summary.failed:
        console.print(
            f"[yellow]generation produced nothing for {len(summary.failed)}:[/yellow] {', '.join(summary.failed[:10])}"
        )
    console.print(f"written to {summary.output}")


def _strengthen_writer(source: Path, out: Path, plus) -> dict:
    """A release folder is written as a new version (its name checked before any work); others as read."""
    from classforge_bench.pipeline.release.plus_release import check_new_version, is_release_folder, write_plus_release

    if not is_release_folder(source):
        return {}
    check_new_version(source, out)
    return {"write": lambda dataset, dest, suites: write_plus_release(dataset, dest, suites, plus)}
