"""A loopback HTTP server that answers `GET /search/repositories` like the GitHub REST API.

It filters an in-memory catalogue of fake repositories with the query's keywords and qualifiers
(`language:`, `created:`, `stars:`), sorts, paginates (`per_page`, `page`, a `Link` header whose
URLs use the server's own host and port), enforces the 1,000-result cap and GitHub's query limits
(five AND/OR/NOT operators, 256 characters), and can be scripted to answer the next requests with
a primary or secondary rate limit, a 422, a 500 or a slow response. Every request is recorded.

    with FakeGitHub([fake_repo("octo/ledger", "2025-03-01", 250, "banking ledger")]) as api:
        search_github(GitHubConfig(base_url=api.base_url), date(2025, 1, 1))
        assert api.search_queries()
"""

from __future__ import annotations

import json
import math
import re
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

SEARCH_DOCS = "https://docs.github.com/v3/search/"
RATE_LIMIT_DOCS = "https://docs.github.com/rest/overview/rate-limits-for-the-rest-api"
CAP_MESSAGE = "Only the first 1000 search results are available"
PRIMARY_MESSAGE = (
    "API rate limit exceeded for user ID 1. If you reach out to GitHub Support for help, "
    "please include the request ID 0000:FAKE:0000."
)
SECONDARY_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID 0000:FAKE:0001."
)
_LICENSES = {
    "MIT": ("mit", "MIT License"),
    "Apache-2.0": ("apache-2.0", "Apache License 2.0"),
    "BSD-3-Clause": ("bsd-3-clause", 'BSD 3-Clause "New" or "Revised" License'),
    "GPL-3.0": ("gpl-3.0", "GNU General Public License v3.0"),
    "NOASSERTION": ("other", "Other"),
}


# ----------------------------------------------------------------------------------------------
# Catalogue


@dataclass
class FakeRepo:
    full_name: str
    created_at: datetime
    stars: int
    description: str = ""
    topics: list[str] = field(default_factory=list)
    language: str | None = "Python"
    license_spdx: str | None = "MIT"  # "NOASSERTION" as GitHub reports an unrecognised licence
    default_branch: str = "main"
    forks: int = 0
    id: int = 0
    omit: tuple[str, ...] = ()  # keys left out of the search hit (a malformed answer)
    clone_url: str | None = None  # e.g. a file:// URL of a local fixture repository, for end-to-end harvests

    def matches_text(self, term: str) -> bool:
        # GitHub's default scope is name, description and topics
        haystack = " ".join(
            [self.full_name.replace("-", " ").replace("_", " "), self.description, *self.topics]
        ).lower()
        return term.lower() in haystack

    def item(self, api: str) -> dict[str, Any]:
        """A search hit as GitHub returns it; every API URL points back at this server."""
        return {k: v for k, v in self._item(api).items() if k not in self.omit}

    def _item(self, api: str) -> dict[str, Any]:
        owner, name = self.full_name.split("/", 1)
        stamp = self.created_at.strftime("%Y-%m-%dT%H:%M:%SZ")
        html = f"https://github.com/{self.full_name}"
        return {
            "id": self.id,
            "node_id": f"R_fake{self.id}",
            "name": name,
            "full_name": self.full_name,
            "private": False,
            "owner": {
                "login": owner,
                "id": 1000 + self.id,
                "node_id": f"U_fake{self.id}",
                "avatar_url": f"https://avatars.githubusercontent.com/u/{1000 + self.id}?v=4",
                "url": f"{api}/users/{owner}",
                "html_url": f"https://github.com/{owner}",
                "type": "User",
                "site_admin": False,
            },
            "html_url": html,
            "description": self.description or None,
            "fork": False,
            "url": f"{api}/repos/{self.full_name}",
            "created_at": stamp,
            "updated_at": stamp,
            "pushed_at": stamp,
            "git_url": f"git://github.com/{self.full_name}.git",
            "ssh_url": f"git@github.com:{self.full_name}.git",
            "clone_url": self.clone_url or f"{html}.git",
            "svn_url": html,
            "homepage": None,
            "size": 120,
            "stargazers_count": self.stars,
            "watchers_count": self.stars,
            "language": self.language,
            "has_issues": True,
            "forks_count": self.forks,
            "archived": False,
            "disabled": False,
            "open_issues_count": 0,
            "license": self._license(api),
            "allow_forking": True,
            "is_template": False,
            "topics": list(self.topics),
            "visibility": "public",
            "forks": self.forks,
            "open_issues": 0,
            "watchers": self.stars,
            "default_branch": self.default_branch,
            "score": 1.0,
        }

    def _license(self, api: str) -> dict[str, Any] | None:
        if self.license_spdx is None:
            return None
        key, name = _LICENSES.get(self.license_spdx, (self.license_spdx.lower(), self.license_spdx))
        return {
            "key": key,
            "name": name,
            "spdx_id": self.license_spdx,
            "url": f"{api}/licenses/{key}",
            "node_id": f"L_{key}",
        }


