"""The PyGithub search path, against a loopback server that answers like the GitHub API.

No test reaches the network: an autouse guard refuses any connection or name lookup that is not
loopback, and every test checks what the fake server saw.
"""

from __future__ import annotations

import json
import socket
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import pytest
from github import Github
from pydantic import SecretStr

from classforge_bench.pipeline.config import DOMAINS, GitHubConfig
from classforge_bench.pipeline.harvest.domains import DOMAIN_KEYWORDS, search_query
from classforge_bench.pipeline.harvest.github_source import (
    DateWindow,
    GitHubSearchResult,
    keyword_groups,
    search_github,
)
from tests.fakes.github_api import CAP_MESSAGE, FakeClock, FakeGitHub, dated_catalogue, fake_repo

pytestmark = pytest.mark.timeout(20)

CUTOFF = date(2025, 1, 1)
TODAY = date(2025, 11, 1)
FINANCE, NETWORK = "Finance & E-commerce", "Network & Web"
TIERS = ["100..500", "500..1000", ">1000"]


# ----------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to resolve or connect to a non-loopback address fails the test loudly."""
    real_connect, real_getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def connect(self: socket.socket, address: Any) -> Any:
        if isinstance(address, tuple) and address[0] not in ("127.0.0.1", "::1", "localhost"):
            raise AssertionError(f"test tried to reach the network: {address!r}")
        return real_connect(self, address)

    def getaddrinfo(host: Any, *args: Any, **kw: Any) -> Any:
        if host not in ("127.0.0.1", "::1", "localhost", None):
            raise AssertionError(f"test tried to resolve {host!r}")
        return real_getaddrinfo(host, *args, **kw)

    monkeypatch.setattr(socket.socket, "connect", connect)
    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def api(clock: FakeClock) -> Iterator[FakeGitHub]:
    with FakeGitHub(clock=clock) as server:
        yield server


def run(
    api: FakeGitHub, clock: FakeClock, domains: list[str] | None = None, today: date = TODAY, **cfg: Any
) -> GitHubSearchResult:
    config = GitHubConfig(base_url=api.base_url, **cfg)
    return search_github(config, CUTOFF, domains=domains or [FINANCE], sleep=clock.sleep, clock=clock, today=today)


def names(result: GitHubSearchResult) -> list[str]:
    return sorted(r.full_name for r in result.repos)


def get_json(url: str) -> tuple[int, dict[str, str], Any]:
    try:
        with urllib.request.urlopen(url, timeout=60) as resp:
            return resp.status, dict(resp.headers), json.loads(resp.read())
    except urllib.error.HTTPError as err:
        return err.code, dict(err.headers), json.loads(err.read())


# ----------------------------------------------------------------------------------------------
# Query construction


def test_queries_cover_keywords_language_created_and_star_tiers(api: FakeGitHub, clock: FakeClock) -> None:
    result = run(api, clock, per_page=50)

    groups = keyword_groups(FINANCE)
    expected = [f"{g} language:python created:>=2025-01-01 stars:{t}" for g in groups for t in TIERS]
    assert api.search_queries() == expected
    assert [q.query for q in result.queries] == expected
    assert [(q.tier, q.error) for q in result.queries] == [(t, None) for _ in groups for t in TIERS]
    for req in api.search_requests():
        assert (req.params["sort"], req.params["order"], req.params["per_page"]) == ("stars", "desc", "50")
    # every keyword is searched exactly once, and no group breaks GitHub's five-operator rule
    terms = [t for g in groups for t in g.split(" OR ")]
    assert terms == search_query(FINANCE).split(" OR ")
    assert len(terms) == len(DOMAIN_KEYWORDS[FINANCE]) and '"shopping cart"' in terms
    assert all(g.count(" OR ") <= 5 for d in DOMAINS for g in keyword_groups(d))


