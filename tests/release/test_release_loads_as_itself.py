"""A release loads as itself: one Python process, one `datasets` cache, two releases of the same version
(one per track, as `make run` writes them), each `load_dataset(folder)` returns that folder's rows."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from release_taskgen import as_tasks, make_tasks, release_kwargs

from classforge_bench.pipeline.release.card_check import card_problems, parse_card
from classforge_bench.pipeline.release.verify import verify_release
from classforge_bench.pipeline.release.writer import write_release


def _release(root: Path, rows: list[dict[str, Any]], track: str) -> Path:
    return write_release(as_tasks(rows), output_root=root, **release_kwargs(config={"construction": {"track": track}}))


def _ids(folder: Path) -> list[str]:
    return [json.loads(line)["task_id"] for line in (folder / "tasks.jsonl").read_text().splitlines() if line]


def test_both_tracks_load_their_own_rows_in_one_process(tmp_path: Path) -> None:
    import datasets

    tasks = make_tasks()
    composition = _release(tmp_path / "releases", tasks[:2], "composition")
    real = _release(tmp_path / "releases-real-source", tasks[2:], "real-source")
    assert composition.name == real.name  # same version: the folder's name alone keyed the cache
    cache = tmp_path / "hf-cache"
    loaded = {}
    for folder in (composition, real, composition):  # the card's own snippet, in one process and cache
        loaded[folder] = datasets.load_dataset(str(folder), split="test", cache_dir=str(cache))["task_id"]
        assert list(loaded[folder]) == _ids(folder)
    assert _ids(composition) != _ids(real)


def test_verify_names_the_track_and_checks_the_card_as_the_hub_reads_it(tmp_path: Path) -> None:
    real = _release(tmp_path / "r", make_tasks()[:1], "real-source")
    assert verify_release(real, load_with_datasets=True, cache_dir=tmp_path) == []
    card = parse_card((real / "README.md").read_text())
    assert card.data.to_dict()["configs"][0]["config_name"] == "real-source"
    assert card_problems(card) == []
    # a card that claims the other track, or a row count it does not have, is named with the track
    text = (real / "README.md").read_text()
    (real / "README.md").write_text(text.replace("config_name: real-source", "config_name: composition"))
    problems = verify_release(real, load_with_datasets=False)
    assert any("(real-source track)" in p and "'real-source'" in p and "configs" in p for p in problems), problems


@pytest.mark.parametrize(
    ("old", "new", "finding"),
    [
        ("- n<1K", "- n>1M", "size_categories 'n>1M'"),
        ("- text-generation", "- class-writing", "task_categories 'class-writing'"),
        ("  - split: test\n", "  - split: test\n    bogus: 1\n", "configs"),
    ],
)
def test_the_hub_check_finds_what_the_hub_would_refuse(tmp_path: Path, old: str, new: str, finding: str) -> None:
    folder = _release(tmp_path / "r", make_tasks()[:1], "composition")
    text = (folder / "README.md").read_text()
    assert old in text
    problems = card_problems(parse_card(text.replace(old, new, 1)))
    assert any(finding in p for p in problems), problems
