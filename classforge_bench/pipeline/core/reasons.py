"""Every reason code any stage may give for a drop, in one registry with what it means.

These strings land in funnel reports, rejects files and release manifests, and people compare them
across builds; they are part of the output format. Rename one only with a schema change.
`Verdict.drop` accepts registered codes only, so a typo fails the first test that reaches it
instead of splitting a funnel row in two.
"""

from __future__ import annotations

from enum import Enum
from typing import Final

_MEANINGS: dict[str, str] = {}


def _code(code: str, meaning: str) -> str:
    if code in _MEANINGS and _MEANINGS[code] != meaning:
        raise ValueError(f"reason code {code!r} registered twice with different meanings")
    _MEANINGS[code] = meaning
    return code


def is_registered(code: str) -> bool:
    return code in _MEANINGS


def meaning(code: str) -> str:
    """What a reason code means, for reports and cards ('' for a code nobody registered)."""
    return _MEANINGS.get(code, "")


def registry() -> dict[str, str]:
    return dict(_MEANINGS)


# -- stages, in pipeline order ------------------------------------------------------------------
# The harvest's: repositories (search, clone), then files, then classes.
GITHUB_SEARCH: Final = "github-search"
CLONE: Final = "clone"
SELECT: Final = "select"  # which files of a checkout are read at all
CONTENT: Final = "content"  # the bytes: size, NUL bytes, encoding, markup
COMPILE: Final = "compile"  # the file parses, compiles and holds a top-level class
# Structure before imports: the scan asks it first (it needs only the class statement; harvest/scan.py).
STRUCTURE: Final = "structure"  # method count and length, from the class statement alone
IMPORTS: Final = "imports"  # the class imports nothing outside the standard library
REFERENCES: Final = "references"  # every name the class uses resolves
TESTABILITY: Final = "testability"  # no keyboard or terminal, and some behaviour besides stubs
PROVENANCE: Final = "provenance"  # first seen after the cutoff
DEDUP: Final = "dedup"
HARVEST_STAGES: Final = (
    GITHUB_SEARCH,
    CLONE,
    SELECT,
    CONTENT,
    COMPILE,
    STRUCTURE,
    IMPORTS,
    REFERENCES,
    TESTABILITY,
    PROVENANCE,
    DEDUP,
)
RELEASE: Final = "release"
# The construction's:
PAIRING: Final = "pairing"
COMPOSE: Final = "compose"
TESTS: Final = "tests"
JUDGES: Final = "judges"
SOLUTION: Final = "solution"
MUTATION: Final = "mutation"  # test strength: the mutation score of the tests on the verified solution
STRENGTHEN: Final = "strengthen"  # only tasks below the threshold: one strengthening round, then the verdict
TASK: Final = "task"
STAGES: Final = (PAIRING, COMPOSE, TESTS, JUDGES, SOLUTION, MUTATION, STRENGTHEN, TASK)

# -- shared by every LLM stage ------------------------------------------------------------------
LLM_CALL_FAILED: Final = _code(
    "llm-call-failed", "infrastructure: outage, timeout, rate limit, auth (a later run may pass)"
)
LLM_REQUEST_REJECTED: Final = _code(
    "llm-request-rejected", "the server refuses this request every time (400, same 500 twice)"
)
PROMPT_TOO_LONG: Final = _code("prompt-too-long", "the prompt cannot fit the role's context window with room to answer")
TRUNCATED: Final = _code("truncated-output", 'finish_reason "length" even after one retry with more room')
NO_CODE: Final = _code("no-code", "nothing that parses as Python could be extracted")

# -- pairing (counted per harvested class) -----------------------------------------------------
NO_PARTNER: Final = _code("no-composable-partner", "no other class in a composable domain")
TARGETS_MET: Final = _code("targets-met", "could pair, but the targets were filled without it")
NOT_PAIRED: Final = _code("not-paired", "partners existed but all were at the reuse cap")
NO_DOMAIN: Final = _code("no-domain", "the class carries no known domain label")

