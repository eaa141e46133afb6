"""The documentation: the site builds with `mkdocs build --strict`, its command, configuration and
API references are generated from the code (so a new option or key appears without anyone writing
it), and the start page stays a start page whose links lead somewhere."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import typer
from pydantic import BaseModel, Field

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("docs_reference", ROOT / "scripts" / "docs_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_site_builds_strictly_with_the_generated_references(tmp_path: Path) -> None:
    site = tmp_path / "site"
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    cli = (site / "reference" / "cli" / "index.html").read_text(encoding="utf-8")
    config = (site / "reference" / "config" / "index.html").read_text(encoding="utf-8")
    assert "--dataset" in cli and "classforge evaluate" in cli and "&lt;run-id&gt;" in cli
    assert "harvest.github.enabled" in config and "construction.mutation.min_score" in config
    for page in ("cli", "config"):  # a real file (a link to it works on GitHub), filled at build time
        source = (ROOT / "docs" / "reference" / f"{page}.md").read_text(encoding="utf-8")
        assert f"<!-- generated: {page} -->" in source and "construction.mutation.min_score" not in source
    assert "<!-- generated" not in cli + config
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    # mkdocstrings rendered the objects, their signatures and docstrings, not the `:::` lines
    assert 'id="classforge_bench.benchmark.standings.standings"' in api and ":::" not in api
    assert "a task is only as fresh as its oldest part" in api  # Task.first_seen's docstring
    tutorial = (site / "tutorial" / "index.html").read_text(encoding="utf-8")
    assert '<pre class="mermaid"><code>flowchart LR' in tutorial


def test_every_command_and_option_of_the_cli_is_in_its_reference() -> None:
    import typer.main

    from classforge_bench.pipeline.cli import app

    page = _generator().cli_markdown(app)
    group = typer.main.get_command(app)
    assert group.commands
    sections = re.split(r"^### `classforge ([a-z-]+)`$", page, flags=re.M)
    by_command = dict(zip(sections[1::2], sections[2::2]))
    assert sorted(by_command) == sorted(group.commands)
    for name, command in group.commands.items():
        for param in command.params:
            if param.param_type_name == "option":
                for opt in param.opts:
                    assert re.search(rf"[`, ]{re.escape(opt)}[`, ]", by_command[name]), (name, opt)
            else:  # an argument is listed under **Arguments**
                assert "**Arguments**" in by_command[name] and (param.help or "")[:20] in by_command[name]


def test_a_new_option_appears_in_the_cli_reference() -> None:
    app = typer.Typer()

    @app.command()
    def frobnicate(level: int = typer.Option(3, "--brand-new-level", help="how hard to frobnicate")) -> None:
        """Frobnicate the widgets."""

    @app.command()
    def other() -> None:
        """Something else."""

    page = _generator().cli_markdown(app)
    assert "### `classforge frobnicate`" in page and "Frobnicate the widgets." in page
    row = next(line for line in page.splitlines() if "--brand-new-level" in line)
    assert "[default: 3]" in row and "how hard to frobnicate" in row


def _leaf_keys(model: type[BaseModel], prefix: str = "") -> list[str]:
    """An independent walk: every dotted key a TOML file may set (lists and maps of sections aside)."""
    keys = []
    for name, field in model.model_fields.items():
        annotation = field.annotation
        if isinstance(annotation, type) and issubclass(annotation, BaseModel):
            keys += _leaf_keys(annotation, f"{prefix}{name}.")
        elif isinstance(annotation, str) or type(annotation).__name__ == "ForwardRef":
            continue  # a section declared further down; its keys are checked through the real model below
        else:
            keys.append(f"{prefix}{name}")
    return keys


def test_every_configuration_key_is_in_its_reference() -> None:
    from classforge_bench.pipeline.config import Config, EnvironmentChecksConfig

    page = _generator().config_markdown(Config)
    keys = _leaf_keys(Config) + [f"sandbox.environment_checks.{k}" for k in _leaf_keys(EnvironmentChecksConfig)]
    assert len(keys) > 100
    missing = [k for k in keys if f"| `{k}` |" not in page]
    assert missing == []
    assert "| `llm.judges[].model` |" in page and "| `llm.costs.<name>.prompt_per_mtok` |" in page


def test_a_new_configuration_key_appears_in_its_reference() -> None:
    from classforge_bench.pipeline.config import Config

    class Shiny(BaseModel):
        """A section added later."""

        sparkle: float = Field(0.5, ge=0, description="how much it sparkles")

    class Extended(Config):
        shiny: Shiny = Field(default_factory=Shiny)

    page = _generator().config_markdown(Extended)
    assert "## `[shiny]`" in page and "A section added later." in page
    assert "| `shiny.sparkle` | `float, >= 0` | `0.5` | how much it sparkles |" in page


def test_no_page_points_at_files_a_clone_does_not_have() -> None:
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    assert len(pages) > 15
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert "../shared" not in text and "GUIDE" not in text, page


def test_the_readme_is_a_start_page_whose_links_lead_somewhere() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 150
    first_screen = "\n".join(readme.splitlines()[:30])
    assert "make run" in first_screen and "make test" in first_screen
    for recipe in ("Recipe 1: build a benchmark", "Recipe 2: score your model", "Recipe 3: publish a release"):
        assert f"## {recipe}" in readme
    links = re.findall(r"\]\(([^)#:]+)(?:#[^)]*)?\)", readme)
    assert len(links) > 15
    assert [link for link in links if not (ROOT / link).is_file()] == []
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    docs = {str(p.relative_to(ROOT / "docs")) for p in (ROOT / "docs").rglob("*.md")}
    assert [page for page in docs if page not in nav] == []