def test_ungrouped_keyword_query_is_rejected_like_github_does(api: FakeGitHub) -> None:
    # why keyword_groups exists: all ten keywords OR-ed use nine operators, and GitHub answers 422
    q = f"{search_query(FINANCE)} language:python"
    status, _, body = get_json(f"{api.base_url}/search/repositories?{urllib.parse.urlencode({'q': q})}")
    assert status == 422
    assert "more than 5" in body["errors"][0]["message"]


def test_unknown_domain_fails_before_any_request(api: FakeGitHub, clock: FakeClock) -> None:
    with pytest.raises(ValueError, match="unknown domain"):
        run(api, clock, domains=["Astrology"])
    assert api.requests == []


def test_date_windows() -> None:
    assert DateWindow(CUTOFF).qualifier() == ">=2025-01-01"
    assert DateWindow(CUTOFF, date(2025, 1, 4)).qualifier() == "2025-01-01..2025-01-04"
    assert DateWindow(CUTOFF).split(date(2025, 1, 8)) == (
        DateWindow(CUTOFF, date(2025, 1, 4)),
        DateWindow(date(2025, 1, 5)),
    )
    assert DateWindow(CUTOFF, date(2025, 1, 2)).split(TODAY) == (
        DateWindow(CUTOFF, CUTOFF),
        DateWindow(date(2025, 1, 2), date(2025, 1, 2)),
    )
    assert DateWindow(CUTOFF, CUTOFF).split(TODAY) is None
    assert DateWindow(TODAY).split(TODAY) is None  # open-ended but starting today: a single day


# ----------------------------------------------------------------------------------------------
# Pagination, dedup, record fields


def test_pagination_follows_link_headers_on_the_servers_own_port(api: FakeGitHub, clock: FakeClock) -> None:
    api.add(*[fake_repo(f"octo/bank-{i}", "2025-02-01", 200 + i, "banking toolkit") for i in range(5)])

    result = run(api, clock, per_page=2)

    assert names(result) == [f"octo/bank-{i}" for i in range(5)]
    first = next(q for q in result.queries if q.tier == "100..500" and q.keywords.startswith("finance"))
    assert (first.total_count, first.fetched, first.new, first.truncated) == (5, 5, 5, False)
    pages = [r.params.get("page") for r in api.search_requests() if r.q == first.query]
    assert pages == [None, "2", "3"]  # page 1 from PyGithub, the rest from the Link header
    port = api.base_url.rsplit(":", 1)[1]
    assert all(r.headers["host"] == f"127.0.0.1:{port}" for r in api.requests)


def test_link_header_uses_server_host_and_stops_at_the_cap(clock: FakeClock) -> None:
    repos = dated_catalogue(25, CUTOFF, 10)
    with FakeGitHub(repos, clock=clock, result_cap=10) as api:
        url = f"{api.base_url}/search/repositories?q=banking&per_page=4"
        status, headers, body = get_json(url)
        assert (status, body["total_count"], len(body["items"]), body["incomplete_results"]) == (200, 25, 4, False)
        links = dict(reversed(part.split("; ")) for part in headers["Link"].split(", "))
        assert links['rel="next"'] == f"<{api.base_url}/search/repositories?q=banking&per_page=4&page=2>"
        assert links['rel="last"'].endswith("page=3>")  # ceil(10 / 4): the cap, not the 25 that match
        assert headers["X-RateLimit-Resource"] == "search"
        status, _, body = get_json(url + "&page=3")
        assert (status, len(body["items"])) == (200, 2)
        status, _, body = get_json(url.replace("per_page=4", "per_page=5") + "&page=3")
        assert status == 422 and body["message"] == CAP_MESSAGE.replace("1000", "10")