# -- composition (skeleton checks, in the order they are applied) -------------------------------
SPEC_ERROR: Final = _code("source-spec-error", "a source class no longer parses or defines the class")
SKELETON_SYNTAX: Final = _code("skeleton-syntax-error", "skeleton syntax error")
NOT_ONE_CLASS: Final = _code("not-one-class", "not one class")
COPIED_EXAMPLE: Final = _code(
    "copied-example", "the skeleton is the prompt's format example, not a fusion of the two classes"
)
COPIED_SOURCE: Final = _code(
    "copied-source", "the skeleton reproduces a source class (or both side by side), not a fusion of the two"
)
EXTRA_TOP_LEVEL: Final = _code("extra-top-level-code", "extra top level code")
NON_STDLIB_IMPORT: Final = _code("non-stdlib-import", "non stdlib import")
NO_CLASS_DOCSTRING: Final = _code("no-class-docstring", "no class docstring")
NO_CONSTRUCTOR: Final = _code("no-constructor", "no constructor")
TOO_FEW_METHODS: Final = _code("too-few-methods", "too few methods")
PRIVATE_METHOD: Final = _code("private-method", "private method")
UNDOCUMENTED_METHOD: Final = _code("undocumented-method", "undocumented method")
BODY_NOT_ELIDED: Final = _code("body-not-elided", "body not elided")
CONSTRUCTOR_CALLS_METHOD: Final = _code("constructor-calls-method", "constructor calls method")

# -- tests (static checks) ----------------------------------------------------------------------
TESTS_SYNTAX: Final = _code("tests-syntax-error", "tests syntax error")
NO_TEST_CLASSES: Final = _code("no-test-classes", "no test classes")
EMPTY_TEST_CLASS: Final = _code("empty-test-class", "empty test class")
REDEFINES_CLASS: Final = _code("redefines-class", "redefines class")
UNKNOWN_MEMBER: Final = _code("unknown-member", "calls a method / reads an attribute the skeleton lacks")
PRIVATE_MEMBER: Final = _code("private-member", "touches a name with a leading underscore")
SIGNATURE_MISMATCH: Final = _code("signature-mismatch", "signature mismatch")
MISSING_METHOD_TEST_CLASS: Final = _code("missing-method-test-class", "missing method test class")
METHOD_TEST_NOT_CALLING: Final = _code("method-test-does-not-call-method", "method test does not call method")
NO_CLASS_LEVEL_TEST: Final = _code("no-class-level-test", "no class level test")

# -- judges -------------------------------------------------------------------------------------
INSUFFICIENT_FULL_MARKS: Final = _code("insufficient-full-marks", "valid votes, too few full marks")
JUDGE_VOTES_FAILED: Final = _code("judge-votes-failed", "too few judges answered validly to reach the threshold")

# -- solution (the gate's own reason codes pass through unchanged) -----------------------------
SOLUTION_SYNTAX: Final = _code("solution-syntax-error", "solution syntax error")
SOLUTION_MISSING_CLASS: Final = _code("solution-missing-class", "solution missing class")
SOLUTION_MISSING_METHOD: Final = _code("solution-missing-method", "solution missing method")
SOLUTION_SIGNATURE_CHANGED: Final = _code("solution-signature-changed", "solution signature changed")
SOLUTION_IS_SKELETON: Final = _code(
    "solution-is-skeleton", "the solution repeats the skeleton: no method besides __init__ has a body"
)
GATE_ERROR: Final = _code("gate-error", "the gate itself failed (sandbox unavailable, ...)")
ENVIRONMENT_DEPENDENT: Final = _code(
    "environment-dependent",
    "a test's verdict changed under a perturbed environment (the detail names the perturbation and tests)",
)