_ids = iter(range(1, 10**9))


def fake_repo(full_name: str, created: str | date | datetime, stars: int, description: str = "", **kw: Any) -> FakeRepo:
    """A catalogue entry; `created` may be an ISO date, a date or a datetime (UTC noon by default)."""
    if isinstance(created, str):
        created = date.fromisoformat(created)
    if not isinstance(created, datetime):
        created = datetime(created.year, created.month, created.day, 12, tzinfo=UTC)
    kw.setdefault("id", next(_ids))
    return FakeRepo(full_name=full_name, created_at=created, stars=stars, description=description, **kw)


# ----------------------------------------------------------------------------------------------
# Query parsing


class QueryError(ValueError):
    """The query is one GitHub would answer with 422 Validation Failed."""


_TOKEN = re.compile(r'"[^"]*"|\S+')
_QUALIFIER = re.compile(r"^([a-z]+):(.+)$")
_OPERATORS = {"AND", "OR", "NOT"}


def _parse_date(text: str) -> date:
    try:
        return date.fromisoformat(text[:10])
    except ValueError as exc:
        raise QueryError(f"invalid date {text!r}") from exc


def _parse_int(text: str) -> int:
    if not text.isdigit():
        raise QueryError(f"invalid number {text!r}")
    return int(text)


def parse_range(spec: str, parse: Callable[[str], Any]) -> Callable[[Any], bool]:
    """GitHub's range syntax: `a..b`, `a..*`, `*..b`, `>a`, `>=a`, `<a`, `<=a`, or an exact value."""
    if ".." in spec:
        lo, hi = spec.split("..", 1)
        low = None if lo == "*" else parse(lo)
        high = None if hi == "*" else parse(hi)
        return lambda v: (low is None or v >= low) and (high is None or v <= high)
    for op, test in (
        (">=", lambda v, b: v >= b),
        ("<=", lambda v, b: v <= b),
        (">", lambda v, b: v > b),
        ("<", lambda v, b: v < b),
    ):
        if spec.startswith(op):
            bound = parse(spec[len(op) :])
            return lambda v, bound=bound, test=test: test(v, bound)
    exact = parse(spec)
    return lambda v: v == exact


@dataclass
class ParsedQuery:
    clauses: list[list[tuple[bool, str]]]  # OR of ANDs of (negated, term)
    qualifiers: dict[str, str]
    predicates: list[Callable[[FakeRepo], bool]]

    def matches(self, repo: FakeRepo) -> bool:
        if not all(p(repo) for p in self.predicates):
            return False
        if not any(self.clauses):
            return True
        return any(all(repo.matches_text(term) != neg for neg, term in clause) for clause in self.clauses if clause)


def parse_query(q: str) -> ParsedQuery:
    tokens = _TOKEN.findall(q)
    operators = sum(1 for t in tokens if t in _OPERATORS)
    if operators > 5:
        raise QueryError("The search contains more than 5 AND / OR / NOT operators.")
    clauses: list[list[tuple[bool, str]]] = [[]]
    qualifiers: dict[str, str] = {}
    predicates: list[Callable[[FakeRepo], bool]] = []
    negate = False
    text_length = 0
    for token in tokens:
        if token == "OR":
            clauses.append([])
        elif token == "NOT":
            negate = True
        elif token == "AND":
            continue
        elif not token.startswith('"') and (m := _QUALIFIER.match(token)):
            name, value = m.groups()
            qualifiers[name] = value
            predicates.append(_qualifier_predicate(name, value))
        else:
            term = token.strip('"')
            text_length += len(term) + 1
            clauses[-1].append((negate, term))
            negate = False
    if text_length > 256:
        raise QueryError("The search is longer than 256 characters.")
    return ParsedQuery(clauses, qualifiers, predicates)


