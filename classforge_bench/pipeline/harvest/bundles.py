"""Git bundles as a harvest source: how the project ships real repositories, history included.

`harvest.bundle_sources` names `.bundle` files or folders of them. Each is unpacked once into a
bare repository `<dest_root>/<owner>__<name>.git` (the bundle's file name without `.bundle`), which
the local source then reads like any other repository: first-seen dates come from the bundled
commits. An unpacked copy is reused while it matches its bundle (same size and modification time).
"""

from __future__ import annotations

import shutil
from pathlib import Path

import git

from classforge_bench.pipeline.harvest.clone import GIT_ENV
from classforge_bench.pipeline.harvest.local_source import SourceError


def bundle_files(locations: list[Path]) -> list[Path]:
    """Every `.bundle` file named, directly or as a folder's children, in name order."""
    found: list[Path] = []
    for loc in locations:
        path = Path(loc)
        if path.is_file() and path.suffix == ".bundle":
            found.append(path)
        elif path.is_dir():
            found += sorted(path.glob("*.bundle"))
        else:
            raise SourceError(f"bundle source {str(loc)!r} is neither a .bundle file nor a folder")
    return found


def _stamp(bundle: Path) -> str:
    st = bundle.stat()
    return f"{st.st_size}:{st.st_mtime_ns}"


def unpack_bundle(bundle: Path, dest_root: Path) -> Path:
    """The bundle as a bare repository under `dest_root` (unpacked on first use)."""
    dest = Path(dest_root) / (bundle.name.removesuffix(".bundle") + ".git")
    marker = dest / "classforge-bundle"
    if marker.is_file() and marker.read_text(encoding="utf-8") == _stamp(bundle):
        return dest
    shutil.rmtree(dest, ignore_errors=True)
    tmp = dest.with_name(dest.name + ".partial")
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.parent.mkdir(parents=True, exist_ok=True)
    try:
        git.Repo.clone_from(str(bundle.resolve()), tmp, bare=True, env=GIT_ENV)
    except git.GitCommandError as exc:
        shutil.rmtree(tmp, ignore_errors=True)
        raise SourceError(f"{bundle}: not a readable git bundle: {(exc.stderr or '').strip()[-300:]}") from exc
    (tmp / "classforge-bundle").write_text(_stamp(bundle), encoding="utf-8")
    tmp.rename(dest)
    return dest


def unpack_bundles(locations: list[Path], dest_root: Path) -> list[Path]:
    return [unpack_bundle(b, dest_root) for b in bundle_files(locations)]