# -- mutation and strengthening (classforge_bench.pipeline.quality; classforge_bench/pipeline/construct/strengthen.py) ------------
WEAK_TESTS: Final = _code("weak-tests", "the tests kill fewer mutants than construction.mutation.min_score")
STRENGTHENED_TESTS_INVALID: Final = _code(
    "strengthened-tests-invalid", "the strengthened suite is cut off, holds no code or fails the static test checks"
)
STRENGTHENED_TESTS_FAIL_REFERENCE: Final = _code(
    "strengthened-tests-fail-reference",
    "the verified solution fails the strengthened suite (the gate's reason in the detail)",
)

# -- task record --------------------------------------------------------------------------------
RECORD_INVALID: Final = _code("record-invalid", "record invalid")

# -- harvest: files -----------------------------------------------------------------------------
SYMLINK: Final = _code("symlink", "a linked file or folder; links are never followed")
VENDORED: Final = _code("vendored", "inside a virtualenv, build or vendored folder")
MIGRATION: Final = _code("migration", "a database migration script")
TEST_FILE: Final = _code("test-file", "a test module, not library code")
SETUP_SCRIPT: Final = _code("setup-script", "setup.py/conftest-style packaging or tooling script")
FILE_TOO_LARGE: Final = _code("file-too-large", "the file exceeds harvest.filters.max_file_bytes")
BINARY: Final = _code("binary", "contains NUL bytes")
NOT_UTF8: Final = _code("not-utf8", "not decodable as UTF-8")
BAD_ENCODING: Final = _code("bad-encoding", "declares an encoding it does not use, or an unknown one")
EMPTY: Final = _code("empty", "no code")
NO_TOP_LEVEL_CLASS: Final = _code(
    "no-top-level-class", "no class statement at module level: nothing to harvest, so never parsed"
)
HTML_ARTEFACT: Final = _code("html-artefact", "markup in a .py file (a saved web page)")
TOO_DEEPLY_NESTED: Final = _code("too-deeply-nested", "AST deeper than the parser and resolver handle safely")
SYNTAX_ERROR: Final = _code("syntax-error", "does not compile")
# -- harvest: repositories and history --------------------------------------------------------
CLONE_TIMEOUT: Final = _code("clone-timeout", "the clone did not finish in time")
UNREACHABLE: Final = _code("unreachable", "the remote does not answer or does not exist")
CLONE_FAILED: Final = _code("clone-failed", "git failed for another reason (see detail)")
EMPTY_REPOSITORY: Final = _code("empty-repository", "the remote has no HEAD commit")
NO_POST_CUTOFF_HISTORY: Final = _code("no-post-cutoff-history", "nothing was committed after the cutoff")
TOO_LARGE: Final = _code("too-large", "the checkout exceeds harvest.clone.max_size_mb")
NO_HISTORY: Final = _code("no-history", "no commit adds the class; its first appearance is unknown")
PRE_CUTOFF: Final = _code("pre-cutoff", "the class first appeared before the cutoff")
# -- harvest: classes -------------------------------------------------------------------------
UNRESOLVABLE: Final = _code("unresolvable", "the class's names could not be resolved")
STAR_IMPORT: Final = _code("star-import", "a star import may provide names the class uses")
RELATIVE_IMPORT: Final = _code("relative-import", "imports relative to its package")
SAME_REPO_IMPORT: Final = _code("same-repo-import", "imports another module of its repository")
THIRD_PARTY_IMPORT: Final = _code("third-party-import", "imports a package outside the standard library")
HARVEST_TOO_FEW_METHODS: Final = TOO_FEW_METHODS  # same code and meaning as the skeleton check
TOO_SHORT: Final = _code("too-short", "fewer lines than harvest.filters.min_lines")
TOO_LONG: Final = _code("too-long", "more lines than harvest.filters.max_lines")
UNRESOLVED_NAME: Final = _code("unresolved-name", "uses a name nothing defines")
INTERACTIVE_INPUT: Final = _code("interactive-input", "reads the keyboard (input, getpass)")
TERMINAL_CONTROL: Final = _code("terminal-control", "drives a terminal (curses, tty, ...)")
ABSTRACT_STUBS: Final = _code("abstract-stubs", "every method besides __init__ is a stub")
ABSTRACT_CLASS: Final = _code(
    "abstract-class",
    "an abstract base class (abstract methods, ABC/ABCMeta): it cannot be instantiated, so nothing can test it",
)
# -- harvest: decontamination -----------------------------------------------------------------
EXACT_DUPLICATE: Final = _code("exact-duplicate", "the same code as another class of this harvest")
NEAR_DUPLICATE: Final = _code("near-duplicate", "near-identical tokens to another class of this harvest")
EARLIER_HARVEST: Final = _code("earlier-harvest", "the same or near-identical to a class of an earlier snapshot")
EARLIER_RELEASE: Final = _code(
    "earlier-release", "most of its code is in a solution of an earlier release of this project"
)
REFERENCE_CORPUS: Final = _code("reference-corpus", "the same or near-identical to a class of a reference dataset")

