"""Exact and near-duplicate detection: within a harvest, against earlier harvests, against the
project's earlier releases, and against reference corpora such as ClassEval (decontamination).

Exact: same normalised source (comments and formatting do not count). Near: MinHash over token
shingles with an LSH index, confirmed by the estimated Jaccard similarity. Identifiers other than
keywords and builtins become one placeholder before shingling, so renaming a variable or a field
(a type-2 clone) does not hide a copy; literals stay, so distinct classes of similar style stay
apart (measured on ClassEval: the most similar pair of distinct tasks scores 0.73).

A release task's solution is a composed class: two harvested classes merged, renamed and
reformatted. A source class inside it shares most of its shingles with it but is only about half
of it, so Jaccard cannot find it; earlier releases are checked by containment instead (the share
of the new class's shingles found in the solution, estimated from the MinHash Jaccard and the two
shingle-set sizes), against every solution class of every release, with the same threshold.
Measured on ClassEval (`benchmarks/release_containment.py`): no class reaches 0.85 in a solution
composed of two other classes, except ClassEval_32 and ClassEval_37, which are near-copies of each
other.
"""

from __future__ import annotations

import ast
import builtins
import io
import json
import keyword
import tokenize
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from datasketch import MinHash, MinHashLSH

from classforge_bench.pipeline.config import DedupConfig
from classforge_bench.pipeline.core import parsing
from classforge_bench.pipeline.core import reasons as R
from classforge_bench.pipeline.core.errors import InputError
from classforge_bench.pipeline.core.funnel import KEEP, Verdict
from classforge_bench.pipeline.core.records import HarvestedClass, content_id
from classforge_bench.pipeline.core.store import read_jsonl
from classforge_bench.pipeline.harvest.candidates import normalised_source, segment

_SKIP = {
    tokenize.COMMENT,
    tokenize.NL,
    tokenize.NEWLINE,
    tokenize.INDENT,
    tokenize.DEDENT,
    tokenize.ENCODING,
    tokenize.ENDMARKER,
}
# Where a match came from decides the reason code a reader sees in the funnel.
REASONS = {
    "harvest": (R.EXACT_DUPLICATE, R.NEAR_DUPLICATE),
    "earlier": (R.EARLIER_HARVEST, R.EARLIER_HARVEST),
    "release": (R.EARLIER_RELEASE, R.EARLIER_RELEASE),
    "reference": (R.REFERENCE_CORPUS, R.REFERENCE_CORPUS),
}


# (version, task id, solution code, ids of the harvested classes the task was built from)
ReleasedSolution = tuple[str, str, str, frozenset[str]]

_KEPT_NAMES = frozenset(keyword.kwlist) | frozenset(keyword.softkwlist) | frozenset(dir(builtins)) | {"self", "cls"}


def code_tokens(source: str) -> list[str]:
    try:
        return [t.string for t in tokenize.generate_tokens(io.StringIO(source).readline) if t.type not in _SKIP]
    except (tokenize.TokenError, SyntaxError, IndentationError):
        return source.split()


def clone_tokens(source: str) -> list[str]:
    """Tokens with every non-keyword, non-builtin identifier replaced by one placeholder."""
    return ["ID" if (tok.isidentifier() and tok not in _KEPT_NAMES) else tok for tok in code_tokens(source)]


@dataclass(frozen=True)
class Origin:
    kind: str  # harvest | earlier | release | reference
    label: str  # what to show: a class id, a task id, a snapshot