def _qualifier_predicate(name: str, value: str) -> Callable[[FakeRepo], bool]:
    if name == "language":
        return lambda r: (r.language or "").lower() == value.lower()
    if name == "created":
        test = parse_range(value, _parse_date)
        return lambda r: test(r.created_at.astimezone(UTC).date())
    if name == "stars":
        test = parse_range(value, _parse_int)
        return lambda r: test(r.stars)
    # the real API treats unknown qualifiers as text; the fake is strict so typos show up in tests
    raise QueryError(f"unsupported qualifier {name}:{value}")


# ----------------------------------------------------------------------------------------------
# Scripted responses and recorded requests


@dataclass
class Canned:
    status: int
    body: Any
    headers: dict[str, str] = field(default_factory=dict)
    delay_s: float = 0.0  # sleep before answering (for client timeouts)
    passthrough: bool = False  # after the delay, answer normally


@dataclass(frozen=True)
class RecordedRequest:
    method: str
    path: str
    params: dict[str, str]
    headers: dict[str, str]

    @property
    def q(self) -> str | None:
        return self.params.get("q")


class FakeClock:
    """A clock the code under test reads and sleeps on: `sleep` records and advances time."""

    def __init__(self, start: float = 1_750_000_000.0) -> None:
        self.now = start
        self.sleeps: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.now += seconds


# ----------------------------------------------------------------------------------------------
# The server


