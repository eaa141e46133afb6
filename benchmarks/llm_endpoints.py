"""What the endpoint work costs and saves, measured; prints a table.

Usage:
    python benchmarks/llm_endpoints.py [--dataset PATH] [--json OUT]

1. Fail-fast: wall time of `classforge evaluate` (a subprocess, as a user runs it) against an
   unreachable endpoint on 3 ClassEval tasks, until it exits, and its exit code.
2. Pre-flight: wall time and requests of `check_endpoint` against loopback fakes behaving like
   OpenAI and like llama-cpp-python's server (json_schema refused, no usage, n > 1 refused).
3. Repair prompt size: for each composer request recorded in `examples/llm_cache.jsonl` (real
   prompts of the offline example), the estimated tokens of a repair prompt built the old way
   (whole conversation + compose_repair v1) and the new way (compose_repair v2: problems + the
   previous skeleton), with a one-line problem list standing in for the checks' feedback.
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from classforge_bench.pipeline.config import EndpointConfig  # noqa: E402
from classforge_bench.pipeline.llm.preflight import check_endpoint  # noqa: E402
from classforge_bench.pipeline.llm.prompts import load_prompt  # noqa: E402
from classforge_bench.pipeline.llm.tokens import estimate_prompt_tokens  # noqa: E402
from tests.fakes.openai_server import FakeOpenAIServer, ServerProfile  # noqa: E402

PROBLEMS = "- [too-few-methods] 4 method(s) besides __init__, at least 5 required"


def _dead_url() -> str:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return f"http://127.0.0.1:{s.getsockname()[1]}/v1"


def fail_fast(dataset: Path) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        cfg = Path(tmp) / "c.toml"
        cfg.write_text(f'[evaluate.endpoint]\nbase_url = "{_dead_url()}"\nmodel = "m"\n', encoding="utf-8")
        env = os.environ | {"OPENAI_API_KEY": "sk-x"}
        t0 = time.monotonic()
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "classforge_bench.pipeline.cli",
                "evaluate",
                "--config",
                str(cfg),
                "--dataset",
                str(dataset),
                "--max-tasks",
                "3",
                "--out",
                str(Path(tmp) / "r"),
            ],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        return {
            "seconds": round(time.monotonic() - t0, 2),
            "exit_code": proc.returncode,
            "message": (proc.stdout + proc.stderr).strip().splitlines()[-1][:160],
        }


def preflight(profile: ServerProfile) -> dict:
    with FakeOpenAIServer(default='{"ok": true}', models=["m"], profile=profile) as srv:
        t0 = time.monotonic()
        report = check_endpoint(["judge-1"], EndpointConfig(base_url=srv.base_url, model="m", api_key_env=""), {})
        return {
            "seconds": round(time.monotonic() - t0, 3),
            "requests": len(srv.requests),
            "response_format": report.response_format,
            "usage": report.usage,
            "n>1": report.n_above_1,
        }


def repair_sizes() -> list[dict]:
    v1, v2 = load_prompt("compose_repair", 1), load_prompt("compose_repair", 2)
    rows = []
    for line in (ROOT / "examples/llm_cache.jsonl").read_text(encoding="utf-8").splitlines():
        entry = json.loads(line)
        if entry["request"]["role"] != "composer":
            continue
        messages, reply = entry["request"]["messages"], entry["text"]
        old = [*messages, {"role": "assistant", "content": reply}, *v1.messages(problems=PROBLEMS, min_methods=5)]
        new = v2.messages(theme="(theme)", problems=PROBLEMS, min_methods=5, method_count=4, previous=reply)
        rows.append(
            {
                "first_prompt": estimate_prompt_tokens(messages),
                "old_repair": estimate_prompt_tokens(old),
                "new_repair": estimate_prompt_tokens(new),
            }
        )
    return rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--dataset", type=Path, default=ROOT.parent / "shared/data/classeval/ClassEval_data.json")
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    out = {
        "fail_fast": fail_fast(args.dataset) if args.dataset.is_file() else None,
        "preflight_openai_like": preflight(ServerProfile()),
        "preflight_llama_cpp_like": preflight(ServerProfile(json_schema=False, usage=False, n=False, seed=False)),
        "repair_prompt_tokens": repair_sizes(),
    }
    print(json.dumps(out, indent=1))
    if args.json:
        args.json.write_text(json.dumps(out, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
