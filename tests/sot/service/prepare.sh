#!/usr/bin/env bash
# prepare.sh -- install Nautobot (setup.sh) and migrate its template database once (start.sh, then
# stop.sh), holding $ROOT/prepare.lock throughout: .ci/run starts this in the background while the
# other tiers run; the sot tier's fixture takes the same lock first, so it waits for this to finish.
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=${NETGEN_NAUTOBOT_ROOT:-/var/tmp/netgen-nautobot}
export NB_VENV=${NB_VENV:-$ROOT/venv}
PORT=${1:-18480}
mkdir -p "$ROOT"
exec 8>"$ROOT/prepare.lock"
flock 8
bash "$HERE/setup.sh" 8>&-
VERSION=$("$NB_VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("nautobot"))')
STATE="$ROOT/nb-$VERSION"
trap 'bash "$HERE/stop.sh" "$STATE" 8>&-' EXIT
bash "$HERE/start.sh" "$STATE" "$PORT" 8>&- >/dev/null