class FakeGitHub:
    """Context manager: starts on 127.0.0.1 at an ephemeral port, stops on exit."""

    def __init__(
        self,
        repos: Iterable[FakeRepo] = (),
        *,
        result_cap: int = 1000,
        clock: Callable[[], float] = time.time,
        search_limit: int = 30,
        enforce_rate_limit: bool = False,
        link_base: str | None = None,
        token: str | None = None,
    ) -> None:
        self.token = token  # when set, any other (or no) token gets 401 Bad credentials, as GitHub answers
        self.catalogue: list[FakeRepo] = list(repos)
        self.result_cap = result_cap
        self.clock = clock
        self.search_limit = search_limit
        self.enforce_rate_limit = enforce_rate_limit  # answer 403 after `search_limit` searches a minute
        self.link_base = link_base  # put another host in Link headers (a misbehaving proxy)
        self._lock = threading.Lock()
        self._script: list[Canned] = []
        self._query_rules: list[tuple[str, Canned]] = []
        self._requests: list[RecordedRequest] = []
        self._window_start: float | None = None
        self._window_used = 0
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle ------------------------------------------------------------------------------

    def __enter__(self) -> FakeGitHub:
        server = _QuietServer(("127.0.0.1", 0), _handler_for(self))
        server.daemon_threads = True
        server.block_on_close = False
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def base_url(self) -> str:
        assert self._server is not None, "use FakeGitHub as a context manager"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    # -- catalogue and scripting ----------------------------------------------------------------

    def add(self, *repos: FakeRepo) -> None:
        with self._lock:
            self.catalogue.extend(repos)

    def _push(self, canned: Canned, n: int, after: int) -> None:
        # `after` searches are answered normally first, so a failure can land mid-pagination
        with self._lock:
            self._script.extend(Canned(200, None, passthrough=True) for _ in range(after))
            self._script.extend(canned for _ in range(n))

    def rate_limit_next(self, n: int = 1, *, reset_in: float = 60.0, status: int = 403, after: int = 0) -> None:
        """The next `n` searches (after `after` normal ones) get GitHub's primary rate-limit answer,
        with X-RateLimit-Reset `reset_in` seconds after the time of this call."""
        reset = str(int(self.clock() + reset_in))
        headers = {
            "X-RateLimit-Limit": str(self.search_limit),
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Used": str(self.search_limit),
            "X-RateLimit-Reset": reset,
            "X-RateLimit-Resource": "search",
        }
        self._push(
            Canned(
                status,
                {"message": PRIMARY_MESSAGE, "documentation_url": RATE_LIMIT_DOCS, "status": str(status)},
                headers,
            ),
            n,
            after,
        )

    def secondary_rate_limit_next(self, n: int = 1, *, retry_after: int | None = 60, after: int = 0) -> None:
        headers = {"Retry-After": str(retry_after)} if retry_after is not None else {}
        body = {"message": SECONDARY_MESSAGE, "documentation_url": RATE_LIMIT_DOCS, "status": "403"}
        self._push(Canned(403, body, headers), n, after)

    def error_next(self, n: int = 1, *, status: int = 500, body: Any = None, after: int = 0) -> None:
        """`body` may be bytes (an HTML error page) or anything JSON-serialisable."""
        body = {"message": "Server Error"} if body is None else body
        self._push(Canned(status, body), n, after)

    def delay_next(self, n: int = 1, *, seconds: float, after: int = 0) -> None:
        self._push(Canned(200, None, delay_s=seconds, passthrough=True), n, after)

    def reject_query(self, contains: str, *, status: int = 422, message: str = "Validation Failed") -> None:
        """Every search whose q contains `contains` gets a 422 (or `status`), every time."""
        body = {
            "message": message,
            "errors": [
                {
                    "resource": "Search",
                    "field": "q",
                    "code": "invalid",
                    "message": f"The listed users and repositories cannot be searched: {contains}",
                }
            ],
            "documentation_url": SEARCH_DOCS,
            "status": str(status),
        }
        with self._lock:
            self._query_rules.append((contains, Canned(status, body)))

    # -- inspection -----------------------------------------------------------------------------

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    def search_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == "/search/repositories"]

    def search_queries(self) -> list[str]:
        return [r.q or "" for r in self.search_requests()]

    # -- answering ------------------------------------------------------------------------------

    def _record(self, req: RecordedRequest) -> None:
        with self._lock:
            self._requests.append(req)

    def _next_canned(self, q: str) -> Canned | None:
        with self._lock:
            if self._script:
                return self._script.pop(0)
            return next((c for needle, c in self._query_rules if needle in q), None)

    def _rate_headers(self) -> tuple[dict[str, str], bool]:
        """Search rate-limit headers, and whether this request is over the limit."""
        with self._lock:
            now = self.clock()
            if self._window_start is None or now >= self._window_start + 60:
                self._window_start, self._window_used = now, 0
            self._window_used += 1
            used = self._window_used
            reset = math.ceil(self._window_start + 60)
        over = self.enforce_rate_limit and used > self.search_limit
        return {
            "X-RateLimit-Limit": str(self.search_limit),
            "X-RateLimit-Remaining": str(max(self.search_limit - used, 0)),
            "X-RateLimit-Used": str(min(used, self.search_limit)),
            "X-RateLimit-Reset": str(reset),
            "X-RateLimit-Resource": "search",
        }, over

    def answer_search(self, params: dict[str, str]) -> Canned:
        q = params.get("q", "")
        canned = self._next_canned(q)
        if canned is not None and canned.delay_s:
            time.sleep(canned.delay_s)
        if canned is not None and not canned.passthrough:
            return canned
        headers, over = self._rate_headers()
        if over:
            body = {"message": PRIMARY_MESSAGE, "documentation_url": RATE_LIMIT_DOCS, "status": "403"}
            return Canned(403, body, headers)
        try:
            page, per_page = _page_params(params)
            parsed = parse_query(q)
        except QueryError as exc:
            body = {
                "message": "Validation Failed",
                "documentation_url": SEARCH_DOCS,
                "status": "422",
                "errors": [{"resource": "Search", "field": "q", "code": "invalid", "message": str(exc)}],
            }
            return Canned(422, body, headers)
        hits = self._search(parsed, params.get("sort"), params.get("order", "desc"))
        reachable = min(len(hits), self.result_cap)
        start = (page - 1) * per_page
        if start >= self.result_cap:
            message = CAP_MESSAGE.replace("1000", str(self.result_cap))
            return Canned(422, {"message": message, "documentation_url": SEARCH_DOCS, "status": "422"}, headers)
        api = self.base_url
        items = [r.item(api) for r in hits[start : min(start + per_page, reachable)]]
        last_page = max(1, math.ceil(reachable / per_page))
        link = _link_header(self.link_base or api, params, page, last_page)
        if link:
            headers["Link"] = link
        return Canned(200, {"total_count": len(hits), "incomplete_results": False, "items": items}, headers)

    def _search(self, parsed: ParsedQuery, sort: str | None, order: str) -> list[FakeRepo]:
        with self._lock:
            hits = [r for r in self.catalogue if parsed.matches(r)]
        keys: dict[str | None, Callable[[FakeRepo], Any]] = {
            "stars": lambda r: r.stars,
            "forks": lambda r: r.forks,
            "updated": lambda r: r.created_at,
        }
        key = keys.get(sort)
        hits.sort(key=lambda r: r.id)  # "best match": stable by id
        if key is not None:
            hits.sort(key=key, reverse=(order != "asc"))
        return hits

    def answer_rate_limit(self) -> Canned:
        with self._lock:
            used = self._window_used
            reset = int((self._window_start or self.clock()) + 60)
        core = {"limit": 5000, "used": 0, "remaining": 5000, "reset": int(self.clock()) + 3600}
        search = {
            "limit": self.search_limit,
            "used": used,
            "remaining": max(self.search_limit - used, 0),
            "reset": reset,
        }
        return Canned(200, {"resources": {"core": core, "search": search, "graphql": core}, "rate": core})


