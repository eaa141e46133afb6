#!/usr/bin/env bash
# Sets up a fresh clone: system packages (when we may install them) and a virtualenv in .venv.
# Idempotent: a second run only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v git >/dev/null || need_apt+=(git)
command -v bwrap >/dev/null || need_apt+=(bubblewrap)
# libfaketime: the environment checks move the sandbox's clock with it (skipped, and said so, without)
compgen -G '/usr/lib/*/faketime/libfaketime.so.1' >/dev/null || need_apt+=(libfaketime)
if ((${#need_apt[@]})); then
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
    echo "installing system packages: ${need_apt[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need_apt[@]}" >/dev/null
  else
    echo "warning: missing ${need_apt[*]}; install them (Debian: apt-get install ${need_apt[*]})." >&2
    echo "         without bubblewrap the sandbox falls back to weaker isolation." >&2
  fi
fi

# The plus tier's test generator (Pynguin) lives in its own virtualenv, .venv-plus: its pins
# (libcst, pytest, black) must not move classforge's, and it only ever runs inside the sandbox.
# CLASSFORGE_SKIP_PLUS=1 skips it (a machine that never generates plus tests), and so does a quick
# CLASSFORGE_REUSE_PYTHON setup (no download, no install: plus tests need scripts/setup.sh proper).
plus_reqs=classforge_bench/pipeline/quality/plus/requirements.txt
if [ -z "${CLASSFORGE_SKIP_PLUS:-}" ] && [ -z "${CLASSFORGE_REUSE_PYTHON:-}" ]; then
  if [ ! -x .venv-plus/bin/python ]; then
    echo "setup: creating .venv-plus (the plus tier's test generator) with $("${PYTHON:-python3}" --version 2>&1)"
    "${PYTHON:-python3}" -m venv .venv-plus
  fi
  if [ ! -f .venv-plus/.installed ] || [ "$plus_reqs" -nt .venv-plus/.installed ]; then
    echo "setup: installing $(grep -v '^#' "$plus_reqs" | tr '\n' ' ')into .venv-plus"
    .venv-plus/bin/pip install -q -r "$plus_reqs"
    touch .venv-plus/.installed
  fi
fi

# CLASSFORGE_REUSE_PLUS_PYTHON=/path/to/.venv-plus/bin/python: the same for the plus tier's generator
# (another checkout's .venv-plus): .venv-plus is made without pip and sees that interpreter's
# packages (Pynguin's pins first, then the host packages it sees) through one .pth file.
if [ -n "${CLASSFORGE_REUSE_PLUS_PYTHON:-}" ] && [ ! -x .venv-plus/bin/python ]; then
  echo "setup: creating .venv-plus from $CLASSFORGE_REUSE_PLUS_PYTHON, reusing its packages"
  "$CLASSFORGE_REUSE_PLUS_PYTHON" -m venv --without-pip .venv-plus
  plus_site=$(.venv-plus/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  "$CLASSFORGE_REUSE_PLUS_PYTHON" -c 'import sys; print("\n".join(p for p in sys.path if p.endswith("-packages")))' \
    > "$plus_site/classforge-reuse.pth"
  .venv-plus/bin/python -c 'import pynguin' || {
    echo "setup: error: .venv-plus cannot import pynguin with the packages of $CLASSFORGE_REUSE_PLUS_PYTHON" >&2; exit 1; }
fi

# CLASSFORGE_REUSE_PYTHON=/path/to/python: an interpreter that already has classforge's dependencies
# (e.g. another checkout's .venv/bin/python). .venv is then made from it without pip, and sees this
# checkout's code plus that interpreter's packages through one .pth file: no download, no install,
# a second or so instead of ~2 minutes. For trying a clone quickly (the clone test uses it); a
# plain `make run` installs into .venv as usual.
if [ -n "${CLASSFORGE_REUSE_PYTHON:-}" ]; then
  if [ ! -x .venv/bin/python ]; then
    # Every site-packages folder that interpreter sees (its own, and those its .pth files add).
    base_sites=$("$CLASSFORGE_REUSE_PYTHON" -c 'import sys; print("\n".join(p for p in sys.path if p.endswith("-packages")))')
    echo "setup: creating .venv from $CLASSFORGE_REUSE_PYTHON, reusing its packages ($(echo $base_sites))"
    "$CLASSFORGE_REUSE_PYTHON" -m venv --without-pip .venv
    site=$(.venv/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
    printf '%s\n%s\n' "$PWD" "$base_sites" > "$site/classforge-reuse.pth"
  fi
  .venv/bin/python -c 'import classforge_bench.pipeline.cli' || {
    echo "setup: error: .venv cannot import classforge with the packages of $CLASSFORGE_REUSE_PYTHON" >&2; exit 1; }
  exit 0
fi

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating the virtualenv .venv with $("$PY" --version 2>&1)"
  "$PY" -m venv .venv
fi
stamp=.venv/.classforge-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  # pip -q is silent for minutes on a first install; say what is happening instead.
  echo "setup: installing classforge and its dependencies into .venv (pip install -e '.[all,dev,classeval]':"
  echo "       prefect, datasets, huggingface_hub, openai, matplotlib, pytest, ...; ~2 minutes the first time)"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e ".[all,dev,classeval]"
  echo "setup: done"
  touch "$stamp"
fi

# The code under test imports what the evaluator's environment has (numpy, pandas, ... of the
# classeval extra): .venv-plus sees .venv's packages after its own, so Pynguin's pins stay first.
if [ -x .venv-plus/bin/python ]; then
  plus_site=$(.venv-plus/bin/python -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  .venv/bin/python -c 'import sys; print("\n".join(p for p in sys.path if p.endswith("-packages")))' \
    > "$plus_site/classforge-host-packages.pth"
fi
