"""GitHub as a harvest source: the domain x star-tier search matrix, through PyGithub.

For every domain, keyword group and star tier, one Search API query
(`<keywords OR-ed> language:python created:>=CUTOFF stars:<tier>`) is run. A query whose
`total_count` reaches the Search API's 1,000-result cap is split into `created:` date windows
(bisected) until each window is under the cap or is a single day. Results are deduplicated by URL
and keep every domain whose query found them.

Nothing here may hang or crash a harvest: PyGithub's own retry (which sleeps until a rate-limit
reset however far away) is switched off, and every wait goes through the injected `sleep`, bounded
by `GitHubConfig.max_rate_limit_wait_s` and `max_retries`. A query that cannot be completed is
recorded with a reason code in its `QueryStat`, and the search goes on with the next one.
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any, TypeVar

import requests
from github import Auth, Github, GithubException
from github.PaginatedList import PaginatedList
from github.Repository import RepositorySearchResult
from github.Requester import Requester
from pydantic import BaseModel, Field

from classforge_bench.pipeline.config import DOMAINS, GitHubConfig
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.errors import InfrastructureError
from classforge_bench.pipeline.core.funnel import FunnelReport, StageCounts
from classforge_bench.pipeline.core.records import Rejection, RepoRef
from classforge_bench.pipeline.harvest.domains import DOMAIN_KEYWORDS, search_query

T = TypeVar("T")
log = logging.getLogger(__name__)

STAGE = R.GITHUB_SEARCH
SORT, ORDER = "stars", "desc"  # most-starred first, so a truncated single-day window keeps the best
# GitHub rejects a query with more than five AND/OR/NOT operators (422), so a domain's ten keywords
# are searched in groups of at most six terms.
MAX_BOOLEAN_OPERATORS = 5
RESET_SLACK_S = 1.0  # X-RateLimit-Reset has one-second resolution; wait past the whole second
SERVER_ERROR_BACKOFF_S = 1.0  # first wait after a 5xx or network error, doubled per retry
MAX_SERVER_ERROR_BACKOFF_S = 30.0
_NOT_SPDX = {"NOASSERTION", "OTHER", ""}  # GitHub's values for "a licence file it could not identify"
_MAX_DETAIL = 300  # error bodies can be whole HTML pages


# ----------------------------------------------------------------------------------------------
# Records


class QueryStat(BaseModel):
    """One Search API query over one date window, for the funnel and the harvest report."""

    domain: str
    tier: str
    keywords: str
    query: str = Field(description="the q parameter exactly as sent")
    window_start: date
    window_end: date | None = Field(None, description="None: open-ended (created:>=window_start)")
    total_count: int | None = None
    incomplete_results: bool | None = None
    fetched: int = 0
    new: int = Field(0, description="repositories no earlier query had found")
    split: bool = Field(False, description="at the result cap, so replaced by two narrower windows")
    truncated: bool = Field(False, description="fewer results fetched than GitHub counted")
    error: str | None = Field(None, description="reason code when the query could not be completed")
    detail: str = ""
    skipped: int = Field(0, description="malformed hits that could not be read")
    retries: int = 0
    waited_s: float = 0.0


class GitHubSearchResult(BaseModel):
    repos: list[RepoRef] = Field(default_factory=list)
    queries: list[QueryStat] = Field(default_factory=list)
    stopped_early: bool = Field(False, description="max_repos was reached; the search stopped there")

    def failed(self) -> list[QueryStat]:
        return [q for q in self.queries if q.error is not None]

    def rejections(self) -> list[Rejection]:
        """Every query that could not be completed, as a rejection keyed by its query string."""
        return [
            Rejection(item_id=q.query, stage=STAGE, reason=q.error, detail=q.detail)
            for q in self.queries
            if q.error is not None
        ]

    def funnel(self) -> FunnelReport:
        """Search hits seen, unique repositories kept; repeats and unreadable hits dropped."""
        seen = sum(q.fetched for q in self.queries)
        skipped = sum(q.skipped for q in self.queries)
        kept = len(self.repos)
        counts = {"duplicate-url": seen - skipped - kept, "malformed": skipped}
        dropped = {reason: n for reason, n in counts.items() if n > 0}
        return FunnelReport(stages={STAGE: StageCounts(seen=seen, kept=kept, dropped=dropped)})


# ----------------------------------------------------------------------------------------------
# Query construction


@dataclass(frozen=True)
class DateWindow:
    """An inclusive range of creation dates; `end=None` is open-ended so that nothing created
    after the harvest's `today` (another time zone, a long run) falls outside every window."""

    start: date
    end: date | None = None

    def qualifier(self) -> str:
        return (
            f">={self.start.isoformat()}" if self.end is None else f"{self.start.isoformat()}..{self.end.isoformat()}"
        )

    def split(self, today: date) -> tuple[DateWindow, DateWindow] | None:
        """Two halves, or None for a single day (it cannot be narrowed further)."""
        last = self.end if self.end is not None else today
        if last <= self.start:
            return None
        mid = self.start + timedelta(days=(last - self.start).days // 2)
        return DateWindow(self.start, mid), DateWindow(mid + timedelta(days=1), self.end)


def keyword_groups(domain: str, max_operators: int = MAX_BOOLEAN_OPERATORS) -> list[str]:
    """The domain's keywords as OR-queries of at most `max_operators` ORs each, quoting as
    `domains.search_query` does (so the two never disagree)."""
    if domain not in DOMAIN_KEYWORDS:
        raise ValueError(f"unknown domain {domain!r}; known: {', '.join(DOMAINS)}")
    terms = search_query(domain).split(" OR ")
    size = max_operators + 1
    return [" OR ".join(terms[i : i + size]) for i in range(0, len(terms), size)]


def search_qualifiers(tier: str, window: DateWindow) -> dict[str, str]:
    return {"language": "python", "created": window.qualifier(), "stars": tier}


def query_string(keywords: str, qualifiers: dict[str, str]) -> str:
    """The q parameter as PyGithub's `search_repositories` assembles it."""
    return " ".join([keywords, *(f"{k}:{v}" for k, v in qualifiers.items())])


# ----------------------------------------------------------------------------------------------
# Results


def _url_key(url: str) -> str:
    # GitHub owner/repo names are case-insensitive; html and clone URLs differ only by ".git"
    return url.strip().lower().removesuffix("/").removesuffix(".git")


def _license_spdx(item: RepositorySearchResult) -> str | None:
    lic = item.license
    spdx = lic.spdx_id if lic is not None else None
    return None if spdx is None or spdx.upper() in _NOT_SPDX else spdx


def to_repo_ref(item: RepositorySearchResult, domain: str) -> RepoRef:
    """Only fields every search item carries are read: reading a missing one makes PyGithub
    fetch the whole repository (one extra API call per hit)."""
    return RepoRef(
        source="github",
        full_name=item.full_name,
        clone_url=item.clone_url,
        stars=item.stargazers_count,
        created_at=item.created_at,
        license_spdx=_license_spdx(item),
        default_branch=item.default_branch,
        domains=[domain],
    )


class _Collector:
    """Unique repositories by URL, in first-found order, with the domains of every finder."""

    def __init__(self, max_repos: int | None) -> None:
        self._by_key: dict[str, RepoRef] = {}
        self._max = max_repos

    @property
    def full(self) -> bool:
        return self._max is not None and len(self._by_key) >= self._max

    def add(self, ref: RepoRef, html_url: str) -> bool:
        """True when the repository is new."""
        keys = {_url_key(html_url), _url_key(ref.clone_url)}
        known = next((self._by_key[k] for k in keys if k in self._by_key), None)
        if known is not None:
            if ref.domains[0] not in known.domains:
                known.domains = sorted({*known.domains, *ref.domains}, key=DOMAINS.index)
            return False
        for k in keys:
            self._by_key[k] = ref
        return True

    def repos(self) -> list[RepoRef]:
        unique = {id(r): r for r in self._by_key.values()}  # one ref may sit under two keys
        return list(unique.values())


# ----------------------------------------------------------------------------------------------
# Errors, rate limits and retries


class QueryFailed(InfrastructureError):
    """A query gave up; `reason` is a stable code, `detail` says why for humans."""

    def __init__(self, reason: str, detail: str) -> None:
        super().__init__(f"{reason}: {detail}")
        self.reason = reason
        self.detail = detail


@dataclass(frozen=True)
class _Diagnosis:
    reason: str
    detail: str
    wait_s: float | None  # None: do not retry
    is_rate_limit: bool = False


def _message(exc: GithubException) -> str:
    data = exc.data
    if isinstance(data, dict):
        msg = data.get("message") or data.get("data") or ""
        errors = data.get("errors")
        if isinstance(errors, list):
            extra = "; ".join(str(e.get("message", e)) if isinstance(e, dict) else str(e) for e in errors)
            msg = f"{msg} ({extra})" if extra else msg
        return _clip(str(msg))
    return _clip(str(data or exc.message or ""))


def _clip(text: str) -> str:
    return text if len(text) <= _MAX_DETAIL else text[:_MAX_DETAIL] + "..."


def _number(value: Any) -> float | None:
    try:
        return float(value)
    except (TypeError, ValueError):
        return None


def _rate_limit_wait(exc: GithubException, now: float, attempt: int, cfg: GitHubConfig) -> float | None:
    """Seconds to wait before retrying, if this 403/429 is a rate limit; None if it is not.

    GitHub's documented order: honour Retry-After; else, with X-RateLimit-Remaining 0, wait until
    X-RateLimit-Reset; else, for a secondary limit, wait at least a minute, growing exponentially.
    """
    if exc.status not in (403, 429):
        return None
    headers = {k.lower(): v for k, v in (exc.headers or {}).items()}
    retry_after = _number(headers.get("retry-after"))
    if retry_after is not None:
        return max(retry_after, 0.0)
    reset = _number(headers.get("x-ratelimit-reset"))
    if str(headers.get("x-ratelimit-remaining")) == "0" and reset is not None:
        return max(reset - now, 0.0) + RESET_SLACK_S
    message = _message(exc)
    if Requester.isPrimaryRateLimitError(message) and reset is not None:
        return max(reset - now, 0.0) + RESET_SLACK_S
    if Requester.isRateLimitError(message) or exc.status == 429:
        return cfg.secondary_rate_wait_s * 2**attempt
    return None


def _backoff(attempt: int) -> float:
    return min(SERVER_ERROR_BACKOFF_S * 2**attempt, MAX_SERVER_ERROR_BACKOFF_S)


def diagnose(exc: Exception, now: float, attempt: int, cfg: GitHubConfig) -> _Diagnosis:
    """What a failed request means and whether (and how long) to wait before retrying it."""
    if isinstance(exc, requests.RequestException):
        return _Diagnosis("network-error", _clip(f"{type(exc).__name__}: {exc}"), _backoff(attempt))
    if not isinstance(exc, GithubException):
        # a response PyGithub could not digest (bad JSON, a next link to a foreign host)
        return _Diagnosis("bad-response", _clip(f"{type(exc).__name__}: {exc}"), None)
    # PyGithub raises RateLimitExceededException only for a 403 naming the limit; a 429 or a bare
    # 403 with rate-limit headers arrives as a plain GithubException, so the headers decide
    detail = f"HTTP {exc.status}: {_message(exc)}"
    wait = _rate_limit_wait(exc, now, attempt, cfg)
    if wait is not None:
        return _Diagnosis("rate-limited", detail, wait, is_rate_limit=True)
    if exc.status == 422:
        capped = "only the first" in _message(exc).lower()
        return _Diagnosis("result-cap" if capped else "invalid-query", detail, None)
    if exc.status == 401:
        return _Diagnosis("bad-credentials", detail, None)
    if exc.status >= 500:
        return _Diagnosis("server-error", detail, _backoff(attempt))
    return _Diagnosis(f"http-{exc.status}", detail, None)


# Exceptions a search request can raise that mean "this query failed", not "classforge is broken".
_REQUEST_ERRORS = (GithubException, requests.RequestException, ValueError, AssertionError)


class _Retrier:
    """Runs one request, waiting and retrying within the configured bounds."""

    def __init__(self, cfg: GitHubConfig, sleep: Callable[[float], None], clock: Callable[[], float]) -> None:
        self.cfg, self.sleep, self.clock = cfg, sleep, clock

    def call(self, fn: Callable[[], T], stat: QueryStat, before_retry: Callable[[], None] = lambda: None) -> T:
        attempt = 0
        while True:
            try:
                return fn()
            except _REQUEST_ERRORS as exc:
                diag = diagnose(exc, self.clock(), attempt, self.cfg)
            if diag.wait_s is None:
                raise QueryFailed(diag.reason, diag.detail)
            if diag.is_rate_limit and diag.wait_s > self.cfg.max_rate_limit_wait_s:
                raise QueryFailed(
                    "rate-limited",
                    f"{diag.detail} (reset in {diag.wait_s:.0f}s exceeds max_rate_limit_wait_s={self.cfg.max_rate_limit_wait_s:g})",
                )
            if attempt >= self.cfg.max_retries:
                raise QueryFailed(diag.reason, f"{diag.detail} (gave up after {attempt} retries)")
            attempt += 1
            stat.retries += 1
            stat.waited_s += diag.wait_s
            log.info("GitHub search %s (%s); retrying in %.0fs: %s", diag.reason, diag.detail, diag.wait_s, stat.query)
            self.sleep(diag.wait_s)
            before_retry()


class _Cursor:
    """The items of one search, one at a time. PaginatedList keeps its next-page URL until a page
    arrives, so after a failed page a fresh iterator that skips what was consumed resumes at the
    same page (following GitHub's Link headers) without refetching anything."""

    def __init__(self, results: PaginatedList[RepositorySearchResult]) -> None:
        self.results = results
        self._consumed = 0
        self._it: Iterator[RepositorySearchResult] = iter(results)

    def next(self) -> RepositorySearchResult | None:
        item = next(self._it, None)
        if item is not None:
            self._consumed += 1
        return item

    def resume(self) -> None:
        self._it = itertools.islice(iter(self.results), self._consumed, None)


# ----------------------------------------------------------------------------------------------
# The search


class _Search:
    def __init__(self, gh: Github, cfg: GitHubConfig, cutoff: date, today: date, retrier: _Retrier) -> None:
        self.gh, self.cfg, self.cutoff, self.today, self.retrier = gh, cfg, cutoff, today, retrier
        self.collector = _Collector(cfg.max_repos)
        self.stats: list[QueryStat] = []

    def run_query(self, domain: str, keywords: str, tier: str) -> None:
        """One matrix cell: windows are narrowed depth-first, oldest first."""
        pending = [DateWindow(self.cutoff)]
        while pending and not self.collector.full:
            window = pending.pop()
            halves = self._run_window(domain, keywords, tier, window)
            if halves is not None:
                pending += [halves[1], halves[0]]

    def _run_window(
        self, domain: str, keywords: str, tier: str, window: DateWindow
    ) -> tuple[DateWindow, DateWindow] | None:
        qualifiers = search_qualifiers(tier, window)
        stat = QueryStat(
            domain=domain,
            tier=tier,
            keywords=keywords,
            query=query_string(keywords, qualifiers),
            window_start=window.start,
            window_end=window.end,
        )
        self.stats.append(stat)
        results = self.gh.search_repositories(keywords, sort=SORT, order=ORDER, **qualifiers)
        cursor = _Cursor(results)
        try:
            item = self.retrier.call(cursor.next, stat, cursor.resume)
            # the first page carried total_count, so these read cached values, not the network
            stat.total_count = self.retrier.call(lambda: results.totalCount, stat)
            stat.incomplete_results = self.retrier.call(lambda: results.incomplete_results, stat)
            if (stat.total_count or 0) >= self.cfg.max_results_per_query:
                halves = window.split(self.today)
                if halves is not None:
                    # this page is dropped unread: the narrower windows return the same hits
                    stat.split = True
                    return halves
            self._collect(item, cursor, domain, stat)
        except QueryFailed as failure:
            stat.error, stat.detail = failure.reason, f"{stat.query}: {failure.detail}"
            log.warning("GitHub search query failed, continuing with the next: %s", stat.detail)
        if stat.error is None and not self.collector.full and stat.total_count is not None:
            stat.truncated = stat.fetched < stat.total_count
        return None

    def _collect(self, item: RepositorySearchResult | None, cursor: _Cursor, domain: str, stat: QueryStat) -> None:
        while item is not None:
            stat.fetched += 1
            try:
                ref = to_repo_ref(item, domain)
                html_url = item.html_url
            except _REQUEST_ERRORS + (KeyError, TypeError) as exc:
                # one malformed hit must not cost the rest of the query
                stat.skipped += 1
                stat.detail = f"skipped a malformed result: {type(exc).__name__}: {exc}"
            else:
                stat.new += int(self.collector.add(ref, html_url))
            # stop before asking for a page GitHub would refuse (past the cap) or we do not need
            if self.collector.full or stat.fetched >= self.cfg.max_results_per_query:
                return
            item = self.retrier.call(cursor.next, stat, cursor.resume)


def _github_client(cfg: GitHubConfig) -> Github:
    auth = Auth.Token(cfg.token.get_secret_value()) if cfg.token is not None else None
    return Github(
        auth=auth,
        base_url=cfg.base_url,
        per_page=cfg.per_page,
        # retry=None disables urllib3 retries: GithubRetry would sleep (for real, possibly until
        # a far-away reset) where we cannot bound or test it; _Retrier does it through `sleep`.
        retry=None,
        timeout=cfg.timeout_s,
        # PyGithub's pacing also sleeps for real; the search limit is handled on 403/429 instead
        seconds_between_requests=None,
        user_agent="classforge",
    )


class GitHubUnavailable(InfrastructureError):
    """GitHub cannot be searched at all (no token, unreachable, token refused): one line saying why."""


PREFLIGHT_TIMEOUT_S = 10


def preflight(cfg: GitHubConfig) -> None:
    """One short request before a search that would otherwise spend minutes finding nothing.

    `/rate_limit` costs no rate limit and needs the token, so it proves both reachability and
    credentials. Raises GitHubUnavailable with a one-line reason.
    """
    if cfg.token is None or not cfg.token.get_secret_value():
        raise GitHubUnavailable(
            "GITHUB_TOKEN is not set: the GitHub search needs a token "
            "(export GITHUB_TOKEN=..., or harvest local sources with --no-github)"
        )
    quick = cfg.model_copy(update={"timeout_s": min(cfg.timeout_s, PREFLIGHT_TIMEOUT_S)})
    try:
        with _github_client(quick) as gh:
            gh.get_rate_limit()
    except GithubException as exc:
        reason = "rejected GITHUB_TOKEN" if exc.status == 401 else f"answered {exc.status}"
        raise GitHubUnavailable(f"GitHub API at {cfg.base_url} {reason}: {_clip(_message(exc))}") from exc
    except _REQUEST_ERRORS as exc:
        raise GitHubUnavailable(
            f"GitHub API at {cfg.base_url} is unreachable: {type(exc).__name__}: {_clip(' '.join(str(exc).split()))}"
        ) from exc


def search_github(
    cfg: GitHubConfig,
    cutoff: date,
    *,
    domains: Sequence[str] = DOMAINS,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], float] = time.time,
    today: date | None = None,
) -> GitHubSearchResult:
    """Run the domain x keyword-group x star-tier search matrix; see the module docstring."""
    for domain in domains:
        keyword_groups(domain)  # fail fast on an unknown domain, before any request
    today = today or datetime.fromtimestamp(clock(), tz=UTC).date()
    with _github_client(cfg) as gh:
        search = _Search(gh, cfg, cutoff, today, _Retrier(cfg, sleep, clock))
        for domain in domains:
            for keywords in keyword_groups(domain):
                for tier in cfg.star_tiers:
                    if search.collector.full:
                        break
                    search.run_query(domain, keywords, tier)
    return GitHubSearchResult(repos=search.collector.repos(), queries=search.stats, stopped_early=search.collector.full)