# -- release ------------------------------------------------------------------------------------
ALREADY_RELEASED: Final = _code(
    "already-released", "an earlier release has the task, its source classes or its solution"
)


# -- the plus tier: one generated test each (classforge_bench/pipeline/quality/plus) ---------------------------------
PLUS_EXPECTS_CRASH: Final = _code(
    "plus-expects-crash", "the generated test expects an exception it does not name (Pynguin's xfail)"
)
PLUS_UNCONVERTIBLE: Final = _code("plus-unconvertible", "the generated test has no faithful unittest form")
PLUS_NO_ASSERTION: Final = _code(
    "plus-no-assertion", "the generated test checks nothing but that no exception is raised"
)
PLUS_FOREIGN_IMPORT: Final = _code("plus-foreign-import", "the generated test needs a module the task does not import")
PLUS_OBJECT_IDENTITY: Final = _code(
    "plus-object-identity", "asserts on id(), `is` between objects or a repr with an address"
)
PLUS_PRIVATE_ATTRIBUTE: Final = _code(
    "plus-private-attribute",
    "reads a private attribute: a leading underscore, or a field the task's description does not declare",
)
PLUS_EXCEPTION_MESSAGE: Final = _code(
    "plus-exception-message", "asserts on an exception's message or args (types only)"
)
PLUS_UNORDERED: Final = _code("plus-unordered", "asserts on the iteration order or the text of a set or dict")
PLUS_TIME: Final = _code("plus-time", "asserts on the clock, a date computed from it, or on elapsed time")
PLUS_OUTSIDE_TEMP_DIR: Final = _code("plus-outside-temp-dir", "names a file or folder outside the task's temp dir")
PLUS_OFF_CONTRACT: Final = _code(
    "plus-off-contract",
    "passes an argument of a type the task's description never states or shows (`:param` types, examples, defaults)",
)
PLUS_UNDESCRIBED_EFFECT: Final = _code(
    "plus-undescribed-effect",
    "asserts that a field changed across calls of methods whose descriptions never name that field",
)
PLUS_OFF_DOMAIN: Final = _code(
    "plus-off-domain",
    "passes a value outside the sign, range or shape the description shows: a negative number where it shows "
    "only values >= 0, 0 where it shows only values > 0 and never admits zero, a string of another length "
    "for a character",
)
PLUS_UNDOCUMENTED_EXCEPTION: Final = _code(
    "plus-undocumented-exception",
    "the reference raises an exception the description does not document on an input the contract admits "
    "(an unstated precondition or a bug of the reference: not a fair check), or the test asserts one",
)
PLUS_FAILS_REFERENCE: Final = _code(
    "plus-fails-reference", "fails on the reference solution in one of the validation runs"
)
PLUS_ENVIRONMENT: Final = _code(
    "plus-environment-dependent", "its verdict on the reference changes under an environment perturbation"
)
PLUS_DUPLICATE: Final = _code("plus-duplicate", "the same checks as a test already kept")
PLUS_OVER_LIMIT: Final = _code("plus-over-limit", "beyond plus.max_tests")
# The generator's own failures: the class gets no plus suite, each for its own reason and detail.
PLUS_GENERATOR_KILLED: Final = _code(
    "plus-generator-killed", "the generator was killed at plus.wall_limit_s before it wrote its tests"
)
PLUS_GENERATOR_BLOCKED: Final = _code(
    "plus-generator-blocked",
    "the generator was killed at its limit and the class makes a blocking or interactive call "
    "(queue.get(), input(), a long sleep, a socket) its search could not leave out",
)
PLUS_GENERATOR_EXIT: Final = _code(
    "plus-generator-exit", "the generator exited with an error status or wrote no test file"
)
PLUS_GENERATOR_TIME_CAP: Final = _code(
    "plus-generator-time-cap",
    "the search stopped at plus.budget_s before its iteration cap: which tests exist would depend on load",
)
PLUS_ALL_DROPPED: Final = _code(
    "plus-converted-all-dropped", "the generator wrote tests and every one was dropped (counts per rule in the detail)"
)
# The state observation (plus.observe_state, classforge_bench/pipeline/quality/plus/observe.py): a walk it cannot
# assert is left out; a generated test it cannot check stays as generated, counted apart.
PLUS_WALK_UNRECORDED: Final = _code(
    "plus-walk-unrecorded",
    "a walk the state recorder got no agreed run of on the reference (no output, an exception, two runs that disagree): left out",
)
PLUS_WALK_BREAKS_RULE: Final = _code(
    "plus-walk-breaks-rule", "a walk whose recorded checks break a screening rule or assert nothing: left out"
)
PLUS_STATE_UNRECORDED: Final = _code(
    "plus-state-unrecorded",
    "a generated test the state recorder got no agreed run of on the reference: kept without state checks",
)
PLUS_STATE_BREAKS_RULE: Final = _code(
    "plus-state-breaks-rule", "a generated test whose state checks would break a screening rule: kept without them"
)
# The seed-mutation generator (classforge_bench/pipeline/quality/plus/seeds.py): scenarios made from the
# task's own tests that cannot become a plus test; and the mutation-guided selection (selection.py).
PLUS_SEED_FIXTURE: Final = _code(
    "plus-seed-fixture", "a seed scenario that uses its test class's own helpers or attributes beyond setUp's fields"
)
PLUS_SEED_BLOCK_ASSERTION: Final = _code(
    "plus-seed-block-assertion",
    "a mutated seed scenario with an assertion inside a block (a loop, a with): it would keep the base test's "
    "expected value",
)
PLUS_SEED_UNRECORDED: Final = _code(
    "plus-seed-unrecorded",
    "a seed scenario the recorder got no agreed run of on the reference (an exception outside a call of the "
    "class, two runs that disagree, no output)",
)
PLUS_NOT_SELECTED: Final = _code(
    "plus-not-selected",
    "kills no mutant of the reference that the base tests and the plus tests kept before it leave alive "
    "(mutation-guided selection)",
)


