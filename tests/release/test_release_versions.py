"""Version names and next_version for scheduled refreshes."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pytest

from classforge_bench.pipeline.release.errors import ReleaseError
from classforge_bench.pipeline.release.versions import list_releases, next_version, validate_version


@pytest.mark.parametrize("good", ["1.0.0", "v0.3.12", "2.0.0-rc.1", "2025.06.01", "2025.06.01-2", "2024.02.29"])
def test_valid_versions(good: str) -> None:
    assert validate_version(good) == good


@pytest.mark.parametrize(
    "bad, reason",
    [
        ("latest", "not valid"),
        ("1.0", "not valid"),
        ("01.2.3", "not valid"),
        ("1.0.0/../x", "not valid"),
        ("2025.13.01", "not a real date"),
        ("2025.02.30", "not a real date"),
        ("2025.6.1", "YYYY.MM.DD"),
        ("2025.06.01-0", "YYYY.MM.DD"),
        ("", "not valid"),
        (".hidden", "not valid"),
    ],
)
def test_invalid_versions_name_the_version(bad: str, reason: str) -> None:
    with pytest.raises(ReleaseError, match=reason) as err:
        validate_version(bad)
    assert repr(bad) in str(err.value)


def test_next_version_date_scheme(tmp_path: Path) -> None:
    today = date(2025, 6, 1)
    assert next_version(tmp_path / "missing", today=today) == "2025.06.01"
    (tmp_path / "2025.06.01").mkdir()
    assert next_version(tmp_path, today=today) == "2025.06.01-2"
    (tmp_path / "2025.06.01-2").mkdir()
    (tmp_path / ".2025.06.01-3.partial-x").mkdir()  # an interrupted build is not a version
    assert next_version(tmp_path, today=today) == "2025.06.01-3"
    assert next_version(tmp_path, today=date(2025, 6, 8)) == "2025.06.08"


def test_next_version_semver_schemes(tmp_path: Path) -> None:
    assert next_version(tmp_path, scheme="patch") == "0.1.0"
    for name in ("0.1.0", "0.2.3", "2025.06.01", "notes"):
        (tmp_path / name).mkdir()
    assert list_releases(tmp_path) == ["0.1.0", "0.2.3", "2025.06.01"]
    assert next_version(tmp_path, scheme="patch") == "0.2.4"
    assert next_version(tmp_path, scheme="minor") == "0.3.0"
    assert next_version(tmp_path, scheme="major") == "1.0.0"
