"""A stand-in for the docker SDK client: records what the backend asks for and runs the container's
command as a plain local process (no isolation!) so the docker code path runs end to end."""

from __future__ import annotations

import shutil
import subprocess
import tempfile

import requests


class FakeContainer:
    def __init__(self, options: dict) -> None:
        self.options = options
        self.id = f"fake{id(self):x}"
        self.started = self.killed = self.removed = False
        self._proc: subprocess.Popen | None = None
        self._stdout = b""
        self.workdir = tempfile.mkdtemp(prefix="cf-fake-docker-")

    def start(self) -> None:
        self.started = True
        self._proc = subprocess.Popen(
            self.options["command"],
            cwd=self.workdir,
            env=dict(self.options["environment"]),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    def wait(self, timeout: float | None = None) -> dict:
        try:
            self._stdout, _ = self._proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired as exc:
            raise requests.exceptions.ReadTimeout("fake wait timed out") from exc
        return {"StatusCode": self._proc.returncode}

    def kill(self) -> None:
        self.killed = True
        self._proc.kill()
        self._stdout, _ = self._proc.communicate()

    def logs(self, stdout: bool = True, stderr: bool = False) -> bytes:
        return self._stdout if stdout else b""

    def remove(self, force: bool = False) -> None:
        self.removed = True
        shutil.rmtree(self.workdir, ignore_errors=True)


class FakeContainers:
    def __init__(self) -> None:
        self.created: list[FakeContainer] = []

    def create(self, **options) -> FakeContainer:
        container = FakeContainer(options)
        self.created.append(container)
        return container


class FakeDockerClient:
    def __init__(self) -> None:
        self.containers = FakeContainers()

    def ping(self) -> bool:
        return True