# -- the verification gate (sandbox), passed through by the solution stage ---------------------
class GateReason(str, Enum):
    COMPILE_ERROR = _code("compile-error", "the solution does not compile")
    TESTS_COMPILE_ERROR = _code("tests-compile-error", "the tests do not compile")
    IMPORT_ERROR = _code("import-error", "the program fails before any test runs")
    TEST_FAILED = _code("test-failed", "a test fails or errors against the solution")
    CLASS_WITHOUT_TESTS = _code("class-without-tests", "a listed test class runs no test")
    ZERO_TESTS = _code("zero-tests", "no test ran at all")
    LOW_COVERAGE = _code("low-coverage", "line coverage under sandbox.min_line_coverage")
    TIMEOUT = _code("timeout", "the suite did not finish within the limit")
    RESOURCE_EXCEEDED = _code("resource-exceeded", "memory, process or file limits were hit")
    TAMPERED = _code("tampered", "the code under test interfered with the harness")
    CRASHED = _code("crashed", "the interpreter died (signal, abort)")
    SANDBOX_ERROR = _code("sandbox-error", "the sandbox itself failed")
    FLAKY = _code("flaky", "two runs of the suite disagree")


# -- not rejections: a candidate that did not finish is retried by the next run ----------------
INCOMPLETE_BUDGET: Final = _code("budget-exceeded", "budget exceeded")
INCOMPLETE_CACHE_MISS: Final = _code("replay-cache-miss", "replay cache miss")
INCOMPLETE_NOT_STARTED: Final = _code("not-started", "not started")
INCOMPLETE_ERROR: Final = _code("internal-error", "internal error")
INCOMPLETE_INFRASTRUCTURE: Final = _code(
    "infrastructure-fault", "a call or the sandbox failed: says nothing about the candidate"
)