def test_duplicates_across_domains_and_tiers_merge_domains(api: FakeGitHub, clock: FakeClock) -> None:
    api.add(
        fake_repo("octo/paygate", "2025-03-01", 500, "payment gateway over http"),  # two domains, two tiers
        fake_repo("octo/ledger", "2025-03-02", 300, "banking ledger with budget reports"),  # two keyword groups
        fake_repo("octo/proxy", "2025-03-03", 2000, "a tiny proxy"),
    )

    result = run(api, clock, domains=[NETWORK, FINANCE])  # domains come back in DOMAINS order anyway

    by_name = {r.full_name: r for r in result.repos}
    assert sorted(by_name) == ["octo/ledger", "octo/paygate", "octo/proxy"]
    assert by_name["octo/paygate"].domains == [FINANCE, NETWORK]
    assert by_name["octo/ledger"].domains == [FINANCE]
    assert by_name["octo/proxy"].domains == [NETWORK]
    hits = sum(q.fetched for q in result.queries)
    assert hits == 4 + 2 + 1  # paygate: 2 tiers x 2 domains; ledger: both keyword groups; proxy once
    assert sum(q.new for q in result.queries) == 3
    counts = result.funnel().stages["github-search"]
    assert (counts.seen, counts.kept, counts.dropped) == (7, 3, {"duplicate-url": 4})


def test_repo_fields_and_licence_mapping(api: FakeGitHub, clock: FakeClock) -> None:
    api.add(
        fake_repo("a/mit", "2025-02-01", 150, "invoice tool", license_spdx="MIT", default_branch="develop"),
        fake_repo("a/apache", "2025-02-02", 160, "invoice tool", license_spdx="Apache-2.0"),
        fake_repo("a/other", "2025-02-03", 170, "invoice tool", license_spdx="NOASSERTION"),
        fake_repo("a/none", "2025-02-04", 180, "invoice tool", license_spdx=None),
    )

    result = run(api, clock)

    refs = {r.full_name: r for r in result.repos}
    assert {n: r.license_spdx for n, r in refs.items()} == {
        "a/mit": "MIT",
        "a/apache": "Apache-2.0",
        "a/other": None,
        "a/none": None,
    }
    mit = refs["a/mit"]
    assert (mit.source, mit.clone_url, mit.stars, mit.default_branch) == (
        "github",
        "https://github.com/a/mit.git",
        150,
        "develop",
    )
    assert mit.created_at == datetime(2025, 2, 1, 12, tzinfo=UTC)
    # reading the hits never made PyGithub fetch a repository or a licence (lazy completion)
    assert {r.path for r in api.requests} == {"/search/repositories"}


def test_a_malformed_hit_is_skipped_and_counted(api: FakeGitHub, clock: FakeClock) -> None:
    api.add(
        fake_repo("octo/good", "2025-02-01", 300, "banking"),
        fake_repo("octo/broken", "2025-02-01", 200, "banking", omit=("clone_url", "stargazers_count")),
    )

    result = run(api, clock)

    assert names(result) == ["octo/good"]
    first = result.queries[0]
    assert (first.fetched, first.skipped, first.error) == (2, 1, None)
    assert "malformed" in first.detail
    assert result.funnel().stages["github-search"].dropped == {"malformed": 1}


def test_max_repos_stops_early_without_further_requests(api: FakeGitHub, clock: FakeClock) -> None:
    api.add(*[fake_repo(f"octo/pay-{i}", "2025-02-01", 300 - i, "payment kit") for i in range(10)])

    result = run(api, clock, per_page=2, max_repos=3)

    assert names(result) == ["octo/pay-0", "octo/pay-1", "octo/pay-2"]  # the most starred first
    assert result.stopped_early
    assert [r.params.get("page") for r in api.search_requests()] == [None, "2"]
    assert len(result.queries) == 1 and not result.queries[0].truncated


# ----------------------------------------------------------------------------------------------
# The 1,000-result cap


