"""The documentation's reference pages, generated from the code so they cannot drift.

`reference/cli.md` comes from the typer app (`classforge_bench/pipeline/cli.py`): every command, argument and option
with its type, default and help. `reference/config.md` comes from the pydantic configuration
(`classforge_bench/pipeline/config.py`): every key with its type, default and description.

Used as an MkDocs hook (`hooks:` in mkdocs.yml): the pages are added to the site at build time and
never written into docs/. `python scripts/docs_reference.py OUT_DIR` writes them to a folder instead.
"""

from __future__ import annotations

import enum
import sys
import types
import typing
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:  # the `mkdocs` console script does not put the project on the path
    sys.path.insert(0, str(ROOT))

CLI_PAGE = "reference/cli.md"
CONFIG_PAGE = "reference/config.md"


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _prose(text: object) -> str:
    """Help text as Markdown prose: `<snapshot>` is a placeholder, not an HTML tag."""
    return _cell(text).replace("<", "&lt;").replace(">", "&gt;")


# -- the command line ---------------------------------------------------------------------------


def _param_row(param: Any, ctx: Any) -> str:
    names = ", ".join(f"`{n}`" for n in [*param.opts, *param.secondary_opts])
    if param.param_type_name == "argument":
        names = f"`{param.name.upper()}` (argument)"
    kind = param.display_type_rich(ctx) if hasattr(param, "display_type_rich") else ""
    default = param.default
    shown = "" if default is None or (getattr(param, "is_flag", False) and default is False) else f"`{default}`"
    if getattr(param, "is_flag", False) and param.secondary_opts:
        shown = "" if default is None else f"`{param.opts[0] if default else param.secondary_opts[0]}`"
    if hasattr(default, "value"):  # an enum choice
        shown = f"`{default.value}`"
    help_text = getattr(param, "help", None) or ""
    flags = " (required)" if param.required else ""
    flags += " (repeatable)" if getattr(param, "multiple", False) and "repeatable" not in help_text else ""
    kind = f"`{_cell(kind)}`" if kind else ""
    return f"| {names} | {kind} | {_cell(shown)} | {_prose(help_text)}{flags} |"


def cli_markdown(app: Any, prog: str = "classforge") -> str:
    """One section per command: its help, usage and a table of its parameters."""
    import typer.main

    group = typer.main.get_command(app)
    ctx = group.make_context(prog, [], resilient_parsing=True)
    lines = [
        "# Command reference",
        "",
        "Generated from the code (`classforge_bench/pipeline/cli.py`) when the site is built. Conventions shared by every",
        "command (errors, exit codes, output in a pipe) are in [The command line](command-line.md).",
        "",
        f"`{prog} [--version] [-h] COMMAND [OPTIONS]`",
        "",
    ]
    for name in group.list_commands(ctx):
        command = group.get_command(ctx, name)
        sub = command.make_context(name, [], parent=ctx, resilient_parsing=True)
        usage = " ".join(["[OPTIONS]"] + [p.name.upper() for p in command.params if p.param_type_name == "argument"])
        lines += [
            f"## `{prog} {name}`",
            "",
            _prose(command.help or ""),
            "",
            f"    {prog} {name} {usage}",
            "",
            "| parameter | value | default | meaning |",
            "| --- | --- | --- | --- |",
        ]
        lines += [_param_row(p, sub) for p in command.get_params(sub)]
        lines.append("")
    return "\n".join(lines)


# -- the configuration --------------------------------------------------------------------------


def _type_name(annotation: Any) -> str:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Literal:
        return " / ".join(f'"{a}"' for a in args)
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):  # its values, as a Literal's
        return " / ".join(f'"{m.value}"' for m in annotation)
    if origin in (typing.Union, types.UnionType):
        return " or ".join("none" if a is type(None) else _type_name(a) for a in args)
    if origin in (list, tuple, dict):
        return f"{origin.__name__}[{', '.join(_type_name(a) for a in args if a is not Ellipsis)}]"
    return getattr(annotation, "__name__", str(annotation)).replace("SecretStr", "secret")


def _default(field: Any) -> str:
    from pydantic import BaseModel

    value = field.default_factory() if field.default_factory is not None else field.default
    if isinstance(value, BaseModel):
        return ""
    if isinstance(value, list) and value and isinstance(value[0], BaseModel):
        return f"{len(value)} entries"
    if value is None or value == [] or value == {}:
        return "" if value is None else f"`{value}`"
    return f"`{value}`"


