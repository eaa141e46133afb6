"""`classforge evaluate`: score a model (live, or a samples file) on a dataset."""

from __future__ import annotations

from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, get_args

import typer
from rich.table import Table

from classforge_bench.pipeline.cli.support import (
    fail,
    validation_message,
)
from classforge_bench.pipeline.core.errors import ClassforgeError, InfrastructureError
from classforge_bench.pipeline.core.strategy_names import EvalStrategy

if TYPE_CHECKING:
    pass

from classforge_bench.pipeline.cli.app import ConfigOpt, _live_bar, _load, _preflight, app, console, write_reports

# Choices, so a mistyped value gets click's one-line "is not one of ..." instead of a pydantic dump.
# The three ignores below: mypy reads Enum()'s functional form only with literal members.
StrategyChoice = Enum("StrategyChoice", {s: s for s in get_args(EvalStrategy)}, type=str)  # type: ignore[misc]


LevelsChoice = Enum("LevelsChoice", {s: s for s in ("labels", "model")}, type=str)  # type: ignore[misc]


def _evaluate_with_probes(run_evaluation, request, cfg, env: dict, reports: list | None, progress):
    """Evaluate; after a pre-flight, with a client whose ledger already holds the probes' usage, so
    the results' usage is everything the endpoint was sent."""
    if reports is None:
        return run_evaluation(request, cfg, env=env, progress=progress)
    from classforge_bench.pipeline.llm.client import LLMClient
    from classforge_bench.pipeline.llm.preflight import probe_ledger_entries

    with LLMClient.from_config(cfg.llm, env) as client:
        client.ledger.absorb(probe_ledger_entries(reports))
        return run_evaluation(request, cfg, env=env, client=client, progress=progress)


def _evaluation_table(results) -> Table:
    from classforge_bench.benchmark.summary import compact_header, compact_rows

    # the tasks some sample was scored on: a samples file or --task may cover fewer than the dataset holds
    scored = len({s.task_id for s in results.samples if s.scored})
    table = Table(
        title=f"pass@k (%) on {scored} scored task(s) of {results.dataset.n_tasks_selected} selected "
        f"({len(results.broken_task_ids)} broken, excluded)"
    )
    for i, col in enumerate(compact_header(results)):
        table.add_column(col, justify="left" if i < 2 else "right")
    for row in compact_rows(results):
        table.add_row(*row)
    return table


# evaluate's options, one alias each so that the command's signature reads as a list of them
EvalDatasetOpt = Annotated[
    str | None,
    typer.Option(
        "--dataset",
        "-d",
        help="'classeval' (from the Hugging Face Hub or its cache), "
        "hf:ORG/NAME[@REVISION], or a path: JSON, JSONL, Parquet or a release folder",
    ),
]


EvalModelOpt = Annotated[
    list[str] | None, typer.Option("--model", "-m", help="model name (repeatable); 'reference' and 'empty' are special")
]


EvalBaseUrlOpt = Annotated[
    str | None, typer.Option("--base-url", help="OpenAI-compatible endpoint (overrides evaluate.endpoint.base_url)")
]


EvalStrategyOpt = Annotated[
    list[StrategyChoice] | None, typer.Option("--strategy", "-s", help="generation strategy (repeatable)")
]


EvalSamplesOpt = Annotated[
    Path | None, typer.Option("--samples", help="score pre-generated completions (JSONL) instead of generating")
]


EvalLevelsOpt = Annotated[
    LevelsChoice | None,
    typer.Option("--levels", help="bottom_up/top_down levels: the dataset's labels or asked of the model"),
]


EvalDaskOpt = Annotated[
    str | None,
    typer.Option(
        "--dask",
        help="run the sandbox on a Dask cluster: tcp://HOST:PORT of its "
        "scheduler, or 'local' (each worker needs classforge and the sandbox)",
    ),
]


EvalOutOpt = Annotated[
    Path | None, typer.Option("--out", help="results root (default: evaluate.output_root, results/)")
]


EvalRegradeOpt = Annotated[
    Path | None, typer.Option("--regrade", help="recompute the scores of a results folder, offline")
]


EvalPlotsOpt = Annotated[
    bool, typer.Option("--plots", help="also draw passk.png and taxonomy.png (with --regrade too)")
]


