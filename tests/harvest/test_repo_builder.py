"""Declarative repository specs: dated commits, clear errors, stable rebuilds."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from classforge_bench.pipeline.harvest.repo_builder import CorpusSpecError, load_spec, materialise_corpus


def write_spec(root: Path, toml: str, trees: dict[str, dict[str, str]]) -> Path:
    folder = root / "acme__kit"
    folder.mkdir(parents=True)
    (folder / "repo.toml").write_text(toml)
    for tree, files in trees.items():
        for rel, text in files.items():
            (folder / tree / rel).parent.mkdir(parents=True, exist_ok=True)
            (folder / tree / rel).write_text(text)
    return folder


def test_dates_without_offset_are_utc_and_rebuilds_are_stable(tmp_path):
    spec = write_spec(
        tmp_path / "specs",
        'full_name = "acme/kit"\n[[commits]]\ndate = 2025-02-01T10:00:00\nmessage = "one"\ntree = "c1"\n',
        {"c1": {"a.py": "x = 1\n"}},
    )
    (spec / "c1" / "__pycache__").mkdir()
    (spec / "c1" / "__pycache__" / "a.cpython-311.pyc").write_bytes(b"\x00junk")
    (repo,) = materialise_corpus(tmp_path / "specs", tmp_path / "built")
    log = subprocess.run(["git", "log", "--format=%aI %H"], cwd=repo, capture_output=True, text=True, check=True).stdout
    assert log.startswith("2025-02-01T10:00:00+00:00")
    files = subprocess.run(["git", "ls-files"], cwd=repo, capture_output=True, text=True, check=True).stdout.split()
    assert files == ["a.py"]
    (again,) = materialise_corpus(tmp_path / "specs", tmp_path / "built")
    log2 = subprocess.run(
        ["git", "log", "--format=%aI %H"], cwd=again, capture_output=True, text=True, check=True
    ).stdout
    assert log2 == log


@pytest.mark.parametrize(
    "toml, message",
    [
        (
            'full_name = "acme/kit"\n[[commits]]\ndate = "yesterday"\nmessage = "m"\ntree = "c1"\n',
            "commit #1 is malformed",
        ),
        (
            'full_name = "acme/kit"\n[[commits]]\ndate = "2025-01-01"\nmessage = "m"\ntree = "missing"\n',
            "does not exist",
        ),
        ('full_name = "acme/kit"\n', "at least one commit"),
        ('full_name = "acme/kit"\n[[commits]]\nmessage = "no date"\n', "commit #1 is malformed"),
    ],
)
def test_bad_specs_name_the_problem(tmp_path, toml, message):
    folder = write_spec(tmp_path, toml, {"c1": {"a.py": "x = 1\n"}})
    with pytest.raises(CorpusSpecError, match=message):
        load_spec(folder)


def test_refuses_to_replace_a_folder_it_did_not_build(tmp_path):
    write_spec(
        tmp_path / "specs",
        'full_name = "acme/kit"\n[[commits]]\ndate = "2025-01-01"\nmessage = "m"\ntree = "c1"\n',
        {"c1": {"a.py": "x\n"}},
    )
    precious = tmp_path / "built" / "acme__kit"
    precious.mkdir(parents=True)
    (precious / "notes.txt").write_text("mine")
    with pytest.raises(CorpusSpecError, match="not built from a spec"):
        materialise_corpus(tmp_path / "specs", tmp_path / "built")
    assert (precious / "notes.txt").read_text() == "mine"