class DedupIndex:
    def __init__(self, cfg: DedupConfig):
        self.cfg = cfg
        # Banding makes LSH recall fall off just above its threshold (8 bands x 16 rows only finds
        # pairs reliably from ~0.88), so candidates come from a looser index and the configured
        # threshold is applied to the estimated Jaccard afterwards.
        self._lsh = MinHashLSH(threshold=max(0.05, cfg.near_threshold - 0.2), num_perm=cfg.num_perm)
        self._exact: dict[str, Origin] = {}
        self._hashes: dict[str, MinHash] = {}
        self._origins: dict[str, Origin] = {}
        # Earlier releases' solution classes, matched by containment:
        # (MinHash, shingles, origin, ids of the harvested classes the task was built from).
        self._releases: list[tuple[MinHash, int, Origin, frozenset[str]]] = []
        # (hash values, one row per release class; their sizes), made when first needed
        self._release_arrays: tuple[np.ndarray, np.ndarray] | None = None
        # What this index was built from, for the snapshot's decontamination.json ("checked" / "not checked").
        self.corpora: dict[str, list[str]] = {"checked": [], "not_checked": []}

    def __len__(self) -> int:
        return len(self._origins)

    def _minhash(self, source: str) -> MinHash:
        return self._fingerprint(source)[0]

    def _fingerprint(self, source: str) -> tuple[MinHash, int]:
        """The MinHash of the source's shingles and how many distinct shingles it has."""
        tokens = clone_tokens(source)
        k = self.cfg.shingle_size
        mh = MinHash(num_perm=self.cfg.num_perm, seed=1)
        shingles = {" ".join(tokens[i : i + k]) for i in range(max(1, len(tokens) - k + 1))}
        mh.update_batch([s.encode("utf-8") for s in shingles])
        return mh, len(shingles)

    @staticmethod
    def _exact_key(source: str) -> str:
        try:
            return content_id(normalised_source(source))
        except SyntaxError:
            return content_id(" ".join(code_tokens(source)))

    def add(self, source: str, origin: Origin) -> None:
        self._add(self._exact_key(source), self._minhash(source), origin)

    def add_release(self, source: str, origin: Origin, built_from: frozenset[str] = frozenset()) -> None:
        """A solution class of an earlier release: matched by containment (see above).

        `built_from`: the harvested class ids the task was made of. The very class a release was
        built from is not held against itself when its own snapshot is harvested again (a re-run
        must reproduce the snapshot); publishing still leaves that release's tasks out."""
        self._releases.append((*self._fingerprint(without_docstrings(source)), origin, built_from))
        self._release_arrays = None

    def check_and_add(self, source: str, origin: Origin, class_id: str | None = None) -> Verdict:
        """Check a class and, when it is kept, index it; its fingerprints are computed once.

        A harvested class's id is `cls-` and the digest of its normalised source, which is the
        exact key: the source is then not parsed and unparsed a second time."""
        exact_key = (
            class_id.removeprefix("cls-") if class_id and class_id.startswith("cls-") else self._exact_key(source)
        )
        mh = self._minhash(source)
        verdict = self._check(exact_key, mh)
        if verdict.keep and self._releases:
            verdict = self._check_releases(*self._fingerprint(without_docstrings(source)), class_id)
        if verdict.keep:
            self._add(exact_key, mh, origin)
        return verdict

    def _check_releases(self, mh: MinHash, size: int, class_id: str | None) -> Verdict:
        if self._release_arrays is None:
            # One row of hash values per release class: every comparison of a new class is one
            # array operation (MinHash.jaccard is the share of equal hash values).
            self._release_arrays = (
                np.vstack([r[0].hashvalues for r in self._releases]),
                np.array([r[1] for r in self._releases], dtype=float),
            )
        matrix, sizes = self._release_arrays
        jaccard = (matrix == mh.hashvalues).mean(axis=1)
        # |A and B| = J (|A| + |B|) / (1 + J); containment of A in B divides that by |A|.
        contained = np.minimum(1.0, jaccard * (size + sizes) / ((1 + jaccard) * max(1, size)))
        if class_id is not None:
            contained[[i for i, r in enumerate(self._releases) if class_id in r[3]]] = 0.0
        best = int(np.argmax(contained))
        if contained[best] < self.cfg.near_threshold:
            return KEEP
        return Verdict.drop(
            REASONS["release"][1], f"{contained[best]:.0%} of its code is in {self._releases[best][2].label}"
        )

    def _check(self, exact_key: str, mh: MinHash) -> Verdict:
        exact = self._exact.get(exact_key)
        if exact is not None:
            return Verdict.drop(REASONS[exact.kind][0], f"same code as {exact.label}")
        best: tuple[float, Origin] | None = None
        for key in self._lsh.query(mh):
            sim = mh.jaccard(self._hashes[key])
            if sim >= self.cfg.near_threshold and (best is None or sim > best[0]):
                best = (sim, self._origins[key])
        if best is not None:
            return Verdict.drop(REASONS[best[1].kind][1], f"Jaccard {best[0]:.2f} with {best[1].label}")
        return KEEP

    def _add(self, exact_key: str, mh: MinHash, origin: Origin) -> None:
        key = f"{origin.kind}:{origin.label}:{len(self._origins)}"
        self._exact.setdefault(exact_key, origin)
        self._lsh.insert(key, mh)
        self._hashes[key] = mh
        self._origins[key] = origin


