"""Typed records shared by every stage. Defined once; every stage reads and writes these."""

from __future__ import annotations

import hashlib
from datetime import datetime
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1


class Record(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=False)
    schema_version: int = SCHEMA_VERSION


class RepoRef(Record):
    """A repository the harvest looked at, local or on GitHub."""

    full_name: str
    clone_url: str
    stars: int | None = None
    created_at: datetime | None = None
    license_spdx: str | None = None
    default_branch: str | None = None
    head_commit: str | None = None
    domains: list[str] = Field(default_factory=list)
    source: Literal["github", "local"] = "local"


class Parameter(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    kind: Literal["positional_only", "positional_or_keyword", "var_positional", "keyword_only", "var_keyword"]
    annotation: str | None = None
    default: str | None = None


class MethodInfo(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    signature: str
    parameters: list[Parameter]
    docstring: str | None = None
    source: str
    decorators: list[str] = Field(default_factory=list)
    start_line: int
    end_line: int
    calls: list[str] = Field(default_factory=list, description="self.<method>() calls made by this method")
    fields_read: list[str] = Field(default_factory=list, description="self.<field> names used by this method")


class FieldInfo(BaseModel):
    """A field of a class: in the harvested record and in the spec the composer sees."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str
    annotation: str | None = None
    declared_in: str = Field(description="'class' for class attributes, else the method that assigns it first")


class ClassMetrics(BaseModel):
    """The ClassEval-Pro paper's Table 3 figures of one class: a harvested class or a task's solution."""

    model_config = ConfigDict(extra="forbid")
    loc: int = Field(description="physical lines of the class statement, decorators included")
    method_count: int = Field(
        description="methods of a harvested class; for a task the methods to generate "
        "(the constructor not counted), as ClassEval counts"
    )
    dependency_depth: int = Field(description="longest chain of intra-class self.method() calls, 1 = no calls")


class SeedCall(BaseModel):
    """One call of a repository seed (`RepoSeed`): a public method with literal arguments."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    call: str = Field(description="the call on the instance, without it: `union(1, 2)`")
    raises: str | None = Field(
        None, description="the exception type the repository's own test expects of it (pytest.raises, assertRaises)"
    )


class RepoSeed(BaseModel):
    """A constructor and the calls made on that instance, as the repository's own tests, examples,
    README snippets or other code write them. Read with `ast`, never run on the host: the plus tier
    replays them on the reference in the sandbox (a seed of the search and of the observed tests)."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    origin: str = Field(description="`path:line` of the statement that builds the instance")
    kind: Literal["test", "example", "readme", "call-site"]
    constructor: str = Field(description="`Class(...)` or a factory `Class.method(...)`, literal arguments only")
    calls: list[SeedCall] = Field(default_factory=list)


# In a seed's call, the instance the seed builds: `from_dict(__seed_self__.to_dict())` feeds the
# instance's own result back to the class, as the repository's round-trip tests do.
SEED_SELF = "__seed_self__"


class HarvestedClass(Record):
    """A self-contained class that passed the harvest filters, with its provenance."""

    id: str
    repo: str
    clone_url: str
    license_spdx: str | None = None
    path: str
    commit: str
    first_seen_commit: str | None = None
    first_seen_date: datetime | None = None
    class_name: str
    source: str
    context: list[str] = Field(
        default_factory=list, description="module-level definitions the class needs, in file order"
    )
    imports: list[str] = Field(default_factory=list, description="import statements the class and its context need")
    docstring: str | None = None
    fields: list[FieldInfo] = Field(default_factory=list)
    methods: list[MethodInfo] = Field(default_factory=list)
    metrics: ClassMetrics
    start_line: int
    end_line: int
    domains: list[str] = Field(default_factory=list)
    excluded_methods: list[str] = Field(
        default_factory=list,
        description="methods cut out of `source` ('name: why'): their keyboard or terminal use cannot be tested",
    )
    seeds: list[RepoSeed] = Field(
        default_factory=list,
        description="how the repository itself builds and calls the class (its tests, examples, README, call sites)",
    )

    def module_source(self) -> str:
        """The class as a standalone module: imports, carried context, then the class."""
        parts = ["\n".join(self.imports)] if self.imports else []
        parts += self.context
        parts.append(self.source)
        return "\n\n\n".join(p.strip("\n") for p in parts) + "\n"


class Rejection(Record):
    """Why an item left the funnel. `reason` is a stable code; `detail` is for humans."""

    item_id: str
    stage: str
    reason: str
    detail: str = ""


def content_id(text: str, prefix: str = "") -> str:
    """Stable short id from content."""
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
    return f"{prefix}{digest}"