@app.command()
def evaluate(
    dataset: EvalDatasetOpt = None,
    model: EvalModelOpt = None,
    base_url: EvalBaseUrlOpt = None,
    strategy: EvalStrategyOpt = None,
    n: Annotated[int | None, typer.Option("--n", min=1, help="samples per task (default 5)")] = None,
    samples: EvalSamplesOpt = None,
    levels: EvalLevelsOpt = None,
    task: Annotated[list[str] | None, typer.Option("--task", help="only this task id (repeatable)")] = None,
    max_tasks: Annotated[int | None, typer.Option("--max-tasks", min=1, help="only the first N tasks")] = None,
    workers: Annotated[int | None, typer.Option("--workers", min=1, help="parallel sandbox runs")] = None,
    dask: EvalDaskOpt = None,
    out: EvalOutOpt = None,
    regrade: EvalRegradeOpt = None,
    plots: EvalPlotsOpt = False,
    hash_seeds: Annotated[
        int | None,
        typer.Option(
            "--hash-seeds",
            min=0,
            max=50,
            help="run each sample that passes again under N other PYTHONHASHSEED values and report the "
            "passes that do not hold (evaluate.hash_seeds)",
        ),
    ] = None,
    config: ConfigOpt = None,
) -> None:
    """Score models on a ClassEval-style dataset; writes results/<run-id>/ and prints Table 4."""
    from classforge_bench.benchmark.runner import regrade as run_regrade

    def run(progress) -> object:
        if regrade is not None:
            return run_regrade(regrade, progress, plots=plots)
        if dataset is None:
            fail("--dataset is required (or --regrade RESULTS_DIR)")
        cfg = _evaluation_config(
            config,
            base_url=base_url,
            model=model,
            strategy=strategy,
            n=n,
            levels=levels,
            workers=workers,
            out=out,
            dask=dask,
        )
        cfg.evaluate.plots = cfg.evaluate.plots or plots
        if hash_seeds is not None:
            cfg.evaluate.hash_seeds = hash_seeds
        _note_special_strategies(model, strategy, samples)
        return _run_evaluation(cfg, dataset, model, samples, task, max_tasks, progress)

    _print_evaluation(_evaluate_with_progress(run), regraded=regrade is not None)


def _evaluate_with_progress(run):
    """`run(progress)` under a live row per phase; its errors (and an interrupt) as one line each."""
    from pydantic import ValidationError
    from rich.progress import TaskID

    labels = {
        "reference": "reference pre-run",
        "generation": "generation",
        "execution": "execution",
        "scoring": "scoring",
    }
    # Off a terminal no live display at all (Rich would still end it with an empty line); on one, an
    # error is printed once the display is gone (it would print into a row, then be erased).
    with _live_bar("evaluate", disable=not console.is_terminal) as bar:
        phases: dict[str, TaskID] = {}

        def progress(phase: str, done: int, total: int) -> None:
            if phase not in phases:
                phases[phase] = bar.add_task(labels.get(phase, phase), total=total)
            bar.update(phases[phase], completed=done, total=total)

        try:
            return run(progress)
        except ValidationError as exc:
            bar.stop()
            fail(validation_message(exc))
        except ClassforgeError as exc:
            bar.stop()
            # As for a build: 2 is bad input found before any work; a run that could not finish
            # (results folder busy, disk full, endpoint gone) is 1.
            fail(exc, 1 if isinstance(exc, InfrastructureError) else 2)
        except KeyboardInterrupt:
            bar.stop()
            fail(
                "interrupted; run the same command to resume (finished samples are kept in the LLM cache "
                "and the results folder)",
                130,
            )


def _note_special_strategies(model, strategy, samples) -> None:
    """`reference` and `empty` answer with a whole class, so a strategy cannot apply to them: say so
    rather than score the whole class under a strategy's name."""
    special = [m for m in model or [] if m in ("reference", "empty")]
    asked = [s.value for s in strategy or [] if s.value != "holistic"]
    if special and asked and samples is None:
        console.print(
            f"[yellow]note: model(s) {', '.join(special)} answer with the whole class, so --strategy "
            f"{', '.join(asked)} does not apply to them: they are scored once, as strategy 'direct'[/yellow]"
        )