def without_docstrings(source: str) -> str:
    """The source without its docstrings: a composer rewrites every docstring of a class it
    publishes, so they say nothing about whether the code was copied."""
    try:
        module = parsing.parse(source)
    except SyntaxError:
        return source
    for node in ast.walk(module):
        if isinstance(node, (ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and node.body:
            first = node.body[0]
            if (
                isinstance(first, ast.Expr)
                and isinstance(first.value, ast.Constant)
                and isinstance(first.value.value, str)
            ):
                node.body = node.body[1:] or [ast.Pass()]
    return ast.unparse(module)


def classes_in(source: str) -> Iterator[tuple[str, str]]:
    """(name, source) of each top-level class in a module's text."""
    try:
        module = parsing.parse(source)
    except SyntaxError:
        return
    lines = source.splitlines(keepends=True)
    for node in module.body:
        if isinstance(node, ast.ClassDef):
            yield node.name, segment(lines, node)


class ReferenceCorpusError(InputError):
    """A configured reference corpus that cannot be read as a dataset; the message names the file."""


def load_reference_corpus(index: DedupIndex, path: Path) -> int:
    """Add every class of a ClassEval-format dataset (its solutions) as a reference.

    A JSON list of tasks, or Parquet (a file, or a folder with data/*.parquet as the Hub stores ClassEval).
    """
    path = Path(path)
    try:
        if path.is_dir() or path.suffix == ".parquet":
            import pyarrow.parquet as pq

            files = sorted((path / "data").rglob("*.parquet")) if path.is_dir() else [path]
            tasks = [row for f in files for row in pq.read_table(f, columns=["task_id", "solution_code"]).to_pylist()]
        else:
            tasks = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:  # json, pyarrow (ArrowInvalid is a ValueError) and file errors
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise ReferenceCorpusError(f"harvest.dedup.reference_corpora: {path}: cannot read: {reason}") from exc
    if not isinstance(tasks, list) or not all(isinstance(t, dict) for t in tasks):
        raise ReferenceCorpusError(f"harvest.dedup.reference_corpora: {path}: not a list of tasks (JSON objects)")
    n = 0
    for task in tasks:
        for name, src in classes_in(task.get("solution_code", "")):
            index.add(src, Origin("reference", f"{task.get('task_id', '?')} ({name})"))
            n += 1
    return n


def load_earlier_harvest(index: DedupIndex, classes_jsonl: Path, snapshot: str) -> int:
    n = 0
    for rec in read_jsonl(classes_jsonl, HarvestedClass):
        index.add(rec.source, Origin("earlier", f"{snapshot}/{rec.id}"))
        n += 1
    return n


def load_earlier_releases(index: DedupIndex, solutions: Iterable[ReleasedSolution]) -> dict[str, int]:
    """Add every solution class of the given release tasks (`classforge_bench.pipeline.release.history.release_solutions`
    reads them; the edge passes them in, as the harvest does not depend on the release package);
    returns classes per version."""
    counts: dict[str, int] = {}
    for version, task_id, solution, built_from in solutions:
        counts.setdefault(version, 0)
        for name, src in classes_in(solution):
            index.add_release(src, Origin("release", f"release {version} task {task_id} ({name})"), built_from)
            counts[version] += 1
    return counts
