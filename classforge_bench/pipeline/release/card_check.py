"""The dataset card's metadata checked as the Hub checks it, offline.

The Hub's own check (`DatasetCard.validate`) is a request to the Hub; this one uses the parsers and
vocabularies `huggingface_hub` and `datasets` ship: the card parses as a `DatasetCard`, its configs
and `dataset_info` parse as `datasets` reads them, and its size, task and language tags are ones the
Hub knows. Each problem is one sentence; an empty list means the metadata is sound.
"""

from __future__ import annotations

import json
from functools import cache
from importlib import resources
from typing import Any

from classforge_bench.pipeline.core.extras import require


@cache
def _vocabulary(name: str) -> frozenset[str]:
    """A tag vocabulary `datasets` ships (size_categories, languages)."""
    text = resources.files("datasets.utils.resources").joinpath(f"{name}.json").read_text(encoding="utf-8")
    values = json.loads(text)
    return frozenset(values if isinstance(values, list) else values.keys())


def _known_tasks() -> frozenset[str]:
    from datasets.utils.metadata import known_task_ids

    return frozenset(known_task_ids)


def parse_card(text: str) -> Any:
    """The card as the Hub's `DatasetCard`; ValueError when its YAML does not parse as a mapping."""
    from huggingface_hub import DatasetCard

    return DatasetCard(text)


def _tag_problems(meta: dict[str, Any]) -> list[str]:
    problems = []
    vocabularies = {
        "size_categories": _vocabulary("size_categories"),
        "task_categories": _known_tasks(),
        "language": _vocabulary("languages"),
    }
    for key, known in vocabularies.items():
        values = meta.get(key) or []
        for value in values if isinstance(values, list) else [values]:
            if value not in known:
                problems.append(f"{key} {value!r} is not one the Hub knows")
    if not isinstance(meta.get("license"), str):
        problems.append("license is not one identifier")
    return problems


def card_problems(card: Any) -> list[str]:
    """What the Hub would refuse or misread in the card's metadata: tags, configs, dataset_info."""
    require("datasets", "checking a release's card (datasets parses its configs and dataset_info)")
    from datasets.info import DatasetInfosDict
    from datasets.utils.metadata import MetadataConfigs

    meta = card.data.to_dict()
    problems = _tag_problems(meta)
    try:
        configs = MetadataConfigs.from_dataset_card_data(card.data)
        configs.get_default_config_name()
    except ValueError as exc:
        problems.append(f"configs: {exc}")
        configs = MetadataConfigs()
    try:
        infos = DatasetInfosDict.from_dataset_card_data(card.data)
    except (ValueError, TypeError, KeyError) as exc:
        return [*problems, f"dataset_info does not parse as datasets reads it: {type(exc).__name__}: {exc}"]
    for name in infos:
        if name not in configs:
            problems.append(f"dataset_info describes config {name!r}, which configs does not declare")
        elif infos[name].features is None or not infos[name].splits:
            problems.append(f"dataset_info for {name!r} lacks its features or splits")
    return problems
