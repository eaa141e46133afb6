#!/bin/sh
# Entry point of the classforge app image. Runs as the non-root user `classforge` in
# $CLASSFORGE_HOME (/data, a volume): the first start on an empty volume gives it the example
# project (examples/, prefect.yaml, the configuration template classforge.example.toml, and a link
# to classforge_bench/ whose flows/ Prefect deployments name), so every
# relative path in a configuration, and every output, lands on the volume.
#   docker run ... classforge:latest build            -> classforge build
#   docker run ... classforge:latest prefect worker start --pool classforge --type process
set -eu
app=${CLASSFORGE_APP:-/app}   # where the image installed the project (a test points it at a checkout)
home=${CLASSFORGE_HOME:?}
if ! cd "$home" 2>/dev/null || ! [ -w . ]; then
  echo "error: $home is not writable by uid $(id -u); use a named volume (-v classforge-data:$home) or chown the host folder to $(id -u)" >&2
  exit 2
fi
[ -e examples ] || cp -R "$app/examples" ./examples
[ -e prefect.yaml ] || cp "$app/prefect.yaml" ./prefect.yaml
[ -e classforge.example.toml ] || cp "$app/classforge.example.toml" ./classforge.example.toml
[ -e classforge_bench ] || ln -s "$app/classforge_bench" ./classforge_bench
case "${1:-}" in
  prefect|classforge|python|python3|sh|bash) exec "$@" ;;
  *) exec classforge "$@" ;;
esac
