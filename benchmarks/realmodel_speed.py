"""Prompt and generation speed of the real local model, and what `up` costs.

    python scripts/realmodel/realmodel.py up
    python benchmarks/realmodel_speed.py [--base-url http://127.0.0.1:8765/v1] [--repeats 3]

Sends a ~2,000-token prompt (prompt processing) and a 256-token generation (decoding), each
`--repeats` times with the server's prompt cache defeated, and prints the median tokens per second
from the server's own `timings` next to the wall time, plus the machine's load average (the
machine is shared, so the load is part of the number).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time
import urllib.request


def post(url: str, payload: dict) -> tuple[dict, float]:
    req = urllib.request.Request(url, data=json.dumps(payload).encode(), headers={"Content-Type": "application/json"})
    started = time.monotonic()
    with urllib.request.urlopen(req, timeout=1800) as resp:
        body = json.loads(resp.read())
    return body, time.monotonic() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--base-url", default="http://127.0.0.1:8765/v1")
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    url = f"{args.base_url.rstrip('/')}/chat/completions"
    prompt_rates, gen_rates, walls = [], [], []
    for i in range(args.repeats):
        # A distinct first line defeats the server's prompt cache, so every prompt is processed whole.
        filler = f"run {i} {time.time_ns()}\n" + "\n".join(
            f"def helper_{k}(x):\n    return x * {k}\n" for k in range(170)
        )
        body, wall = post(
            url, {"messages": [{"role": "user", "content": filler + "\nSay OK."}], "max_tokens": 1, "temperature": 0}
        )
        prompt_rates.append(body["timings"]["prompt_per_second"])
        n_prompt = body["usage"]["prompt_tokens"]
        body, wall = post(
            url,
            {
                "messages": [
                    {
                        "role": "user",
                        "content": f"{i}: write a long Python class for a "
                        "bank account with ten methods and docstrings.",
                    }
                ],
                "max_tokens": 256,
                "temperature": 0,
                "ignore_eos": True,
            },
        )
        gen_rates.append(body["timings"]["predicted_per_second"])
        walls.append(wall)
        n_gen = body["usage"]["completion_tokens"]
    print(
        f"prompt processing: {statistics.median(prompt_rates):.1f} tokens/s (median of {args.repeats}, "
        f"{n_prompt}-token prompts; all: {[round(r, 1) for r in prompt_rates]})"
    )
    print(
        f"generation: {statistics.median(gen_rates):.1f} tokens/s (median of {args.repeats}, {n_gen} tokens; "
        f"all: {[round(r, 1) for r in gen_rates]}; wall {[round(w, 1) for w in walls]} s)"
    )
    print(f"load average during the run: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
