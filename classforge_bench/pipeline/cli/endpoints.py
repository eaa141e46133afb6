"""`classforge check-endpoint`: is an endpoint reachable, and what it can do, before paying."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table

from classforge_bench.pipeline.cli.support import (
    fail,
)

if TYPE_CHECKING:
    pass

from classforge_bench.pipeline.cli.app import ConfigOpt, _load, app, console


@app.command("check-endpoint")
def check_endpoint_cmd(
    config: ConfigOpt = None,
    role: Annotated[
        list[str] | None,
        typer.Option(
            "--role", "-r", help="composer, test_writer, judge-N, solver or evaluate (repeatable; default: all)"
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="print the reports as JSON")] = False,
) -> None:
    """Check the configured LLM endpoints: reachability, key, model, context window, structured
    output, usage, n > 1 and seed (by default the roles the configuration sets up: the build's, the
    evaluator's, or both). Exits 1 if any endpoint cannot be used; a busy server is named as such."""
    import json
    import os

    from classforge_bench.pipeline.llm.preflight import check_endpoints

    cfg = _load(config)
    reports = check_endpoints(_endpoints_for(cfg, role), os.environ, timeout_s=cfg.llm.preflight_timeout_s)
    if as_json:
        print(json.dumps([r.model_dump(mode="json") for r in reports], indent=1))
    else:
        _print_endpoint_reports(reports)
    if any(not r.ok for r in reports):
        raise typer.Exit(1)


def _endpoints_for(cfg, role: list[str] | None) -> dict:
    """The endpoints of the roles asked for, or of every role the configuration sets up."""
    from classforge_bench.pipeline.llm.preflight import endpoints_configured, endpoints_of_build, endpoints_of_evaluate

    if not role:
        return endpoints_configured(cfg)
    endpoints = endpoints_of_build(cfg) | endpoints_of_evaluate(cfg)
    unknown = [r for r in role if r not in endpoints]
    if unknown:
        fail(f"unknown role(s) {', '.join(unknown)}; roles: {', '.join(endpoints)}")
    return {r: endpoints[r] for r in role}


def _print_endpoint_reports(reports: list) -> None:
    """One table row per endpoint, then each endpoint's problems and notes."""
    from rich.markup import escape

    table = Table(title="LLM endpoints")
    cols = (
        "roles",
        "model",
        "reachable",
        "auth",
        "listed",
        "window",
        "response_format",
        "usage",
        "n>1",
        "seed",
        "latency s",
    )
    for col in cols:
        table.add_column(col)

    def show(v: object) -> str:
        return "-" if v is None else ("yes" if v is True else "no" if v is False else str(v))

    for r in reports:
        window = f"{r.context_window} ({r.context_window_source})" if r.context_window else None
        table.add_row(
            ", ".join(r.roles),
            r.model,
            show(r.reachable),
            show(r.authenticated),
            show(r.model_listed),
            show(window),
            show(r.response_format),
            show(r.usage),
            show(r.n_above_1),
            show(r.seed),
            show(r.latency_s),
        )
    console.print(table)
    for r in reports:
        for problem in r.problems:
            console.print(f"[red]problem:[/red] {escape(', '.join(r.roles))}: {escape(problem)}", soft_wrap=True)
        for note in r.notes:
            console.print(f"note: {escape(', '.join(r.roles))}: {escape(note)}", soft_wrap=True)
