"""The documentation's reference pages, filled from the code so they cannot drift.

`docs/reference/cli.md` and `docs/reference/config.md` are real files (a link to them works on
GitHub too) holding a short introduction and a marker; when the site is built this MkDocs hook
(`hooks:` in mkdocs.yml) puts the generated text in place of the marker:

- the command line: typer's own Markdown generator (`typer MODULE utils docs`, called in-process
  through `typer.cli.get_docs_for_click`), every command, argument and option with its type,
  default and help;
- the configuration: every key of the pydantic configuration (`classforge_bench/pipeline/config.py`)
  with its type, limits, default and description, written here (no maintained plugin renders a
  nested pydantic settings tree as TOML keys).

`python scripts/docs_reference.py OUT_DIR` writes the filled pages to a folder instead.
"""

from __future__ import annotations

import enum
import re
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
MARKER = "<!-- generated: {} -->"


def _cell(text: object) -> str:
    return " ".join(str(text).split()).replace("|", "\\|")


def _prose(text: object) -> str:
    """Help text as Markdown prose: `<snapshot>` is a placeholder, not an HTML tag."""
    return _cell(text).replace("<", "&lt;").replace(">", "&gt;")


# -- the command line ---------------------------------------------------------------------------


def cli_markdown(app: Any, prog: str = "classforge") -> str:
    """typer's generated reference for the app, its headings one level down (the page has its own title)."""
    import typer
    import typer.main
    from typer.cli import get_docs_for_click

    command = typer.main.get_command(app)
    ctx = typer.Context(command)
    text = get_docs_for_click(obj=command, ctx=ctx, name=prog)
    return _placeholders_as_text(re.sub(r"^(#+) ", r"#\1 ", text.strip(), flags=re.M)) + "\n"


def _placeholders_as_text(markdown: str) -> str:
    """`<run-id>` in help text is a placeholder, not an HTML tag Markdown would swallow: escaped
    outside code (fences and backtick spans are shown as written anyway)."""
    out, fenced = [], False
    for line in markdown.splitlines():
        fenced ^= line.startswith("```")
        if fenced or line.startswith("```"):
            out.append(line)
            continue
        parts = line.split("`")
        parts[::2] = [_prose(p) if "<" in p or ">" in p else p for p in parts[::2]]
        out.append("`".join(parts))
    return "\n".join(out)


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
    lines: list[str] = []
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


def generated() -> dict[str, str]:
    """Marker name -> the text that replaces it."""
    from classforge_bench.pipeline.cli import app
    from classforge_bench.pipeline.config import Config

    return {"cli": cli_markdown(app), "config": config_markdown(Config)}


def fill(markdown: str, texts: dict[str, str]) -> str:
    for name, text in texts.items():
        markdown = markdown.replace(MARKER.format(name), text)
    return markdown


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """MkDocs hook: a page's markers replaced by the generated text."""
    if "<!-- generated: " not in markdown:
        return markdown
    return fill(markdown, generated())


def main(argv: list[str]) -> int:
    out = Path(argv[0] if argv else "site-reference")
    texts = generated()
    for uri in (CLI_PAGE, CONFIG_PAGE):
        (out / uri).parent.mkdir(parents=True, exist_ok=True)
        (out / uri).write_text(fill((ROOT / "docs" / uri).read_text(encoding="utf-8"), texts), encoding="utf-8")
        print(out / uri)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
