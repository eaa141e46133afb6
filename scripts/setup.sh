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

PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  echo "setup: creating the virtualenv .venv with $("$PY" --version 2>&1)"
  "$PY" -m venv .venv
fi
stamp=.venv/.classforge-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  # pip -q is silent for minutes on a first install; say what is happening instead.
  echo "setup: installing classforge and its dependencies into .venv (pip install -e '.[dev,classeval]':"
  echo "       prefect, datasets, huggingface_hub, openai, matplotlib, pytest, ...; ~2 minutes the first time)"
  .venv/bin/pip install -q --upgrade pip
  .venv/bin/pip install -q -e ".[dev,classeval]"
  echo "setup: done"
  touch "$stamp"
fi
