"""`classforge harvest` as a user runs it: flags without a config file, flags over a file, nothing to
harvest, and a GitHub search that cannot work (no token, unreachable, token refused)."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from classgen import make_class
from fakes.github_api import FakeGitHub, fake_repo
from typer.testing import CliRunner

from classforge_bench.pipeline.cli import app


def invoke(*args: str, env: dict[str, str | None] | None = None):
    result = CliRunner().invoke(app, list(args), env={"GITHUB_TOKEN": None, **(env or {})})
    return result, " ".join(result.output.split())  # unwrapped, whatever the terminal width


def kept(out: Path, snapshot: str = "default") -> set[str]:
    lines = (out / snapshot / "classes.jsonl").read_text().splitlines()
    return {json.loads(line)["class_name"] for line in lines}


def github_config(tmp_path: Path, base_url: str, extra: str = "") -> Path:
    cfg = tmp_path / "gh.toml"
    cfg.write_text(
        f'[harvest]\noutput_root = "{tmp_path / "out"}"\n[harvest.github]\nenabled = true\n'
        f'base_url = "{base_url}"\n{extra}'
    )
    return cfg


def two_repos(make_repo, tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "folder"
    make_repo(
        "acme__shop",
        [
            ("2025-01-15", {"shop/cart.py": make_class("Cart", methods=6)}),
            ("2025-03-01", {"shop/till.py": make_class("Till", methods=6)}),
        ],
        folder,
    )
    lone = make_repo(
        "solo__tool", [("2025-04-01", {"tool/queue.py": make_class("JobQueue", methods=6)})], tmp_path / "elsewhere"
    )
    return folder, lone


def test_harvest_from_flags_alone(make_repo, tmp_path):
    folder, lone = two_repos(make_repo, tmp_path)
    out = tmp_path / "out"
    result, text = invoke(
        "harvest", "--source", str(folder), "--source", lone.as_uri(), "--cutoff", "2025-02-01", "--out", str(out)
    )
    assert result.exit_code == 0, text
    assert kept(out) == {"Till", "JobQueue"}  # Cart was first committed before the cutoff
    assert "2 repositories" in text and "pre-cutoff x1" in text


def test_flags_override_the_file_and_are_validated_like_it(make_repo, tmp_path):
    folder, _ = two_repos(make_repo, tmp_path)
    cfg = tmp_path / "classforge.toml"
    cfg.write_text(
        f'[harvest]\ncutoff = 2025-02-01\nsnapshot = "fromfile"\noutput_root = "{tmp_path / "fileout"}"\n'
        f'local_sources = ["{tmp_path / "does-not-exist"}"]\n'
    )
    out = tmp_path / "out"
    result, text = invoke(
        "harvest",
        "-c",
        str(cfg),
        "--source",
        str(folder),
        "--cutoff",
        "2025-01-01",
        "--snapshot",
        "flags",
        "--out",
        str(out),
    )
    assert result.exit_code == 0, text
    assert kept(out, "flags") == {"Cart", "Till"} and not (tmp_path / "fileout").exists()
    # the file's values stand where no flag is given
    result, text = invoke("harvest", "-c", str(cfg), "--source", str(folder))
    assert result.exit_code == 0, text
    assert kept(tmp_path / "fileout", "fromfile") == {"Till"}
    for flags, where in (
        (["--cutoff", "2025-02-30"], "'--cutoff': '2025-02-30' is not a date"),
        (["--snapshot", "../escape"], "harvest.snapshot"),
    ):
        result, text = invoke("harvest", "-c", str(cfg), "--source", str(folder), *flags)
        assert result.exit_code == 2 and where in text, text


def test_nothing_to_harvest_exits_non_zero_and_says_so(tmp_path):
    result, text = invoke("harvest", "--out", str(tmp_path / "out"))
    assert result.exit_code == 2 and "nothing to harvest" in text
    # Like every other error: one line on stderr, nothing on stdout.
    assert (
        result.stdout == "" and result.stderr.startswith("error: nothing to harvest") and result.stderr.count("\n") == 1
    ), (result.stdout, result.stderr)
    assert not (tmp_path / "out").exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    result, text = invoke("harvest", "--source", str(empty), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2 and "neither a git repository nor a folder of them" in text


def test_a_config_naming_only_bundles_harvests_them(tmp_path):
    # The real-source example's config names nothing but `bundle_sources`; the command once refused it
    # as "nothing to harvest".
    bundle = Path(__file__).resolve().parents[2] / "examples" / "real-repos" / "liminma__rate-limiter.bundle"
    cfg = tmp_path / "bundles.toml"
    cfg.write_text(
        f'[harvest]\ncutoff = "2025-01-01"\noutput_root = "{tmp_path / "out"}"\nbundle_sources = ["{bundle}"]\n'
        f'[harvest.clone]\nworkdir = "{tmp_path / "clones"}"\n'
    )
    result, text = invoke("harvest", "-c", str(cfg))
    assert result.exit_code == 0, text
    assert "ModelRateLimiter" in kept(tmp_path / "out") and "1 repositories" in text


def test_github_search_that_finds_no_repository_exits_non_zero(tmp_path):
    with FakeGitHub([fake_repo("octo/old", "2023-01-01", 300, "banking ledger")], token="good") as api:
        cfg = github_config(tmp_path, api.base_url, 'star_tiers = [">1000"]\n')
        result, text = invoke("harvest", "-c", str(cfg), env={"GITHUB_TOKEN": "good"})
    assert result.exit_code == 1 and "nothing to harvest: the sources held no repository" in text


def test_github_without_token_fails_before_any_request(tmp_path):
    with FakeGitHub() as api:
        result, text = invoke("harvest", "--github", "--out", str(tmp_path / "out"))
        assert result.exit_code == 2 and "GITHUB_TOKEN is not set" in text
        assert api.requests == []


def test_unreachable_github_fails_fast_after_one_check(tmp_path):
    with socket.socket() as s:  # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    cfg = github_config(tmp_path, f"http://127.0.0.1:{port}")
    result, text = invoke("harvest", "-c", str(cfg), env={"GITHUB_TOKEN": "ghp_fake"})
    assert result.exit_code == 2 and f"GitHub API at http://127.0.0.1:{port} is unreachable" in text, text
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())  # nothing harvested
    assert len(result.output.strip().splitlines()) == 1


def test_refused_token_fails_fast_after_one_request(tmp_path):
    with FakeGitHub([fake_repo("octo/ledger", "2025-03-01", 250, "banking ledger")], token="right") as api:
        cfg = github_config(tmp_path, api.base_url)
        result, text = invoke("harvest", "-c", str(cfg), env={"GITHUB_TOKEN": "wrong"})
        assert result.exit_code == 2 and "rejected GITHUB_TOKEN: Bad credentials" in text, text
        assert [r.path for r in api.requests] == ["/rate_limit"]


def test_a_repository_that_cannot_be_cloned_is_said_on_the_terminal(make_repo, tmp_path):
    """The git error reaches the user, not only rejects.jsonl; the harvest of the others goes on
    (exit 0); when no repository at all could be cloned the command fails (exit 1)."""
    _, lone = two_repos(make_repo, tmp_path)
    missing = (tmp_path / "gone" / "ledger.git").as_uri()
    catalogue = [
        fake_repo("octo/ledger", "2025-03-01", 250, "banking ledger", clone_url=missing),
        fake_repo("solo/tool", "2025-03-01", 250, "banking ledger", clone_url=lone.as_uri()),
    ]
    with FakeGitHub(catalogue, token="t") as api:
        cfg = github_config(tmp_path, api.base_url, 'star_tiers = ["100..500"]\n')
        result, _ = invoke("harvest", "-c", str(cfg), "--cutoff", "2025-02-01", env={"GITHUB_TOKEN": "t"})
    assert result.exit_code == 0, result.output
    warnings = [line for line in result.stderr.splitlines() if line.startswith("warning: could not clone octo/ledger")]
    assert (
        len(warnings) == 1
        and "(unreachable)" in warnings[0]
        and "does not appear to be a git repository" in warnings[0]
    )
    assert kept(tmp_path / "out") == {"JobQueue"}

    with FakeGitHub(catalogue[:1], token="t") as api:
        cfg = github_config(tmp_path, api.base_url, 'star_tiers = ["100..500"]\nmax_repos = 5\n')
        result, _ = invoke("harvest", "-c", str(cfg), "--snapshot", "alone", env={"GITHUB_TOKEN": "t"})
    assert result.exit_code == 1, result.output
    assert result.stderr.splitlines()[-1].startswith("error: no repository could be cloned (1 tried)")


def test_an_unreadable_reference_corpus_is_one_line_before_any_work(make_repo, tmp_path):
    """The review saw a 90-line traceback here. Now: one line naming the setting and the file, before any
    repository is cloned or scanned, and the same harvest runs once the setting is fixed."""
    _, lone = two_repos(make_repo, tmp_path)
    corpus = tmp_path / "corpus.json"
    cfg = tmp_path / "classforge.toml"
    cfg.write_text(
        f'[harvest]\ncutoff = 2025-01-01\noutput_root = "{tmp_path / "out"}"\nlocal_sources = ["{lone}"]\n'
        f'[harvest.dedup]\nreference_datasets = []\nreference_corpora = ["{corpus}"]\n'
    )
    result, _ = invoke("harvest", "-c", str(cfg))
    assert result.exit_code == 2 and result.stdout == "", (result.stdout, result.stderr)
    assert (
        result.stderr == f"error: harvest.dedup.reference_corpora: {corpus}: cannot read: No such file or directory\n"
    )
    assert not (tmp_path / "out").exists()
    corpus.write_text('{"task_id": "not a list"}')
    result, _ = invoke("harvest", "-c", str(cfg))
    assert result.exit_code == 2 and result.stderr.count("\n") == 1 and "not a list of tasks" in result.stderr
    corpus.write_text("[]")
    result, text = invoke("harvest", "-c", str(cfg))
    assert result.exit_code == 0, text
    assert kept(tmp_path / "out") == {"JobQueue"} and "corpus.json(0classes)" in text.replace(" ", "")