def test_cap_splits_created_range_into_windows(clock: FakeClock) -> None:
    today = date(2025, 1, 8)
    repos = [
        fake_repo(f"bulk/bank-{d}-{i}", date(2025, 1, d), 200 + i, "banking") for d in range(1, 9) for i in range(4)
    ]
    repos.append(fake_repo("late/bank", date(2025, 1, 10), 300, "banking"))  # created after `today`
    with FakeGitHub(repos, clock=clock, result_cap=10) as api:
        result = run(api, clock, today=today, per_page=5, max_results_per_query=10)

        cell = [q for q in result.queries if q.tier == "100..500" and q.keywords.startswith("finance")]
        assert [(q.window_start.day, q.window_end and q.window_end.day, q.split) for q in cell] == [
            (1, None, True),
            (1, 4, True),
            (1, 2, False),
            (3, 4, False),
            (5, None, True),
            (5, 6, False),
            (7, None, False),
        ]
        assert [q.query.split("created:")[1].split()[0] for q in cell] == [
            ">=2025-01-01",
            "2025-01-01..2025-01-04",
            "2025-01-01..2025-01-02",
            "2025-01-03..2025-01-04",
            ">=2025-01-05",
            "2025-01-05..2025-01-06",
            ">=2025-01-07",
        ]
        assert all(q.total_count < 10 and q.fetched == q.total_count for q in cell if not q.split)
        assert names(result) == sorted(r.full_name for r in repos)  # every one, including the late one
        assert all(q.error is None for q in result.queries)
        assert all(int(r.params.get("page", "1")) * 5 <= 10 for r in api.search_requests())


def test_cap_splitting_at_githubs_real_cap(clock: FakeClock) -> None:
    repos = dated_catalogue(1500, CUTOFF, 300)
    with FakeGitHub(repos, clock=clock) as api:
        result = run(api, clock, per_page=100)

        assert len(result.repos) == 1500
        root = result.queries[0]
        assert (root.total_count, root.split, root.fetched) == (1500, True, 0)
        leaves = [q for q in result.queries if q.total_count and not q.split]
        assert len(leaves) == 2 and all(q.total_count < 1000 and q.fetched == q.total_count for q in leaves)
        assert not result.failed()
        assert len(api.search_requests()) == 1 + 8 + 8 + 5  # root page, two halves, five empty cells


def test_single_day_window_at_the_cap_is_truncated_not_failed(clock: FakeClock) -> None:
    repos = [fake_repo(f"day/bank-{i:02d}", TODAY, 100 + i, "banking") for i in range(15)]
    with FakeGitHub(repos, clock=clock, result_cap=10) as api:
        result = run(api, clock, per_page=5, max_results_per_query=10)

        cell = result.queries[0]
        assert (cell.window_start, cell.window_end, cell.split) == (CUTOFF, None, True)
        last = [q for q in result.queries if q.tier == "100..500" and q.keywords.startswith("finance")][-1]
        assert (last.window_start, last.window_end) == (TODAY, None)
        assert (last.total_count, last.fetched, last.truncated, last.error) == (15, 10, True, None)
        assert names(result) == [f"day/bank-{i:02d}" for i in range(5, 15)]  # the ten most starred
        assert all(r.params.get("page") in (None, "2") for r in api.search_requests())  # never page 3 (422)


# ----------------------------------------------------------------------------------------------
# Rate limits and errors


def test_rate_limit_waits_until_reset_then_retries_the_same_page(api: FakeGitHub, clock: FakeClock) -> None:
    api.add(*[fake_repo(f"octo/bank-{i}", "2025-02-01", 400 - i, "banking") for i in range(5)])
    api.rate_limit_next(1, reset_in=30, after=1)  # the first page passes, the second is refused

    result = run(api, clock, per_page=2)

    assert clock.sleeps == [31.0]  # until X-RateLimit-Reset, plus a second for its resolution
    assert names(result) == [f"octo/bank-{i}" for i in range(5)]
    first = result.queries[0]
    assert (first.fetched, first.retries, first.waited_s, first.error) == (5, 1, 31.0, None)
    assert [r.params.get("page") for r in api.search_requests()][:4] == [None, "2", "2", "3"]


def test_rate_limit_429_with_reset_headers_is_waited_out(api: FakeGitHub, clock: FakeClock) -> None:
    api.add(fake_repo("octo/bank", "2025-02-01", 200, "banking"))
    api.rate_limit_next(2, reset_in=5, status=429)

    result = run(api, clock)

    # the second refusal repeats the same reset, now in the past: only the one-second slack is waited
    assert clock.sleeps == [6.0, 1.0]
    assert names(result) == ["octo/bank"] and not result.failed()


