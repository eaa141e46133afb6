# syntax=docker/dockerfile:1
# Two images from one file:
#   docker build --target sandbox -t classforge-sandbox:latest .   # what untrusted code runs in
#   docker build --target app     -t classforge:latest .           # the classforge CLI / a Prefect worker
# The sandbox image holds Python, coverage, the declared environment below and the harness; the docker backend
# (classforge_bench/pipeline/sandbox/docker_backend.py) starts one throw-away container per run with no network,
# a read-only root, tmpfs work dir, all capabilities dropped and the non-root user below.
# The sandbox image carries the declared environment of ClassEval evaluations: the list in
# classforge_bench/benchmark/requirements/classeval.txt, the same file classforge_bench/benchmark/environment.py builds the local
# backend's environment from (another list: --build-arg SANDBOX_REQUIREMENTS=path/in/the/repo.txt;
# more packages: --build-arg SANDBOX_EXTRAS="pkg1 pkg2"). The results name it.

ARG PYTHON_IMAGE=python:3.11-slim

FROM ${PYTHON_IMAGE} AS base
ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PIP_BREAK_SYSTEM_PACKAGES=1


FROM base AS sandbox
ARG SANDBOX_REQUIREMENTS=classforge_bench/benchmark/requirements/classeval.txt
ARG SANDBOX_EXTRAS=""
COPY ${SANDBOX_REQUIREMENTS} /opt/classforge/requirements.txt
# A Debian-packaged base (how images are made where none can be pulled) has only `python3`.
# netifaces (ClassEval 48) ships no wheels: a compiler is there for the install only.
# libfaketime at a fixed path: the environment checks preload it to move the clock.
RUN apt-get update \
 && apt-get install -y --no-install-recommends libfaketime gcc libc6-dev \
 && mkdir -p /opt/classforge \
 && ln -s "$(ls /usr/lib/*/faketime/libfaketime.so.1 | head -n 1)" /opt/classforge/libfaketime.so.1 \
 && (command -v python >/dev/null || ln -s "$(command -v python3)" /usr/local/bin/python) \
 && (python -c "import os, sys, sysconfig; sys.exit(not os.path.exists(sysconfig.get_paths()['include'] + '/Python.h'))" \
     || apt-get install -y --no-install-recommends python3-dev) \
 && pip install "coverage>=7.4,<8" -r /opt/classforge/requirements.txt \
 && if [ -n "$SANDBOX_EXTRAS" ]; then pip install $SANDBOX_EXTRAS; fi \
 && pip freeze --all > /opt/classforge/installed.txt \
 && apt-get purge -y --auto-remove gcc libc6-dev python3-dev \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 10001 sandbox \
 && useradd --uid 10001 --gid 10001 --no-create-home --home-dir /work --shell /usr/sbin/nologin sandbox
# The backend sends the harness with every run (so it always matches the host's version); the
# copies here document the image's purpose and let it be used by hand.
COPY classforge_bench/pipeline/sandbox/harness_script.py /opt/classforge/cf_harness.py
COPY classforge_bench/pipeline/sandbox/docker_bootstrap.py /opt/classforge/docker_bootstrap.py
WORKDIR /work
USER 10001:10001
CMD ["python", "-c", "print('classforge sandbox image: started per run by classforge_bench.pipeline.sandbox.docker_backend')"]


FROM base AS app
# git for cloning harvested repositories; bubblewrap for the local sandbox backend (inside a
# container it needs user namespaces; otherwise set sandbox.backend = "docker" and mount the
# engine's socket).
# libfaketime for the environment checks' clock shifts (without it they are skipped, and the card
# says so); ClassEval's declared environment (classforge_bench/benchmark/requirements/classeval.txt, the list the
# sandbox image carries), so the local backend scores references that import numpy, pandas, bs4...
# instead of counting them broken. netifaces ships no wheels: a compiler is there for the install only.
# The code is installed read-only under /app (owned by root); everything a run writes (harvested/,
# built/, benchmark/releases/, results/, the LLM and Hugging Face caches, Prefect's database) goes
# to /data, a volume owned by the non-root user `classforge` that the container runs as.
# Installed editable: the plus tier finds its test generator (Pynguin, in its own virtualenv with its
# own pins) beside the code, at /app/.venv-plus, as scripts/setup.sh makes it in a checkout.
RUN apt-get update \
 && apt-get install -y --no-install-recommends git bubblewrap libfaketime \
 && rm -rf /var/lib/apt/lists/* \
 && (command -v python >/dev/null || ln -s "$(command -v python3)" /usr/local/bin/python) \
 && useradd --create-home --uid 10000 classforge \
 && mkdir -p /data \
 && chown classforge:classforge /data
WORKDIR /app
COPY pyproject.toml README.md ./
COPY pipeline ./pipeline
COPY flows ./flows
COPY benchmark ./benchmark
COPY examples ./examples
COPY prefect.yaml classforge.example.toml ./
COPY scripts/docker-entrypoint.sh /usr/local/bin/classforge-entrypoint
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev \
 && (python -c "import os, sys, sysconfig; sys.exit(not os.path.exists(sysconfig.get_paths()['include'] + '/Python.h'))" \
     || apt-get install -y --no-install-recommends python3-dev) \
 && pip install -e ".[all]" -r classforge_bench/benchmark/requirements/classeval.txt \
 && python -m venv /app/.venv-plus \
 && /app/.venv-plus/bin/pip install -r classforge_bench/pipeline/quality/plus/requirements.txt \
 && apt-get purge -y --auto-remove gcc libc6-dev python3-dev \
 && rm -rf /var/lib/apt/lists/* \
 && chmod 0755 /usr/local/bin/classforge-entrypoint
ENV CLASSFORGE_HOME=/data \
    HF_HOME=/data/.cache/huggingface \
    PREFECT_HOME=/data/.cache/prefect \
    PREFECT_SERVER_ANALYTICS_ENABLED=false \
    PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS=600 \
    GIT_TERMINAL_PROMPT=0
VOLUME ["/data"]
WORKDIR /data
USER classforge
# `docker run classforge:latest build` runs `classforge build` (the offline example) in /data;
# any other classforge command works the same way; `prefect ...` runs Prefect (e.g. a worker).
ENTRYPOINT ["classforge-entrypoint"]
CMD ["--help"]
