"""Stage names and reason codes of the construction stages, in one place.

These strings land in funnel reports, rejects files and release manifests, and people compare them
across builds; they are part of the output format. Rename one only with a schema change.
"""

from __future__ import annotations

from typing import Final

# -- stages, in pipeline order ------------------------------------------------------------------
PAIRING: Final = "pairing"
COMPOSE: Final = "compose"
TESTS: Final = "tests"
JUDGES: Final = "judges"
SOLUTION: Final = "solution"
TASK: Final = "task"
STAGES: Final = (PAIRING, COMPOSE, TESTS, JUDGES, SOLUTION, TASK)

# -- shared by every LLM stage ------------------------------------------------------------------
LLM_CALL_FAILED: Final = "llm-call-failed"      # infrastructure: outage, timeout, rate limit, auth (a later run may pass)
LLM_REQUEST_REJECTED: Final = "llm-request-rejected"  # the server refuses this request every time (400, same 500 twice)
PROMPT_TOO_LONG: Final = "prompt-too-long"      # the prompt cannot fit the role's context window with room to answer
TRUNCATED: Final = "truncated-output"           # finish_reason "length" even after one retry with more room
NO_CODE: Final = "no-code"                      # nothing that parses as Python could be extracted

# -- pairing (counted per harvested class) -----------------------------------------------------
NO_PARTNER: Final = "no-composable-partner"     # no other class in a composable domain
TARGETS_MET: Final = "targets-met"              # could pair, but the targets were filled without it
NOT_PAIRED: Final = "not-paired"                # partners existed but all were at the reuse cap
NO_DOMAIN: Final = "no-domain"                  # the class carries no known domain label

# -- composition (skeleton checks, in the order they are applied) -------------------------------
SPEC_ERROR: Final = "source-spec-error"          # a source class no longer parses or defines the class
SKELETON_SYNTAX: Final = "skeleton-syntax-error"
NOT_ONE_CLASS: Final = "not-one-class"
EXTRA_TOP_LEVEL: Final = "extra-top-level-code"
NON_STDLIB_IMPORT: Final = "non-stdlib-import"
NO_CLASS_DOCSTRING: Final = "no-class-docstring"
NO_CONSTRUCTOR: Final = "no-constructor"
TOO_FEW_METHODS: Final = "too-few-methods"
PRIVATE_METHOD: Final = "private-method"
UNDOCUMENTED_METHOD: Final = "undocumented-method"
BODY_NOT_ELIDED: Final = "body-not-elided"
CONSTRUCTOR_CALLS_METHOD: Final = "constructor-calls-method"

# -- tests (static checks) ----------------------------------------------------------------------
TESTS_SYNTAX: Final = "tests-syntax-error"
NO_TEST_CLASSES: Final = "no-test-classes"
EMPTY_TEST_CLASS: Final = "empty-test-class"
REDEFINES_CLASS: Final = "redefines-class"
UNKNOWN_MEMBER: Final = "unknown-member"        # calls a method / reads an attribute the skeleton lacks
PRIVATE_MEMBER: Final = "private-member"        # touches a name with a leading underscore
SIGNATURE_MISMATCH: Final = "signature-mismatch"
MISSING_METHOD_TEST_CLASS: Final = "missing-method-test-class"
METHOD_TEST_NOT_CALLING: Final = "method-test-does-not-call-method"
NO_CLASS_LEVEL_TEST: Final = "no-class-level-test"

# -- judges -------------------------------------------------------------------------------------
INSUFFICIENT_FULL_MARKS: Final = "insufficient-full-marks"  # valid votes, too few full marks
JUDGE_VOTES_FAILED: Final = "judge-votes-failed"            # too few judges answered validly to reach the threshold

# -- solution (the gate's own reason codes pass through unchanged) -----------------------------
SOLUTION_SYNTAX: Final = "solution-syntax-error"
SOLUTION_MISSING_CLASS: Final = "solution-missing-class"
SOLUTION_MISSING_METHOD: Final = "solution-missing-method"
SOLUTION_SIGNATURE_CHANGED: Final = "solution-signature-changed"
GATE_ERROR: Final = "gate-error"                # the gate itself failed (sandbox unavailable, ...)

# -- task record --------------------------------------------------------------------------------
RECORD_INVALID: Final = "record-invalid"

# -- not rejections: a candidate that did not finish is retried by the next run ----------------
INCOMPLETE_BUDGET: Final = "budget-exceeded"
INCOMPLETE_CACHE_MISS: Final = "replay-cache-miss"
INCOMPLETE_NOT_STARTED: Final = "not-started"
INCOMPLETE_ERROR: Final = "internal-error"
INCOMPLETE_INFRASTRUCTURE: Final = "infrastructure-fault"  # a call or the sandbox failed: says nothing about the candidate

# Drops that describe the infrastructure, not the candidate: never stored as final, so the next
# run retries them (after an outage, a missing key, a sandbox that would not start).
INFRASTRUCTURE: Final = frozenset({LLM_CALL_FAILED, GATE_ERROR})