# Drops that describe the infrastructure, not the candidate: never stored as final, so the next
# run retries them (after an outage, a missing key, a sandbox that would not start).
INFRASTRUCTURE: Final = frozenset({LLM_CALL_FAILED, GATE_ERROR})

# -- real-source track (classforge_bench/pipeline/construct/real_candidate.py), stages in order ----------------------
LICENSE: Final = "license"
DOCSTRINGS: Final = "docstrings"
REFERENCE: Final = "reference"  # the generated tests on the real class: the verification gate
SKELETON: Final = "skeleton"  # the skeleton derived from the real class
EXAMPLES: Final = "examples"  # observed `>>>` examples written in, then the skeleton checks
REAL_SOURCE_STAGES: Final = (LICENSE, SKELETON, DOCSTRINGS, TESTS, REFERENCE, EXAMPLES, MUTATION, TASK)
# The generated tests' own funnel inside `tests` (one unit: a generated test or walk; plus-* reasons)
GENERATED_TESTS: Final = "generated-tests"
STATE_CHECKS: Final = "state-checks"  # generated tests the state observation ran on, and those it could not check
# Every stage of both tracks in the one order the funnel is shown in everywhere (terminal, card, report,
# plot, Prefect artifact): each track's stages run in this order, the two tracks interleaved where they
# share a stage, and a sub-funnel (generated tests, state checks) right after the stage it belongs to.
PIPELINE_ORDER: Final = (
    *HARVEST_STAGES,
    PAIRING,
    LICENSE,
    SKELETON,
    DOCSTRINGS,
    COMPOSE,
    TESTS,
    GENERATED_TESTS,
    STATE_CHECKS,
    JUDGES,
    SOLUTION,
    REFERENCE,
    EXAMPLES,
    MUTATION,
    STRENGTHEN,
    TASK,
    RELEASE,
)
NO_LICENSE: Final = _code("no-license", "the source repository declares no licence: its code may not be redistributed")
LICENSE_NOT_ALLOWED: Final = _code(
    "license-not-allowed", "the source licence is not in construction.real_source.license_allow"
)
DERIVATION_FAILED: Final = _code("skeleton-derivation-failed", "the real class could not be turned into a skeleton")
DOCSTRING_NEEDS_LLM: Final = _code(
    "docstring-needs-llm", "a docstring is missing or too thin and no LLM is configured to write it"
)
DOCSTRING_INVALID: Final = _code(
    "docstring-invalid", "the LLM's docstring is missing, cut or lacks a parameter or the return"
)
DOCSTRING_LEAKS: Final = _code(
    "docstring-leaks-implementation", "the judge found the written docstring gives the implementation away"
)
NO_TEST_GENERATOR: Final = _code("no-test-generator", "no test generator is available to write the tests")
NO_GENERATED_TESTS: Final = _code("no-generated-tests", "the generator produced no test that passes on the reference")
NO_OBSERVED_EXAMPLE: Final = _code(
    "no-observed-example", "no public method has an example the generated tests observe (no docstring would have `>>>`)"
)
