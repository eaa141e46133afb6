"""Errors of the LLM layer. Each names the role and task it happened in, so a rejected candidate
or a failed build says exactly which call went wrong and why.

They keep their constructor arguments in `args` (and rebuild from them in `__reduce__`) so they
survive pickling across process boundaries (Prefect task runners, process pools).
"""

from __future__ import annotations

from classforge_bench.pipeline.core.errors import ClassforgeError, InfrastructureError, InputError, IntegrityError


class LLMError(ClassforgeError):
    """Base of every error raised by the LLM client."""

    def __init__(self, role: str, task_id: str, reason: str) -> None:
        super().__init__(role, task_id, reason)
        self.role = role
        self.task_id = task_id
        self.reason = reason

    def __str__(self) -> str:
        return f"{type(self).__name__}: role={self.role} task={self.task_id}: {self.reason}"

    def __reduce__(self):
        return (type(self), self.args)


class LLMCallFailed(LLMError, InfrastructureError):
    """A live call failed for good: a non-retryable error, or retries exhausted.

    `attempts` is how many requests were sent; `status` the last HTTP status, if any.
    `transient` says whether running again later may succeed (an outage, a timeout, a rate limit,
    a missing or wrong key): an infrastructure fault, not a verdict on the content. False for
    errors a re-run repeats identically (a 400 for this request, a deterministic 5xx, a refusal).
    """

    def __init__(
        self, role: str, task_id: str, reason: str, attempts: int = 0, status: int | None = None, transient: bool = True
    ) -> None:
        super().__init__(role, task_id, reason)
        self.args = (role, task_id, reason, attempts, status, transient)
        self.attempts = attempts
        self.status = status
        self.transient = transient


class PromptTooLong(LLMError, InputError):
    """The prompt cannot fit the role's context window with room for an answer: not sent, or refused
    by the server (`context_length_exceeded`). A verdict on this request: a re-run fails the same way."""

    def __init__(
        self,
        role: str,
        task_id: str,
        prompt_tokens: int | None,
        context_window: int | None,
        max_tokens: int,
        source: str = "estimate",
    ) -> None:
        p = "?" if prompt_tokens is None else str(prompt_tokens)
        w = "?" if context_window is None else str(context_window)
        super().__init__(
            role,
            task_id,
            f"prompt of {p} tokens ({source}) + answer room of {max_tokens} tokens "
            f"does not fit the context window of {w} tokens",
        )
        self.args = (role, task_id, prompt_tokens, context_window, max_tokens, source)
        self.prompt_tokens = prompt_tokens
        self.context_window = context_window
        self.max_tokens = max_tokens
        self.source = source


class CacheMiss(LLMError):
    """Replay mode was asked for a response that was never recorded."""

    def __init__(self, role: str, task_id: str, key: str) -> None:
        reason = (
            f"no recorded response for cache key {key} in replay mode; the prompt, model or generation "
            "parameters differ from the recorded run, or it was never recorded (run in live mode to record it)"
        )
        super().__init__(role, task_id, reason)
        self.args = (role, task_id, key)
        self.key = key


class BudgetExceeded(LLMError):
    """The run has spent its budget; no further live calls are made (cached ones still are served)."""

    def __init__(self, role: str, task_id: str, spent_usd: float, budget_usd: float) -> None:
        super().__init__(role, task_id, f"budget reached: spent US${spent_usd:.6f} of US${budget_usd:.6f}")
        self.args = (role, task_id, spent_usd, budget_usd)
        self.spent_usd = spent_usd
        self.budget_usd = budget_usd


class UnpricedModel(LLMError, InputError):
    """A budget is set but the model has no entry in `llm.costs`, so its spend could not be counted."""

    def __init__(self, role: str, task_id: str, model: str) -> None:
        super().__init__(
            role, task_id, f"llm.budget_usd is set but llm.costs has no entry for model {model!r}; add one (0 if free)"
        )
        self.args = (role, task_id, model)
        self.model = model


class PromptError(InputError):
    """A prompt template is missing, malformed, or was rendered with wrong fields."""


class CacheImportError(InputError):
    """A cache export file is malformed or an entry does not hash to its key."""


class CacheCorrupt(IntegrityError):
    """A stored cache row cannot be read back (written by an incompatible version, or edited by hand)."""


class CacheWriteError(InfrastructureError, OSError):
    """Paid answers could not be written to the LLM cache (disk full, I/O error). One line, naming
    the cache and where the answers were saved instead; the next open of the same cache stores them."""

    def __init__(self, path: object, count: int, reason: str, spill: object | None) -> None:
        where = (
            f"saved to {spill}; the next run stores them in the cache once it has room (nothing is paid twice)"
            if spill
            else "could not be saved elsewhere either"
        )
        super().__init__(f"LLM cache {path}: {count} paid answer(s) could not be stored ({reason}); {where}")
        self.path = path
        self.count = count
        self.spill = spill

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self):
        return (type(self), (self.path, self.count, "see message", self.spill))
