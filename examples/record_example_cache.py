"""Re-record `examples/llm_cache.jsonl`, the response cache the offline example replays.

THESE RESPONSES WERE PREPARED BY HAND FOR THE EXAMPLE. NO LANGUAGE MODEL PRODUCED THEM.
The fused classes, test suites, solutions and judge verdicts in `examples/llm_responses/` were
written by a person so that the offline example exercises every construction stage with
realistic content; the model names in the example configuration (`example-handwritten-*`) say so
too. A real build points the roles at real endpoints instead (see "Pointing the build at a real
endpoint" below).

What the script does:
1. reads the harvested example classes (running the harvest first if the snapshot is missing);
2. checks that every pair the pairing stage chooses has a hand-written fusion;
3. starts the project's loopback OpenAI-compatible fake server (`tests.fakes.openai_server`) with a
   responder that answers each role from `examples/llm_responses/<task>/`;
4. runs the real build (`classforge_bench.pipeline.construct.run.run_build`, live mode, real sandbox gate) against it
   with a fresh response cache, and requires every candidate to become a task;
5. exports that cache as JSONL to `examples/llm_cache.jsonl`;
6. stops the server and replays the build from the exported file alone, requiring the same
   tasks byte for byte.

Run it from the repository root after changing the example corpus, a construction prompt or the
example's model settings (all of them change the cache keys):

    .venv/bin/python examples/record_example_cache.py [--config examples/classforge.toml]

The example's construction settings pin the three hand-written pairs and set the targets to
exactly those; their settings are the [llm] and [construction] tables of `examples/classforge.toml`.

Pointing the build at a real endpoint: set `[llm] mode = "live"`, drop `cache_imports`, and give
each role (`[llm.composer]`, `[llm.test_writer]`, three `[[llm.judges]]`, `[llm.solver]`) a
`base_url`, a `model` and the name of the environment variable holding its key (`api_key_env`,
default OPENAI_API_KEY); raise the pairing targets to build more tasks.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
RESPONSES = Path(__file__).resolve().parent / "llm_responses"


@dataclass(frozen=True)
class HandWritten:
    """One fused task written by hand: what each role answers for it."""

    folder: str
    sources: frozenset[str]
    class_name: str
    skeleton: str
    tests: str
    solution: str
    notes: dict[str, Any]

    @classmethod
    def load(cls, folder: Path) -> HandWritten:
        notes = json.loads((folder / "replies.json").read_text(encoding="utf-8"))
        return cls(
            folder=folder.name,
            sources=frozenset(notes["sources"]),
            class_name=notes["class_name"],
            skeleton=(folder / "skeleton.py").read_text(encoding="utf-8"),
            tests=(folder / "tests.py").read_text(encoding="utf-8"),
            solution=(folder / "solution.py").read_text(encoding="utf-8"),
            notes=notes,
        )


def fenced(intro: str, code: str) -> str:
    return f"{intro}\n\n```python\n{code.rstrip()}\n```\n"


class Responder:
    """Answers a chat request the way each role's hand-written reply says.

    The stage is recognised from the system prompt (each construction prompt has its own), the
    task from the class names in the prompt, a judge from its model name.
    """

    def __init__(self, tasks: list[HandWritten], judge_models: list[str]) -> None:
        from classforge_bench.pipeline.llm.prompts import load_prompt

        self.tasks = tasks
        self.judge_models = judge_models
        self.stages = {
            name: load_prompt(name).messages(**_blank(name))[0]["content"].splitlines()[0]
            for name in ("compose", "tests_writer", "judge", "solve")
        }

    def _stage(self, body: dict[str, Any]) -> str:
        first = body["messages"][0]
        line = first["content"].splitlines()[0] if first.get("role") == "system" else ""
        for name, opening in self.stages.items():
            if line == opening:
                return name
        raise LookupError(f"unrecognised request: {line[:80]!r}")

    def _task(self, text: str, stage: str) -> HandWritten:
        for task in self.tasks:
            if stage == "compose" and all(f"Class `{s}`" in text for s in task.sources):
                return task
            if stage != "compose" and f"class {task.class_name}:" in text:
                return task
        raise LookupError(f"no hand-written {stage} reply for this prompt")

    def __call__(self, body: dict[str, Any]) -> str:
        from tests.fakes.openai_server import messages_text

        stage = self._stage(body)
        task = self._task(messages_text(body["messages"]), stage)
        if stage == "compose":
            return fenced(task.notes["composer"], task.skeleton)
        if stage == "tests_writer":
            return fenced(task.notes["test_writer"], task.tests)
        if stage == "solve":
            return fenced(task.notes["solver"], task.solution)
        model = body.get("model")
        # With distinct judge models each judge gets its own verdict; with one model for all three
        # the requests are identical, so all get the first verdict.
        index = self.judge_models.index(model) if self.judge_models.count(model) == 1 else 0
        return json.dumps(task.notes["judges"][index], ensure_ascii=False)


def _blank(name: str) -> dict[str, str]:
    from classforge_bench.pipeline.llm.prompts import load_prompt

    return dict.fromkeys(load_prompt(name).fields, "")


def load_example_config(path: Path):
    """The example's configuration (its [llm] and [construction] tables hold the example's settings)."""
    from classforge_bench.pipeline.config import load_config

    return load_config(path, env={})


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, default=Path("examples/classforge.toml"))
    parser.add_argument("--out", type=Path, default=Path("examples/llm_cache.jsonl"))
    args = parser.parse_args(argv)

    from classforge_bench.pipeline.construct.pairing import make_pairs
    from classforge_bench.pipeline.construct.run import run_build, snapshot_classes_path
    from classforge_bench.pipeline.core.records import HarvestedClass
    from classforge_bench.pipeline.core.store import read_jsonl
    from classforge_bench.pipeline.harvest.run import run_harvest
    from tests.fakes.openai_server import FakeOpenAIServer

    config = load_example_config(args.config)
    classes_path = snapshot_classes_path(config)
    if not classes_path.exists():
        print(f"{classes_path} missing; harvesting the example corpus first")
        run_harvest(config.harvest)
    classes = list(read_jsonl(classes_path, HarvestedClass))
    tasks = [HandWritten.load(d) for d in sorted(RESPONSES.iterdir()) if (d / "replies.json").exists()]

    pairs = make_pairs(classes, config.construction.pairing).pairs
    known = {t.sources for t in tasks}
    missing = [
        f"{p.first.class_name} + {p.second.class_name}"
        for p in pairs
        if frozenset((p.first.class_name, p.second.class_name)) not in known
    ]
    if missing:
        print(
            f"no hand-written fusion for: {', '.join(missing)}; add one under {RESPONSES} "
            "or set the example's pairing targets ([construction.pairing] in examples/classforge.toml)",
            file=sys.stderr,
        )
        return 2

    with tempfile.TemporaryDirectory(prefix="classforge-record-") as tmp:
        work = Path(tmp)
        live = config.model_copy(deep=True)
        live.llm.mode = "live"
        live.llm.cache_path = work / "llm.sqlite"
        live.llm.cache_imports = []
        live.llm.budget_usd = None
        responder = Responder(tasks, [j.model for j in live.llm.judges])
        with FakeOpenAIServer(default=responder) as server:
            for endpoint in (live.llm.composer, live.llm.test_writer, *live.llm.judges, live.llm.solver):
                endpoint.base_url = server.base_url
            recorded = run_build(live, {}, classes_path=classes_path, out_dir=work / "live")
            unmatched = list(server.unmatched)
        failed = [r for r in recorded.rejections if r.stage != "pairing"]
        if failed or recorded.incomplete or unmatched or len(recorded.tasks) != len(pairs):
            print("the hand-written responses did not build every task:", file=sys.stderr)
            for item in [*failed, *recorded.incomplete]:
                print(f"  {item.model_dump_json()}", file=sys.stderr)
            return 1

        from classforge_bench.pipeline.llm.cache import ResponseCache

        with ResponseCache(live.llm.cache_path) as cache:
            entries = cache.export_jsonl(args.out)

        # Replay from the exported file alone, the server gone, as a fresh checkout would.
        replay = config.model_copy(deep=True)
        replay.llm.mode = "replay"
        replay.llm.cache_path = work / "replay.sqlite"
        replay.llm.cache_imports = [args.out]
        replayed = run_build(replay, {}, classes_path=classes_path, out_dir=work / "replay")
        same = (work / "replay" / "tasks.jsonl").read_bytes() == (work / "live" / "tasks.jsonl").read_bytes()
        if replayed.incomplete or not same:
            print("replaying the exported cache did not reproduce the tasks", file=sys.stderr)
            return 1

    print(f"recorded {entries} responses for {len(recorded.tasks)} tasks into {args.out}")
    for task in recorded.tasks:
        print(
            f"  {task.task_id} {task.class_name} ({task.composition_type}: {task.domain1} + {task.domain2}), "
            f"{task.metrics.method_count} methods, depth {task.metrics.dependency_depth}, "
            f"coverage {task.coverage}%, judges {task.judge_scores}"
        )
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))  # run as a script from a checkout without installing
    raise SystemExit(main())