def _nested_model(annotation: Any) -> tuple[str, Any] | None:
    """('', Model) for a section, ('[]', Model) for a list of them, ('.<name>', Model) for a mapping."""
    from pydantic import BaseModel

    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "", annotation
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is list and args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
        return "[]", args[0]
    if origin is dict and len(args) == 2 and isinstance(args[1], type) and issubclass(args[1], BaseModel):
        return ".<name>", args[1]
    return None


def config_rows(model: Any, prefix: str = "") -> list[tuple[str, str, str, str, str]]:
    """(section, key, type, default, description) for every leaf key, depth first."""
    rows = []
    for name, field in model.model_fields.items():
        key = f"{prefix}{name}"
        nested = _nested_model(_resolved(field.annotation, model))
        if nested is not None:
            suffix, sub = nested
            if suffix:
                rows.append(
                    (prefix.rstrip("."), key, _type_name(field.annotation), _default(field), field.description or "")
                )
            rows += config_rows(sub, f"{key}{suffix}.")
            continue
        rows.append(
            (
                prefix.rstrip("."),
                key,
                _type_name(field.annotation) + _bounds(field),
                _default(field),
                field.description or "",
            )
        )
    return rows


def _resolved(annotation: Any, model: Any) -> Any:
    """A quoted annotation (a section declared further down its module) as the class it names."""
    if isinstance(annotation, typing.ForwardRef):
        return vars(sys.modules[model.__module__])[annotation.__forward_arg__.strip("'\"")]
    return annotation


def _bounds(field: Any) -> str:
    """The limits pydantic enforces on a value (ge=1 -> ' >= 1'), so the page says what is refused."""
    signs = {"gt": ">", "ge": ">=", "lt": "<", "le": "<=", "min_length": "length >=", "max_length": "length <="}
    found = [
        f"{sign} {getattr(m, name)}"
        for m in field.metadata
        for name, sign in signs.items()
        if getattr(m, name, None) is not None
    ]
    return f", {', '.join(found)}" if found else ""


def config_markdown(model: Any) -> str:
    lines = [
        "# Configuration reference",
        "",
        "Generated from the code (`classforge_bench/pipeline/config.py`) when the site is built: every key of the TOML file,",
        "its type, its default and what it does. How the file is read (relative paths, secrets, overrides)",
        "is in [Configuration](../configuration.md).",
        "",
    ]
    sections: dict[str, list[str]] = {}
    for sect, key, kind, default, description in config_rows(model):
        parts = sect.split(".")
        for depth in range(1, len(parts)):  # a section before its sub-sections
            sections.setdefault(".".join(parts[:depth]), [])
        sections.setdefault(sect, []).append(
            f"| `{key}` | `{_cell(kind)}` | {_cell(default)} | {_prose(description)} |"
        )
    for sect, rows in sections.items():
        if not rows:
            continue
        doc = _section_doc(model, sect)
        lines += ["", f"## `[{sect}]`" if sect else "## top level", ""] + ([doc, ""] if doc else [])
        lines += ["| key | type | default | meaning |", "| --- | --- | --- | --- |", *rows]
    return "\n".join(lines) + "\n"


def _section_doc(model: Any, dotted: str) -> str:
    """The docstring of the model a section is read into (the one a section's class carries)."""
    for part in [p for p in dotted.replace("[]", "").split(".") if p and p != "<name>"]:
        nested = _nested_model(_resolved(model.model_fields[part].annotation, model))
        model = nested[1] if nested else model
    doc = (model.__doc__ or "").strip()
    return "" if doc.startswith(model.__name__ + "(") else " ".join(doc.split())


# -- MkDocs ---------------------------------------------------------------------------------------


def pages() -> dict[str, str]:
    from classforge_bench.pipeline.cli import app
    from classforge_bench.pipeline.config import Config

    return {CLI_PAGE: cli_markdown(app), CONFIG_PAGE: config_markdown(Config)}


def on_files(files: Any, config: Any) -> Any:
    """MkDocs hook: add the generated pages to the site (they exist only in the build)."""
    from mkdocs.structure.files import File

    for uri, text in pages().items():
        files.append(File.generated(config, uri, content=text))
    return files


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "site-reference")
    for uri, text in pages().items():
        (out / uri).parent.mkdir(parents=True, exist_ok=True)
        (out / uri).write_text(text, encoding="utf-8")
        print(out / uri)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