def test_rate_limit_longer_than_the_bound_records_the_query_and_continues(api: FakeGitHub, clock: FakeClock) -> None:
    api.add(
        fake_repo("octo/bank", "2025-02-01", 200, "banking"), fake_repo("octo/fund", "2025-02-01", 700, "portfolio")
    )
    api.rate_limit_next(1, reset_in=600)

    result = run(api, clock, max_rate_limit_wait_s=120)

    assert clock.sleeps == []  # never waited, never slept for real either
    first, *others = result.queries
    assert first.error == "rate-limited"
    assert first.query in first.detail and "exceeds max_rate_limit_wait_s=120" in first.detail
    assert all(q.error is None for q in others)
    assert names(result) == ["octo/fund"]  # found by a later query; octo/bank's query was the one refused
    assert [(r.item_id, r.reason) for r in result.rejections()] == [(first.query, "rate-limited")]
    assert len(api.search_requests()) == 6


@pytest.mark.parametrize(("retry_after", "expected_wait"), [(7, 7.0), (None, 5.0)])
def test_secondary_rate_limit_honours_retry_after_or_waits_the_default(
    api: FakeGitHub, clock: FakeClock, retry_after: int | None, expected_wait: float
) -> None:
    api.add(fake_repo("octo/bank", "2025-02-01", 200, "banking"))
    api.secondary_rate_limit_next(1, retry_after=retry_after)

    result = run(api, clock, secondary_rate_wait_s=5)

    assert clock.sleeps == [expected_wait]
    assert names(result) == ["octo/bank"] and not result.failed()


def test_repeated_secondary_limits_back_off_exponentially_then_give_up(api: FakeGitHub, clock: FakeClock) -> None:
    api.secondary_rate_limit_next(3, retry_after=None)

    result = run(api, clock, secondary_rate_wait_s=5, max_rate_limit_wait_s=15)

    assert clock.sleeps == [5.0, 10.0]  # the third would be 20 s, over the bound
    assert result.queries[0].error == "rate-limited"
    assert all(q.error is None for q in result.queries[1:])


def test_searching_faster_than_the_limit_waits_for_each_reset(clock: FakeClock) -> None:
    repos = [fake_repo(f"octo/bank-{i}", "2025-02-01", 200 + i, "banking") for i in range(7)]
    with FakeGitHub(repos, clock=clock, search_limit=5, enforce_rate_limit=True) as api:
        result = run(api, clock, per_page=2)  # 4 pages + 5 other queries = 9 requests, 5 allowed a minute

        assert len(result.repos) == 7 and not result.failed()
        assert clock.sleeps == [61.0]
        assert sum(1 for r in api.search_requests()) == 10  # one refused, retried after the reset


def test_422_is_recorded_with_its_query_and_the_rest_continue(api: FakeGitHub, clock: FakeClock) -> None:
    api.add(
        fake_repo("octo/bank", "2025-02-01", 200, "banking"), fake_repo("octo/fund", "2025-02-01", 200, "portfolio")
    )
    api.reject_query("portfolio")

    result = run(api, clock)

    failed = result.failed()
    assert [q.keywords for q in failed] == [keyword_groups(FINANCE)[1]] * 3
    assert all(q.error == "invalid-query" and q.query in q.detail and "HTTP 422" in q.detail for q in failed)
    assert clock.sleeps == []  # a 422 is never retried
    assert len(api.search_requests()) == 6
    assert names(result) == ["octo/bank"]


def test_422_result_cap_mid_query_keeps_what_was_fetched(api: FakeGitHub, clock: FakeClock) -> None:
    # GitHub refuses a page past its cap with 422 (e.g. when the count grew between pages)
    api.add(*[fake_repo(f"octo/bank-{i}", "2025-02-01", 300 - i, "banking") for i in range(6)])
    api.error_next(1, status=422, body={"message": CAP_MESSAGE}, after=2)

    result = run(api, clock, per_page=2)

    first = result.queries[0]
    assert (first.fetched, first.error) == (4, "result-cap")
    assert "Only the first 1000" in first.detail and first.query in first.detail
    assert names(result) == [f"octo/bank-{i}" for i in range(4)]
    assert clock.sleeps == []