def _evaluation_config(config: Path | None, *, base_url, model, strategy, n, levels, workers, out, dask=None):
    """The configuration with the command line's evaluate options applied and validated."""
    cfg = _load(config)
    ev = cfg.evaluate
    if base_url:
        ev.endpoint.base_url = base_url
    if model and model[0] not in ("reference", "empty"):
        ev.endpoint.model = model[0]
    updates = {
        "strategies": [s.value for s in strategy] if strategy else None,
        "n_samples": n,
        "levels_source": levels.value if levels else None,
        "workers": workers,
        "output_root": out,
        "dask": dask,
    }
    cfg.evaluate = type(ev).model_validate(ev.model_dump() | {k: v for k, v in updates.items() if v is not None})
    return cfg


def _run_evaluation(cfg, dataset: str, model, samples, task, max_tasks, progress):
    """Check the endpoint when models generate, evaluate, and file the run's usage and endpoint reports."""
    import os

    from classforge_bench.benchmark.runner import EvaluationRequest
    from classforge_bench.benchmark.runner import evaluate as run_evaluation
    from classforge_bench.pipeline.formats.hub import resolve_dataset

    request = EvaluationRequest(
        dataset=resolve_dataset(dataset),
        models=list(model or ([] if samples else [cfg.evaluate.endpoint.model])),
        samples_file=samples,
        task_ids=task or None,
        max_tasks=max_tasks,
    )
    # The API key is read here, at the edge, and only the variable the endpoint names.
    key_var = cfg.evaluate.endpoint.api_key_env
    env = {key_var: os.environ[key_var]} if key_var in os.environ else {}
    # where the user's reference cache lives (XDG base directories), and nothing else of the environment
    env |= {name: os.environ[name] for name in ("XDG_CACHE_HOME", "HOME") if os.environ.get(name)}
    reports = None
    if any(m not in ("reference", "empty") for m in request.models) and samples is None:
        from classforge_bench.pipeline.llm.preflight import endpoints_of_evaluate

        reports = _preflight(cfg, endpoints_of_evaluate(cfg))
    outcome = _evaluate_with_probes(run_evaluation, request, cfg, env, reports, progress)
    if reports is not None:
        write_reports(outcome.run_dir / "endpoints.json", reports)
    return outcome


def _print_evaluation(outcome, *, regraded: bool) -> None:
    from classforge_bench.benchmark.summary import plus_header, plus_rows, unscored_advice

    results = outcome.results
    console.print(_evaluation_table(results))
    left_out = results.dataset.samples_left_out
    if left_out:
        console.print(
            f"[yellow]samples of {len(left_out)} task(s) not selected by --task/--max-tasks are left out: "
            f"{', '.join(left_out[:5])}{' ...' if len(left_out) > 5 else ''}[/yellow]"
        )
    if results.dataset.shipped_references:
        console.print(results.dataset.shipped_references, soft_wrap=True, markup=False)
    if results.plus_scores:
        table = Table(title="base vs plus pass@1 (%): plus = base tests + tests no LLM wrote")
        for column in plus_header():
            table.add_column(column)
        for row in plus_rows(results):
            table.add_row(*row)
        console.print(table)
        if any(r.broken for r in results.plus_reference):
            console.print(
                f"[yellow]the reference fails base + plus on "
                f"{', '.join(r.task_id for r in results.plus_reference if r.broken)}[/yellow]"
            )
    advice = unscored_advice(results)
    if advice:
        console.print(f"[yellow]{advice}[/yellow]", soft_wrap=True)
    if not regraded:
        resumed = (
            f" ({results.stats.samples_resumed} finished by an earlier run)" if results.stats.samples_resumed else ""
        )
        console.print(
            f"{len(results.samples)} samples{resumed}; {len(results.broken_task_ids)} broken task(s) excluded; "
            f"{results.stats.sandbox_runs} sandbox runs, {results.stats.executions_reused} reused."
        )
    else:
        console.print(f"regraded {len(results.samples)} stored samples offline.")
    drawn = ", passk.png, taxonomy.png" if (outcome.run_dir / "passk.png").is_file() else ""
    console.print(f"written to {outcome.run_dir}/ (results.json, samples/, summary.md, results.html{drawn})")
