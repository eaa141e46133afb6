"""Configuration is validated at the edge with errors that name the key and the file."""

from pathlib import Path

import pytest

from classforge_bench.pipeline.config import ConfigError, load_config


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "classforge.toml"
    path.write_text(text)
    return path


def test_defaults_and_secret_from_environment(tmp_path):
    cfg = load_config(
        write(tmp_path, '[harvest]\ncutoff = "2025-03-01"\nsnapshot = "s1"\n'), env={"GITHUB_TOKEN": "ghp_x"}
    )
    assert str(cfg.harvest.cutoff) == "2025-03-01" and cfg.harvest.snapshot == "s1"
    assert cfg.harvest.github.token.get_secret_value() == "ghp_x"
    assert "ghp_x" not in cfg.model_dump_json()
    assert cfg.harvest.filters.min_methods == 5 and cfg.sandbox.min_line_coverage == 90


@pytest.mark.parametrize(
    "text, message",
    [
        ('[harvest]\ncutof = "2025-01-01"\n', "harvest.cutof"),
        ('[harvest.filters]\nmin_methods = "five"\n', "harvest.filters.min_methods"),
        ('[harvest]\nsnapshot = "../escape"\n', "harvest.snapshot"),
        ('[harvest.github]\ntoken = "ghp_secret"\n', "must not be written in a file"),
        ("[harvest\n", "not valid TOML"),
        ('[sandbox]\nbackend = "vm"\n', "sandbox.backend"),
    ],
)
def test_bad_configuration_names_what_is_wrong(tmp_path, text, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")):
        load_config(write(tmp_path, text), env={})


def test_missing_file(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        load_config(tmp_path / "nope.toml", env={})


def test_relative_paths_resolve_against_the_file_and_defaults_against_the_working_directory(tmp_path):
    folder = tmp_path / "conf"
    folder.mkdir()
    cfg = load_config(
        write(
            folder,
            '[harvest]\noutput_root = "../harvested"\nspec_corpora = ["corpus"]\n'
            'local_sources = ["repos", "file:///srv/git/x", "/abs/repo"]\n'
            '[llm]\ncache_path = ".cache/llm.sqlite"\n',
        ),
        env={},
    )
    assert cfg.harvest.output_root == tmp_path / "harvested"
    assert cfg.harvest.spec_corpora == [folder / "corpus"]
    assert cfg.harvest.local_sources == [str(folder / "repos"), "file:///srv/git/x", "/abs/repo"]
    assert cfg.llm.cache_path == folder / ".cache" / "llm.sqlite"
    assert cfg.release.output_root == Path("benchmark/releases"), "a default stays relative to the working directory"


@pytest.mark.parametrize(
    "overrides, message",
    [
        ({"harvest.snapshot": "../escape"}, "harvest.snapshot"),
        ({"harvest.snapshot": ".hidden"}, "plain folder name"),
        ({"harvest.cutoff": "2999-01-01"}, "in the future"),
        ({"harvest.cutoff": "yesterday"}, "harvest.cutoff"),
    ],
)
def test_overrides_are_validated_like_the_file(tmp_path, overrides, message):
    with pytest.raises(ConfigError, match=message.replace(".", r"\.")) as err:
        load_config(write(tmp_path, '[harvest]\nsnapshot = "ok"\n'), env={}, overrides=overrides)
    assert "with " + next(iter(overrides)) in str(err.value), "the message names the override"


def test_overrides_apply(tmp_path):
    cfg = load_config(
        write(tmp_path, '[harvest]\nsnapshot = "ok"\n'),
        env={},
        overrides={"harvest.snapshot": "refresh-2026-01-05", "harvest.cutoff": "2025-06-01", "x.y": None},
    )
    assert cfg.harvest.snapshot == "refresh-2026-01-05" and str(cfg.harvest.cutoff) == "2025-06-01"


def test_a_future_cutoff_in_the_file_is_refused(tmp_path):
    with pytest.raises(ConfigError, match="cutoff 2999-01-01 is in the future"):
        load_config(write(tmp_path, '[harvest]\ncutoff = "2999-01-01"\n'), env={})


def test_a_year_for_a_cutoff_asks_for_a_date(tmp_path):
    """`cutoff = 2025` is a TOML integer: pydantic's own message spoke of datetimes."""
    with pytest.raises(
        ConfigError, match=r"harvest\.cutoff: .*cutoff must be a date like 2025-01-01, got 2025"
    ) as info:
        load_config(write(tmp_path, "[harvest]\ncutoff = 2025\n"), env={})
    assert "atetime" not in str(info.value)
    # A TOML date and a quoted ISO date are still dates.
    assert str(load_config(write(tmp_path, "[harvest]\ncutoff = 2025-03-01\n"), env={}).harvest.cutoff) == "2025-03-01"
    with pytest.raises(ConfigError, match="a date like 2025-01-01, got '2025'"):
        load_config(write(tmp_path, '[harvest]\ncutoff = "2025"\n'), env={})
