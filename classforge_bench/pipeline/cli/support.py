"""The command line's global behaviour: every error is one unwrapped line on stderr.

Rich wraps at 80 columns when stdout is not a terminal and Typer draws usage errors in a boxed
panel; both break log files and anything that matches an error line. Errors therefore bypass Rich.
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from datetime import date
from typing import Any, NoReturn

import typer
from typer.core import TyperGroup

from classforge_bench.pipeline.core.errors import ClassforgeError


def one_line(message: object) -> str:
    """Collapse a (possibly multi-line) message into one line; list items become '; '-separated.
    Pydantic's "Value error, " prefix (typer checks choices with pydantic too) says nothing to a user."""
    parts = [p.strip().removeprefix("- ").strip() for p in str(message).replace("Value error, ", "").splitlines()]
    parts = [p for p in parts if p]
    if not parts:
        return "unknown error"
    head, rest = parts[0], parts[1:]
    if not rest:
        return head
    return head.rstrip(":") + ": " + "; ".join(rest) if head.endswith(":") else "; ".join(parts)


def print_error(message: object) -> None:
    typer.echo(f"error: {one_line(message)}", err=True)


def fail(message: object, code: int = 2) -> NoReturn:
    """Print `error: <message>` as one line on stderr and exit with `code`."""
    print_error(message)
    raise typer.Exit(code)


def validation_message(exc: Any) -> str:
    """A pydantic ValidationError as 'field: problem; field: problem', not pydantic's multi-line dump."""
    return "; ".join(f"{'.'.join(str(p) for p in e['loc']) or 'value'}: {e['msg']}" for e in exc.errors())


def dask_option(value: str | None) -> str | None:
    """Typer callback: 'local' or a Dask scheduler address, checked before anything starts."""
    from classforge_bench.pipeline.config import dask_address

    try:
        return None if value is None else dask_address(value)
    except ValueError as exc:
        raise typer.BadParameter(str(exc)) from exc


def parse_cutoff(value: str | date) -> date:
    """Typer parser of `--cutoff`: an ISO date that is not in the future (checked before anything starts)."""
    if isinstance(value, date):
        return value
    try:
        day = date.fromisoformat(value)
    except ValueError as exc:
        raise typer.BadParameter(f"{value!r} is not a date; expected YYYY-MM-DD, e.g. 2025-01-01") from exc
    if day > date.today():
        raise typer.BadParameter(f"{value} is in the future; classes first seen after it cannot exist yet")
    return day


def readable_metavar(param: Any, ctx: Any) -> None:
    """A help line shows what to type, in typer's own <type> style: nothing after a flag (typer would
    print `<bool>`), the element after a repeatable option (`<str>`, not `<list[str]>`; the help text
    says it repeats), and a bounded number as its type (`<int>`, not `<int range>`: typer prints the
    bound, `[x>=1]`, beside it)."""
    if param.metavar is not None or not hasattr(param, "display_type"):
        return
    if getattr(param, "is_flag", False):
        param.metavar = ""
    elif param.type_descriptor.is_list:
        param.metavar = re.sub(r"^<list\[(.*)\]>$", r"<\1>", param.display_type(ctx))
    elif getattr(param.type_descriptor, "is_ranged", False):
        param.metavar = f"<{param.type_descriptor.ranged_type_name}>"


class OneLineErrorGroup(TyperGroup):
    """Runs the app in click's non-standalone mode so usage errors and aborts print as one line."""

    def get_params(self, ctx: Any) -> list:
        params = super().get_params(ctx)
        for param in params:
            readable_metavar(param, ctx)
        return params

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        for param in command.get_params(ctx) if command is not None else ():
            readable_metavar(param, ctx)
        return command

    def main(
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        windows_expand_args: bool = True,
        **extra: Any,
    ) -> Any:
        if not standalone_mode:
            return super().main(
                args, prog_name, complete_var, standalone_mode=False, windows_expand_args=windows_expand_args, **extra
            )
        try:
            rv = super().main(
                args, prog_name, complete_var, standalone_mode=False, windows_expand_args=windows_expand_args, **extra
            )
        except typer.TyperException as exc:  # typer's (vendored) click usage and parameter errors
            ctx = getattr(exc, "ctx", None)
            hint = f" (see '{ctx.command_path} -h')" if ctx is not None else ""
            print_error(exc.format_message() + hint)
            sys.exit(getattr(exc, "exit_code", 2))
        except typer.Abort:
            print_error("aborted")
            sys.exit(1)
        except ClassforgeError as exc:  # every deliberate error is one line naming the item and the reason
            print_error(exc)
            sys.exit(2)
        # Non-standalone mode returns typer.Exit's code, or the command's return value (None).
        sys.exit(rv if isinstance(rv, int) else 0)
