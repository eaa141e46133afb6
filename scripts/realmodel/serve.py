"""Serve one GGUF model as llama.cpp's OpenAI-compatible HTTP server until SIGTERM.

Runs inside the real-model virtualenv (`.cache/realmodel/venv`, which has `xllamacpp`), started in
the background by `realmodel.py up`; it is not part of the product and imports nothing from it.
xllamacpp embeds llama.cpp's own C++ server (the same code as `llama-server`), so the endpoint's
behaviour is llama.cpp's, from a prebuilt wheel instead of a 25-40 minute compile.
"""

from __future__ import annotations

import argparse
import os
import signal
import sys
import threading
import time


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--model", required=True, help="path of the .gguf file")
    parser.add_argument("--alias", required=True, help="model name the server answers to and reports")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--ctx", type=int, default=8192, help="context window (tokens) of the one slot")
    parser.add_argument("--threads", type=int, default=1, help="generation and prompt threads")
    parser.add_argument("--parallel", type=int, default=1, help="slots (concurrent requests)")
    args = parser.parse_args(argv)

    import xllamacpp as xlc

    params = xlc.CommonParams()
    params.model.path = args.model
    params.model_alias = {args.alias}
    params.hostnames = [args.host]
    params.port = args.port
    # One slot owns the whole window: on a shared 2-core machine a second slot only halves each
    # request's context and makes both slower.
    params.n_ctx = args.ctx * args.parallel
    params.n_parallel = args.parallel
    params.cpuparams.n_threads = args.threads
    params.cpuparams_batch.n_threads = args.threads
    params.n_threads_http = 2
    params.endpoint_metrics = True
    params.endpoint_props = True
    # The prompt cache defaults to 8 GiB of RAM; a test loop needs a fraction of that.
    params.cache_ram_mib = 1024

    stop = threading.Event()

    def _stop(signum, frame):  # noqa: ARG001 - signal handler signature
        stop.set()

    signal.signal(signal.SIGTERM, _stop)
    signal.signal(signal.SIGINT, _stop)
    started = time.monotonic()
    server = xlc.Server(params)
    print(f"listening on {server.listening_address} after {time.monotonic() - started:.2f} s", flush=True)
    stop.wait()
    print("stopping", flush=True)
    # The embedded server's threads are not joined by interpreter shutdown; leave at once.
    os._exit(0)


if __name__ == "__main__":
    sys.exit(main())
