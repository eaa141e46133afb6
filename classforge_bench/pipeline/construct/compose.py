"""Stage 2, composition: the composer fuses two classes into one ClassEval-style skeleton.

The composer sees the AST-derived spec of both classes (spec.py), the theme of the fusion (from the
composable-domain matrix) and the interface constraints. Its reply is extracted and checked
(skeleton_checks.py). A failing skeleton gets `compose_repairs` repair turns (default one). A
repair prompt carries both source specs (a fusion cannot be repaired without them), the checks'
problems with the offending lines quoted, the structural requirements with what this skeleton has
(public and private methods counted apart), and the previous skeleton only (not earlier attempts).
A skeleton that is not a fusion at all cannot be repaired: the prompt's own format example (small
models answer with it, under its name or another) or a copy of a source class, or both side by side (copy_check.py). It gets
a re-ask instead: the first request (both specs) under instructions without the example, with a
note naming the copy and what a fusion of these two classes must hold. If it still fails, the
candidate is dropped with the reason of the last attempt.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import EndpointConfig
from classforge_bench.pipeline.construct.common import StageContext, StageOutcome, ask, cut_detail
from classforge_bench.pipeline.construct.copy_check import copied_source, fusion_requirement, reproduced_example
from classforge_bench.pipeline.construct.pairing import Pair
from classforge_bench.pipeline.construct.skeleton_checks import Problem, SkeletonReport, check_skeleton
from classforge_bench.pipeline.construct.spec import ClassSpec, interface_constraints, render_spec
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.funnel import Verdict
from classforge_bench.pipeline.llm.client import Completion
from classforge_bench.pipeline.llm.extraction import extract_code
from classforge_bench.pipeline.llm.prompts import PromptTemplate

ROLE = "composer"


class SkeletonAttempt(BaseModel):
    model_config = ConfigDict(extra="forbid")

    reply: str
    finish_reason: str | None
    cache_key: str
    extracted_how: str
    code: str
    problems: list[Problem] = Field(default_factory=list)


class ComposeResult(BaseModel):
    model_config = ConfigDict(extra="forbid")

    outcome: StageOutcome
    skeleton: str | None = None
    class_name: str | None = None
    methods: list[str] = Field(default_factory=list)
    attempts: list[SkeletonAttempt] = Field(default_factory=list)
    prompt_version: str


def compose_messages(ctx: StageContext, pair: Pair, a: ClassSpec, b: ClassSpec) -> list[dict[str, str]]:
    kind = (
        "two classes of the same domain"
        if pair.composition_type == "intra-domain"
        else "two classes of different domains"
    )
    return ctx.prompts["compose"].messages(
        composition_type=pair.composition_type,
        composition_kind=kind,
        domain1=pair.domain1,
        domain2=pair.domain2,
        theme=pair.theme,
        spec_a=render_spec(a),
        spec_b=render_spec(b),
        constraints="\n".join(f"- {c}" for c in interface_constraints(ctx.construct.min_methods)),
        min_methods=ctx.construct.min_methods,
    )


_CLASS_LINE = re.compile(r"^class\s+(\w+)", re.MULTILINE)


def example_class_names(template: PromptTemplate) -> set[str]:
    """The classes the prompt itself shows as its format example. Small models often answer with
    the example instead of a fusion; a repair cannot fix that (it does not carry the specs)."""
    return set(_CLASS_LINE.findall(template.text))


def _check(
    reply: Completion, min_methods: int, example: str, sources: tuple[ClassSpec, ClassSpec]
) -> tuple[SkeletonAttempt, SkeletonReport]:
    """The skeleton checks, with a copy of the prompt's format example (`example`: the prompt's
    text; renamed or not) or of a source class named first."""
    extraction = extract_code(reply.text)
    if not extraction.found:
        report = SkeletonReport(problems=[Problem(reason=R.NO_CODE, detail="the reply holds no Python code")])
    else:
        report = check_skeleton(extraction.source_file, min_methods)
        copy = copied_source(extraction.source_file, *sources)
        example_name = reproduced_example(extraction.source_file, example, *sources)
        if example_name is not None:
            renamed = "" if report.class_name == example_name else f" renamed {report.class_name}"
            report.problems.insert(
                0,
                Problem(
                    reason=R.COPIED_EXAMPLE,
                    detail=(
                        f"the skeleton is the prompt's format example {example_name}{renamed}, not a fusion of the two classes"
                    ),
                ),
            )
        elif copy is not None:
            report.problems.insert(0, Problem(reason=R.COPIED_SOURCE, detail=copy.detail))
    attempt = SkeletonAttempt(
        reply=reply.text,
        finish_reason=reply.finish_reason,
        cache_key=reply.cache_key,
        extracted_how=extraction.how,
        code=extraction.source_file,
        problems=report.problems,
    )
    return attempt, report


_LINE_REF = re.compile(r"\(line (\d+)\)")


def problem_feedback(report: SkeletonReport, code: str) -> str:
    """The problems as a bullet list; a problem that names a line gets that line and its
    neighbours quoted, numbered, with the offending one marked."""
    lines = code.splitlines()
    out: list[str] = []
    for p in report.problems:
        out.append(f"- [{p.reason}] {p.detail}")
        m = _LINE_REF.search(p.detail)
        n = int(m.group(1)) if m else None
        if p.reason == R.SKELETON_SYNTAX:
            # libcst reports where it gave up; CPython names the construct that is wrong.
            try:
                parsing.parse(code)
            except SyntaxError as exc:
                out.append(f"  Python says: {exc.msg} (line {exc.lineno})")
                n = exc.lineno or n
        if n and lines:
            for i in range(max(1, n - 2), min(len(lines), n + 2) + 1):
                out.append(f"    {'>>' if i == n else '  '} {i:4d} | {lines[i - 1]}")
        if p.reason == R.TOO_FEW_METHODS:
            out.append(f"    public methods found: {', '.join(report.public_methods) or 'none'}")
    return "\n".join(out)


def repair_messages(
    ctx: StageContext,
    pair: Pair,
    attempt: SkeletonAttempt,
    report: SkeletonReport,
    sources: tuple[ClassSpec, ClassSpec],
) -> list[dict[str, str]]:
    previous = attempt.code if attempt.code.strip() else attempt.reply
    return ctx.prompts["compose_repair"].messages(
        theme=pair.theme,
        spec_a=render_spec(sources[0]),
        spec_b=render_spec(sources[1]),
        problems=problem_feedback(report, previous),
        min_methods=ctx.construct.min_methods,
        method_count=report.method_count(),
        previous=previous.rstrip("\n"),
    )


def reask_messages(
    ctx: StageContext, first: list[dict[str, str]], report: SkeletonReport, sources: tuple[ClassSpec, ClassSpec]
) -> list[dict[str, str]]:
    """The first request again (it carries both specs) under instructions without the format
    example, with a note naming what the model copied and what a fusion of these two must hold."""
    copied = report.problems[0]
    examples = example_class_names(ctx.prompts["compose"])
    example = report.class_name if report.class_name in examples else ", ".join(sorted(examples))
    renamed = "" if report.class_name in examples else f" (renamed `{report.class_name}`)"
    problem = (
        f"it reproduced `{example}`{renamed}, the format example of an earlier version of these instructions"
        if copied.reason == R.COPIED_EXAMPLE
        else copied.detail
    )
    return ctx.prompts["compose_reask"].messages(
        request=first[-1]["content"],
        copy_problem=problem,
        fusion_requirement=fusion_requirement(*sources),
        min_methods=ctx.construct.min_methods,
    )


def _copied_when_cut(reply: Completion, sources: tuple[ClassSpec, ClassSpec]) -> bool:
    """An answer cut at max_tokens that is a copy of the sources (two long classes run out of room):
    re-asked like any copy instead of dropped as truncated."""
    return copied_source(extract_code(reply.text).source_file or reply.text, *sources) is not None


def _answer(
    ctx: StageContext,
    endpoint: EndpointConfig,
    messages: list[dict[str, str]],
    version: str,
    sources: tuple[ClassSpec, ClassSpec],
) -> Completion | Verdict:
    """One composer answer. One cut at max_tokens gets the client's retry with more room only when
    it is not a copy of the sources: more room buys a longer copy (the 1.5B model put both classes
    side by side, bodies and all, to 1,536 tokens and was then asked again for 3,072)."""
    reply = ask(ctx, ROLE, endpoint.model_copy(update={"length_retry_factor": 1.0}), messages, version)
    if (
        isinstance(reply, Completion)
        and reply.truncated
        and endpoint.length_retry_factor > 1
        and not _copied_when_cut(reply, sources)
    ):
        # The same request again: its cut answer comes from the cache, then the retry with more room.
        return ask(ctx, ROLE, endpoint, messages, version)
    return reply


def _repeated(attempts: list[SkeletonAttempt]) -> str:
    """A last answer that repeats an earlier one byte for byte: the model did not take the feedback."""
    last = attempts[-1].code
    same = [i + 1 for i, a in enumerate(attempts[:-1]) if last.strip() and a.code == last]
    return f" (attempt {len(attempts)} repeats attempt {same[0]} unchanged)" if same else ""


def compose(ctx: StageContext, pair: Pair, a: ClassSpec, b: ClassSpec) -> ComposeResult:
    stage = R.COMPOSE
    template = ctx.prompts["compose"]
    version = template.version
    first = messages = compose_messages(ctx, pair, a, b)
    sources = (a, b)
    attempts: list[SkeletonAttempt] = []
    endpoint = ctx.llm.composer
    for round_ in range(ctx.construct.compose_repairs + 1):
        reply = _answer(ctx, endpoint, messages, version, sources)
        if not isinstance(reply, Completion):
            return ComposeResult(outcome=StageOutcome.of(stage, reply), attempts=attempts, prompt_version=version)
        if reply.truncated and not (round_ < ctx.construct.compose_repairs and _copied_when_cut(reply, sources)):
            attempts.append(
                SkeletonAttempt(
                    reply=reply.text,
                    finish_reason=reply.finish_reason,
                    cache_key=reply.cache_key,
                    extracted_how="none",
                    code="",
                )
            )
            return ComposeResult(
                outcome=StageOutcome.drop(
                    stage, R.TRUNCATED, f"{cut_detail('composer', reply)} (attempt {round_ + 1})"
                ),
                attempts=attempts,
                prompt_version=version,
            )
        attempt, report = _check(reply, ctx.construct.min_methods, template.text, sources)
        attempts.append(attempt)
        if report.ok:
            return ComposeResult(
                outcome=StageOutcome.kept(stage),
                skeleton=attempt.code,
                class_name=report.class_name,
                methods=report.methods,
                attempts=attempts,
                prompt_version=version,
            )
        if round_ == ctx.construct.compose_repairs:
            verdict = report.verdict()
            detail = f"after {round_ + 1} attempt(s): {verdict.detail}{_repeated(attempts)}"
            return ComposeResult(
                outcome=StageOutcome.drop(stage, verdict.reason, detail), attempts=attempts, prompt_version=version
            )
        if report.problems[0].reason in (R.COPIED_EXAMPLE, R.COPIED_SOURCE):
            messages = reask_messages(ctx, first, report, sources)
            version = f"{template.version}+{ctx.prompts['compose_reask'].version}"
        else:
            messages = repair_messages(ctx, pair, attempt, report, sources)
            version = f"{template.version}+{ctx.prompts['compose_repair'].version}"
    raise AssertionError("unreachable: the loop returns on its last round")
