"""Runs as PID 1 of a sandbox container (`python -I -S -c <this file>`); standard library only.

A read-only container with a tmpfs work dir cannot receive files through the archive API (it does
not write to tmpfs mounts) and must not leave output files behind, so this bootstrap carries both
ways: it unpacks the files from the CF_PAYLOAD_* environment variables into the work dir, runs the
command with a clean environment, a deadline and capped output, and prints one JSON envelope with
the exit status, resource usage, output and the named output files as its last stdout line.

It makes itself non-dumpable first: the payload (the harness key included) stays in this
process's initial environment, and the command, running as the same uid without capabilities,
then cannot read /proc/1/environ, /proc/1/mem or our stdout descriptor.
"""

import base64
import json
import os
import resource
import select
import signal
import stat
import subprocess
import sys
import time
import zlib


def _undumpable() -> None:
    try:
        import ctypes

        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


def _payload() -> dict:
    count = int(os.environ["CF_PAYLOAD_N"])
    text = "".join(os.environ[f"CF_PAYLOAD_{i}"] for i in range(count))
    return json.loads(zlib.decompress(base64.b64decode(text)))


def _write_files(files: dict) -> None:
    for name, data in files.items():
        path = os.path.join(os.getcwd(), name)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as fh:
            fh.write(base64.b64decode(data))


def _run(command: list, env: dict, wall_s: float, cap: int) -> dict:
    start = time.monotonic()
    proc = subprocess.Popen(
        command,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        close_fds=True,
    )
    stdout, stderr = proc.stdout, proc.stderr
    assert stdout is not None and stderr is not None  # both are pipes
    streams = {stdout.fileno(): bytearray(), stderr.fileno(): bytearray()}
    truncated = dict.fromkeys(streams, False)
    open_fds = list(streams)

    def pump(timeout: float) -> None:
        if not open_fds:
            time.sleep(timeout)
            return
        ready, _, _ = select.select(open_fds, [], [], timeout)
        for fd in ready:
            chunk = os.read(fd, 65536)
            if not chunk:
                open_fds.remove(fd)
                continue
            room = cap - len(streams[fd])
            streams[fd] += chunk[: max(room, 0)]
            truncated[fd] = truncated[fd] or len(chunk) > room

    timed_out = False
    while proc.poll() is None:
        remaining = start + wall_s - time.monotonic()
        if remaining <= 0:
            timed_out = True
            break
        pump(min(remaining, 0.02))
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    until = time.monotonic() + 0.2  # what is left in the pipes; orphans cannot stall us
    while open_fds and time.monotonic() < until:
        pump(max(0.0, until - time.monotonic()))
    proc.wait()
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)  # our only waited-for child
    out_fd, err_fd = stdout.fileno(), stderr.fileno()
    return {
        "exit_code": proc.returncode if proc.returncode >= 0 else None,
        "signal": -proc.returncode if proc.returncode < 0 else None,
        "timed_out": timed_out,
        "wall_s": time.monotonic() - start,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "max_rss_kb": usage.ru_maxrss,
        "stdout": base64.b64encode(bytes(streams[out_fd])).decode(),
        "stderr": base64.b64encode(bytes(streams[err_fd])).decode(),
        "stdout_truncated": truncated[out_fd],
        "stderr_truncated": truncated[err_fd],
    }


def _read_outputs(names: list, cap: int) -> dict:
    found = {}
    for name in names:
        try:
            fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError:
            continue
        try:
            info = os.fstat(fd)
            if stat.S_ISREG(info.st_mode) and info.st_size <= cap:
                with os.fdopen(os.dup(fd), "rb") as fh:
                    found[name] = base64.b64encode(fh.read(cap + 1)[:cap]).decode()
        finally:
            os.close(fd)
    return found


def main() -> int:
    _undumpable()
    payload = _payload()
    _write_files(payload["files"])
    envelope = _run(payload["command"], payload["env"], float(payload["wall_s"]), int(payload["cap"]))
    envelope["outputs"] = _read_outputs(payload["outputs"], int(payload["output_file_cap"]))
    sys.stdout.write("\n" + json.dumps(envelope) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