@pytest.mark.parametrize("body", [None, b"<html><body>Unicorn!</body></html>"])
def test_server_errors_are_retried_with_backoff(api: FakeGitHub, clock: FakeClock, body: Any) -> None:
    api.add(fake_repo("octo/bank", "2025-02-01", 200, "banking"))
    api.error_next(2, status=502, body=body)

    result = run(api, clock)

    assert clock.sleeps == [1.0, 2.0]
    assert names(result) == ["octo/bank"] and not result.failed()


def test_persistent_500_gives_up_on_that_query_only(api: FakeGitHub, clock: FakeClock) -> None:
    api.add(fake_repo("octo/fund", "2025-02-01", 200, "portfolio"))
    api.error_next(3, status=500)

    result = run(api, clock, max_retries=2)

    first = result.queries[0]
    assert first.error == "server-error" and "gave up after 2 retries" in first.detail and first.query in first.detail
    assert clock.sleeps == [1.0, 2.0]
    assert names(result) == ["octo/fund"]


def test_unreachable_api_is_recorded_not_raised(clock: FakeClock) -> None:
    with socket.socket() as s:  # a loopback port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = GitHubConfig(base_url=f"http://127.0.0.1:{port}", max_retries=1)
    result = search_github(config, CUTOFF, domains=[FINANCE], sleep=clock.sleep, clock=clock, today=TODAY)

    # every wait went to the injected clock (a real sleep would be missing here)
    assert [q.error for q in result.queries] == ["network-error"] * 6
    assert clock.sleeps == [1.0] * 6 and result.repos == []


def test_a_stalled_response_times_out_and_is_retried(api: FakeGitHub, clock: FakeClock) -> None:
    api.add(fake_repo("octo/bank", "2025-02-01", 200, "banking"))
    api.delay_next(1, seconds=120)  # never answered in the test's lifetime; the timeout leaves room for a busy machine

    result = run(api, clock, timeout_s=5)

    assert names(result) == ["octo/bank"] and not result.failed()
    assert result.queries[0].retries == 1 and clock.sleeps == [1.0]


def test_next_link_to_a_foreign_host_is_refused_not_followed(clock: FakeClock) -> None:
    repos = [fake_repo(f"octo/bank-{i}", "2025-02-01", 300 - i, "banking") for i in range(3)]
    with FakeGitHub(repos, clock=clock, link_base="http://example.invalid:1") as api:
        result = run(api, clock, per_page=2)

        first = result.queries[0]
        assert (first.fetched, first.error) == (2, "bad-response")
        assert len(result.repos) == 2
        assert all(r.path == "/search/repositories" for r in api.requests)


# ----------------------------------------------------------------------------------------------
# Credentials and the fake's other endpoint


def test_token_is_sent_but_never_recorded(api: FakeGitHub, clock: FakeClock) -> None:
    api.add(fake_repo("octo/bank", "2025-02-01", 200, "banking"))

    result = run(api, clock, token=SecretStr("ghp_not_a_real_token"))

    assert all(r.headers["authorization"] == "token ghp_not_a_real_token" for r in api.requests)
    assert "ghp_not_a_real_token" not in result.model_dump_json()


def test_anonymous_search_sends_no_authorization(api: FakeGitHub, clock: FakeClock) -> None:
    run(api, clock)
    assert api.requests and all("authorization" not in r.headers for r in api.requests)


def test_fake_serves_rate_limit_overview(api: FakeGitHub) -> None:
    with Github(base_url=api.base_url, retry=None) as gh:
        overview = gh.get_rate_limit()
    assert (overview.resources.search.limit, overview.resources.search.remaining) == (30, 30)
    assert api.requests[-1].path == "/rate_limit"