def _page_params(params: dict[str, str]) -> tuple[int, int]:
    try:
        page = int(params.get("page", "1"))
        per_page = int(params.get("per_page", "30"))
    except ValueError as exc:
        raise QueryError(f"invalid paging parameters: {exc}") from exc
    if page < 1 or per_page < 1:
        raise QueryError("page and per_page must be positive")
    return page, min(per_page, 100)


def _link_header(api: str, params: dict[str, str], page: int, last_page: int) -> str:
    def url(n: int) -> str:
        return f"{api}/search/repositories?{urlencode({**params, 'page': str(n)})}"

    links = []
    if page < last_page:
        links += [f'<{url(page + 1)}>; rel="next"', f'<{url(last_page)}>; rel="last"']
    if page > 1:
        links += [f'<{url(page - 1)}>; rel="prev"', f'<{url(1)}>; rel="first"']
    return ", ".join(links)


class _QuietServer(ThreadingHTTPServer):
    def handle_error(self, request: Any, client_address: Any) -> None:
        # a client that timed out has hung up before a delayed answer; that is the point of the delay
        pass


def _handler_for(api: FakeGitHub) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"  # keep-alive, as PyGithub's session expects
        disable_nagle_algorithm = True  # headers and body go out in two writes; don't stall 40 ms on each

        def do_GET(self) -> None:  # noqa: N802 (http.server's naming)
            parts = urlsplit(self.path)
            params = {k: v[-1] for k, v in parse_qs(parts.query, keep_blank_values=True).items()}
            api._record(RecordedRequest("GET", parts.path, params, {k.lower(): v for k, v in self.headers.items()}))
            if api.token is not None and self.headers.get("Authorization") != f"token {api.token}":
                self._send(
                    Canned(
                        401,
                        {
                            "message": "Bad credentials",
                            "documentation_url": "https://docs.github.com/rest",
                            "status": "401",
                        },
                    )
                )
            elif parts.path == "/search/repositories":
                self._send(api.answer_search(params))
            elif parts.path == "/rate_limit":
                self._send(api.answer_rate_limit())
            else:
                self._send(Canned(404, {"message": "Not Found", "documentation_url": "https://docs.github.com/rest"}))

        def _send(self, canned: Canned) -> None:
            body = canned.body if isinstance(canned.body, bytes) else json.dumps(canned.body).encode()
            self.send_response(canned.status)
            kind = "text/html" if isinstance(canned.body, bytes) else "application/json"
            self.send_header("Content-Type", f"{kind}; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            for name, value in canned.headers.items():
                self.send_header(name, value)
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:  # keep test output clean
            pass

    return Handler


def dated_catalogue(
    n: int, start: date, days: int, *, keyword: str = "banking", stars: int = 200, prefix: str = "bulk"
) -> list[FakeRepo]:
    """`n` matching repositories spread evenly over `days` days from `start` (for cap splitting)."""
    return [
        fake_repo(
            f"{prefix}/{keyword.replace(' ', '-')}-{i:05d}",
            start + timedelta(days=i * days // n),
            stars + i % 50,
            f"a {keyword} project number {i}",
        )
        for i in range(n)
    ]
