"""Versioned prompt templates: files named `<name>.v<N>.md`, rendered with `$placeholders`.

`string.Template` syntax (`$field`, `${field}`, `$$` for a literal dollar) is used instead of
`str.format` because prompts quote Python code, whose braces would otherwise need escaping.
A template may hold a system part and a user part separated by a line `---user---`.

Templates are never edited in place once used: a change is a new file with the next version, and
the version (plus the file's SHA-256) goes into every cache key and task record.
"""

from __future__ import annotations

import hashlib
import re
from pathlib import Path
from string import Template

from pydantic import BaseModel, ConfigDict

from classforge_bench.pipeline.llm.errors import PromptError

USER_SEPARATOR = "---user---"
_FILE_RE = re.compile(r"^(?P<name>[A-Za-z0-9_\-]+)\.v(?P<n>[0-9]+)\.md$")


def default_prompt_dir() -> Path:
    """The package's `classforge_bench/pipeline/prompts/` (computed on call, not at import)."""
    return Path(__file__).resolve().parent.parent / "prompts"


class PromptTemplate(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    number: int
    path: Path
    text: str
    sha256: str

    @property
    def version(self) -> str:
        """What callers record and pass as `prompt_version`, e.g. "holistic@v1"."""
        return f"{self.name}@v{self.number}"

    @property
    def has_system(self) -> bool:
        return _split(self.text)[0] is not None

    @property
    def fields(self) -> list[str]:
        """The placeholder names the template uses, in order of first appearance."""
        return Template(self.text).get_identifiers()

    def render(self, **fields: object) -> str:
        """Render a single-part template to a string."""
        system, user = _split(self.text)
        if system is not None:
            raise PromptError(f"prompt {self.version} ({self.path}) has a system part; use .messages(...)")
        return self._substitute(user, fields)

    def messages(self, **fields: object) -> list[dict[str, str]]:
        """Render to a chat messages list: [system?, user]."""
        self._check_fields(fields)
        system, user = _split(self.text)
        out: list[dict[str, str]] = []
        if system is not None:
            out.append({"role": "system", "content": self._substitute(system, fields)})
        out.append({"role": "user", "content": self._substitute(user, fields)})
        return out

    def _check_fields(self, fields: dict[str, object]) -> None:
        wanted = set(self.fields)
        missing = [f for f in self.fields if f not in fields]
        if missing:
            raise PromptError(f"prompt {self.version} ({self.path}): missing field(s) {', '.join(missing)}")
        # Unknown fields are errors too: a typo in a field name would otherwise silently drop content.
        unknown = sorted(set(fields) - wanted)
        if unknown:
            raise PromptError(f"prompt {self.version} ({self.path}): unknown field(s) {', '.join(unknown)}")

    def _substitute(self, part: str, fields: dict[str, object]) -> str:
        self._check_fields(fields)
        return Template(part).substitute({k: str(v) for k, v in fields.items()})


def _split(text: str) -> tuple[str | None, str]:
    lines = text.splitlines(keepends=True)
    for i, line in enumerate(lines):
        if line.strip() == USER_SEPARATOR:
            return "".join(lines[:i]).strip("\n"), "".join(lines[i + 1 :]).strip("\n")
    return None, text.strip("\n")


def list_prompts(directory: Path | None = None) -> dict[str, list[int]]:
    """Every template name in `directory` with its available version numbers, ascending."""
    directory = Path(directory) if directory is not None else default_prompt_dir()
    if not directory.is_dir():
        raise PromptError(f"prompt directory not found: {directory}")
    found: dict[str, list[int]] = {}
    for path in directory.iterdir():
        m = _FILE_RE.match(path.name)
        if m and path.is_file():
            found.setdefault(m["name"], []).append(int(m["n"]))
    return {name: sorted(ns) for name, ns in sorted(found.items())}


def load_prompt(name: str, version: int | str | None = None, directory: Path | None = None) -> PromptTemplate:
    """Load `<name>.v<N>.md`; the highest N when `version` is None. `version` may be 3, "3", "v3"
    or "name@v3"."""
    directory = Path(directory) if directory is not None else default_prompt_dir()
    versions = list_prompts(directory).get(name)
    if not versions:
        raise PromptError(f"no prompt template named {name!r} in {directory} (expected files like {name}.v1.md)")
    number = versions[-1] if version is None else _parse_version(name, version)
    if number not in versions:
        raise PromptError(f"prompt {name}@v{number} not found in {directory}; available: {versions}")
    path = directory / f"{name}.v{number}.md"
    raw = path.read_bytes()
    text = raw.decode("utf-8")
    template = Template(text)
    if not template.is_valid():
        # A stray `$` (e.g. `$ 5` or `$(cmd)`) would fail at render time; report it at load time.
        raise PromptError(f"prompt {name}@v{number} ({path}) has an invalid placeholder; write a literal $ as $$")
    return PromptTemplate(name=name, number=number, path=path, text=text, sha256=hashlib.sha256(raw).hexdigest())


def _parse_version(name: str, version: int | str) -> int:
    if isinstance(version, int):
        return version
    m = re.fullmatch(rf"(?:{re.escape(name)}@)?v?([0-9]+)", version.strip())
    if not m:
        raise PromptError(f"cannot read prompt version {version!r} for {name!r}; use 3, 'v3' or '{name}@v3'")
    return int(m[1])
