"""The documentation as its readers see it: every page of docs/ and the README rendered the way
the site renders it (Python-Markdown, which unlike GitHub needs a blank line before a list), with
no list run into the paragraph above it, and no link to a file the repository does not have (a
page that exists only in the built site is a 404 on GitHub)."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

import markdown
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
EXTENSIONS = ["tables", "admonition", "pymdownx.superfences", "toc"]
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+\.)\s+\S")


def _html(text: str) -> str:
    return markdown.markdown(text, extensions=EXTENSIONS)


def lists_in_paragraphs(text: str) -> list[str]:
    """Paragraphs whose later lines start like list items: a list with no blank line before it."""
    found = []
    for body in re.findall(r"<p>(.*?)</p>", _html(text), re.S):
        lines = body.split("\n")
        if any(LIST_ITEM.match(line) for line in lines[1:]):
            found.append(lines[0][:80])
    return found


def missing_links(page: Path, root: Path = ROOT) -> list[str]:
    """Relative links (href and src) of the rendered page whose file is not in the repository."""
    html = _html(page.read_text(encoding="utf-8"))
    missing = []
    for target in re.findall(r'(?:href|src)="([^"]+)"', html):
        parts = urlsplit(target)
        if parts.scheme or parts.netloc or not parts.path:
            continue  # another site, mailto:, or an anchor on the same page
        path = (page.parent / unquote(parts.path)).resolve()
        if not path.exists() or root.resolve() not in path.parents:
            missing.append(target)
    return missing


def test_the_checks_catch_what_they_are_for(tmp_path):
    assert lists_in_paragraphs("**Rules** (below):\n- one;\n- two.\n") == ["<strong>Rules</strong> (below):"]
    assert lists_in_paragraphs("**Rules** (below):\n\n- one;\n- two.\n") == []
    assert lists_in_paragraphs("Steps:\n1. first\n2. second\n") == ["Steps:"]
    assert lists_in_paragraphs("```\ntext\n- not a list\n```\n") == []
    page = tmp_path / "docs" / "p.md"
    page.parent.mkdir()
    (tmp_path / "docs" / "there.md").write_text("x")
    page.write_text("[a](there.md) [b](gone.md#x) [c](https://example.invalid/y) [d](#here) `[e](code.md)`\n")
    assert missing_links(page, tmp_path) == ["gone.md#x"]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_list_runs_into_a_paragraph(page):
    assert lists_in_paragraphs(page.read_text(encoding="utf-8")) == []


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_points_at_a_file_of_the_repository(page):
    assert missing_links(page) == []
