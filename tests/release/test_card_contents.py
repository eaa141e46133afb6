"""What a Hub reader needs from the card beyond its sections: an example row, what every column
means, citations a reference manager accepts, and an honest account of where the code came from."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from release_taskgen import make_tasks


def _section(card: str, title: str) -> str:
    start = card.index(f"## {title}\n")
    end = card.find("\n## ", start + 1)
    return card[start : end if end != -1 else None]


def test_card_shows_an_example_instance(release: Path) -> None:
    card = (release / "README.md").read_text(encoding="utf-8")
    example = _section(card, "Example instance")
    shown = json.loads(re.search(r"```json\n(.*?)\n```", example, flags=re.S).group(1))
    first = json.loads((release / "tasks.jsonl").read_text(encoding="utf-8").splitlines()[0])
    assert shown["task_id"] == first["task_id"] and shown["class_name"] == first["class_name"]
    assert shown["test_classes"][0] == first["test_classes"][0]


def test_every_column_says_what_it_holds(release: Path) -> None:
    card = (release / "README.md").read_text(encoding="utf-8")
    rows = [line for line in _section(card, "Columns").splitlines() if line.startswith("| `")]
    manifest = json.loads((release / "manifest.json").read_text(encoding="utf-8"))
    assert len(rows) == len(manifest["columns"])
    for row in rows:
        cells = [c.strip() for c in row.strip("|").split("|")]
        assert len(cells) == 4 and cells[3] not in ("", "-"), row


def test_citations_carry_author_and_year_and_cite_classeval_pro(release: Path) -> None:
    bibtex = re.search(r"```bibtex\n(.*?)```", (release / "README.md").read_text(encoding="utf-8"), flags=re.S).group(1)
    entries = re.split(r"\n(?=@)", bibtex.strip())
    assert len(entries) == 3
    for entry in entries:
        assert re.search(r"^\s*author\s*=\s*\{.+", entry, flags=re.M), entry
        assert re.search(r"^\s*year\s*=\s*\{\d{4}\}", entry, flags=re.M), entry
    assert any("ClassEval-Pro" in e and "2604.26923" in e for e in entries)


def _without_urls(tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for task in tasks:
        for source in task["sources"]:
            source.pop("clone_url", None)
            source.pop("url", None)
    return tasks


def test_local_sources_are_not_called_public_github(write: Any) -> None:
    card = (write(tasks=_without_urls(make_tasks())) / "README.md").read_text(encoding="utf-8")
    intro = card.split("## How it was built")[0]
    assert "public repositories" not in intro and "GitHub repositories" not in intro
    assert "local git repositories" in intro
    licence = card.split("## Licence")[1].split("\n## ")[0]  # the licence section said "4 public repositories"
    assert "public repositories" not in licence and "4 local git repositories" in licence


def test_public_sources_are_called_public(release: Path) -> None:
    intro = (release / "README.md").read_text(encoding="utf-8").split("## How it was built")[0]
    assert "public repositories" in intro
