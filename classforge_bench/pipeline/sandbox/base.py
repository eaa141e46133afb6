"""The sandbox interface every backend implements: files in, one command with limits, a result out.

A run is one call: the backend creates a fresh work dir, writes the files, runs the command under
the limits, reads back the named output files and removes the work dir. Keeping the whole life
cycle inside one call means no backend can leak a work dir or a process between runs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import PurePosixPath
from typing import Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from classforge_bench.pipeline.config import SandboxConfig
from classforge_bench.pipeline.core.errors import InfrastructureError


class SandboxError(InfrastructureError):
    """The sandbox itself failed (could not start, bad request); never a verdict on the code run."""

    def __init__(self, message: str, item_id: str = "") -> None:
        self.item_id = item_id
        super().__init__(f"[{item_id}] {message}" if item_id else message)


class RunLimits(BaseModel):
    """Limits of one run. Memory and file size apply per process; processes count threads too."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    wall_s: float = Field(60.0, gt=0)
    cpu_s: float | None = Field(None, gt=0, description="per-process CPU seconds; default: the wall limit")
    memory_mb: int = Field(2048, ge=64)
    max_processes: int = Field(64, ge=1)
    max_file_mb: int = Field(64, ge=1)
    output_cap_bytes: int = Field(65536, ge=1024)
    max_output_file_bytes: int = Field(16 * 1024 * 1024, ge=1024, description="cap on each named output file read back")

    @classmethod
    def from_config(cls, config: SandboxConfig, wall_s: float | None = None) -> RunLimits:
        return cls(
            wall_s=wall_s if wall_s is not None else config.wall_limit_s,
            memory_mb=config.memory_mb,
            max_processes=config.max_processes,
            max_file_mb=config.max_file_mb,
            output_cap_bytes=config.output_cap_bytes,
        )

    @property
    def cpu_limit_s(self) -> int:
        # A whole second above the wall limit: the wall clock is the limit we report; the CPU
        # rlimit only stops a process that escaped the wall-clock kill.
        return int(self.cpu_s if self.cpu_s is not None else self.wall_s) + 1


class Perturbation(BaseModel):
    """How one run's environment should differ from the usual one (the environment checks).

    A backend applies what it can and says how in `ExecResult.applied`; what it cannot apply goes
    to `ExecResult.not_applied` with the reason, so a check is never passed silently.
    """

    model_config = ConfigDict(extra="forbid", frozen=True)
    env: dict[str, str] = Field(default_factory=dict, description="variables set on top of the run's own (TZ, ...)")
    cwd: str | None = Field(None, description="work-dir sub-folder the files go to and the command starts in")
    hostname: str | None = None
    user: str | None = Field(None, description="USER/LOGNAME")
    uid: int | None = Field(None, ge=0, description="uid inside a user namespace")
    clock_shift_days: int | None = Field(None, description="libfaketime offset from the real clock")
    faketime_library: str | None = Field(None, description="libfaketime.so.1; default: looked up in the usual folders")
    no_network: bool = False

    def prefixed(self, name: str) -> str:
        return f"{self.cwd}/{name}" if self.cwd else name


class ExecResult(BaseModel):
    """What one run produced. `stdout`/`stderr` are capped; `outputs` holds the named files found."""

    model_config = ConfigDict(extra="forbid")
    exit_code: int | None = Field(None, description="None when the process was killed by a signal")
    signal: int | None = None
    timed_out: bool = False
    wall_s: float
    cpu_s: float | None = Field(None, description="None where the isolation hides it (bwrap)")
    peak_memory_mb: float | None = Field(None, description="largest resident set of any single process")
    stdout: str = ""
    stderr: str = ""
    stdout_truncated: bool = False
    stderr_truncated: bool = False
    outputs: dict[str, bytes] = Field(default_factory=dict)
    isolation: str = Field(description="what actually isolated the run, e.g. 'bwrap', 'unshare', 'none', 'docker'")
    applied: dict[str, str] = Field(default_factory=dict, description="perturbation aspect -> how it was applied")
    not_applied: dict[str, str] = Field(default_factory=dict, description="perturbation aspect -> why it was not")

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out


@runtime_checkable
class SandboxBackend(Protocol):
    """A place to run untrusted commands. `python` is the interpreter path valid inside the sandbox."""

    name: str

    @property
    def python(self) -> str: ...

    @property
    def isolation(self) -> str: ...

    def run(
        self,
        files: Mapping[str, str | bytes],
        command: Sequence[str],
        limits: RunLimits,
        outputs: Sequence[str] = (),
        env: Mapping[str, str] | None = None,
        perturbation: Perturbation | None = None,
    ) -> ExecResult: ...


def check_relative_path(name: str) -> PurePosixPath:
    """A work-dir file name must stay inside the work dir: relative, no '..', no empty parts."""
    path = PurePosixPath(name)
    if not name or path.is_absolute() or any(part in ("..", "") for part in path.parts) or name != str(path):
        raise SandboxError(f"file name must be a plain relative path inside the work dir: {name!r}")
    return path


def cap_text(data: bytes, cap: int) -> tuple[str, bool]:
    """Decode at most `cap` bytes; say whether anything was cut."""
    truncated = len(data) > cap
    return data[:cap].decode("utf-8", errors="replace"), truncated
