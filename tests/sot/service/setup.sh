#!/usr/bin/env bash
# setup.sh -- install what start.sh needs. Idempotent; re-running is cheap (~2 s) once installed.
#   apt: redis-server, postgresql (if no initdb), curl, bc
#   pip: nautobot + nautobot-bgp-models into a SEPARATE venv ($NB_VENV, default /var/tmp/netgen-nautobot/venv)
# Versions are pinned (override with NAUTOBOT_VERSION / BGP_VERSION); a version change invalidates
# start.sh's migrated template DB automatically (its stamp contains the installed nautobot* versions).
set -euo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
NB_VENV=${NB_VENV:-/var/tmp/netgen-nautobot/venv}
NAUTOBOT_VERSION=${NAUTOBOT_VERSION:-3.2.7}
BGP_VERSION=${BGP_VERSION:-3.2.0}   # nautobot-bgp-models 3.2.0 requires nautobot>=3.1.0,<4.0.0
PYTHON=${PYTHON:-python3.11}       # nautobot 3.2.7: Requires-Python >=3.10,<3.15

SUDO=""; [ "$(id -u)" = 0 ] || SUDO=sudo
need=()
command -v redis-server >/dev/null || need+=(redis-server)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need+=(postgresql)
command -v curl >/dev/null || need+=(curl)
command -v bc >/dev/null || need+=(bc)
if [ ${#need[@]} -gt 0 ]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}" >/dev/null
fi
# Debian starts a system-wide redis/postgres on install; start.sh runs private ones on other ports, so these
# are not needed (stopping them is optional, they do not conflict with start.sh's ports).

if [ ! -x "$NB_VENV/bin/nautobot-server" ] || ! "$NB_VENV/bin/python" - "$NAUTOBOT_VERSION" "$BGP_VERSION" <<'EOF'
import sys, importlib.metadata as m
sys.exit(0 if (m.version("nautobot"), m.version("nautobot-bgp-models")) == tuple(sys.argv[1:3]) else 1)
EOF
then
    [ -x "$NB_VENV/bin/python" ] || "$PYTHON" -m venv "$NB_VENV"
    "$NB_VENV/bin/pip" install -q -U pip
    "$NB_VENV/bin/pip" install -q "nautobot==$NAUTOBOT_VERSION" "nautobot-bgp-models==$BGP_VERSION"
fi
"$NB_VENV/bin/nautobot-server" --version
