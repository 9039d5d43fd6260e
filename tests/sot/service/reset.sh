#!/usr/bin/env bash
# reset.sh DIR -- give a RUNNING start.sh instance a pristine database without restarting the web server:
# drop the working DB (kicking its connections), re-clone it from the migrated template, flush redis.
set -euo pipefail
DIR=$(cd "${1:?usage: reset.sh DIR}" && pwd)
# shellcheck disable=SC1091
. "$DIR/env.sh"
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
"$PGBIN/psql" -h 127.0.0.1 -p "$NAUTOBOT_DB_PORT" -U nautobot -d postgres -XtAq \
    -c "DROP DATABASE IF EXISTS \"$NAUTOBOT_DB_NAME\" WITH (FORCE)" \
    -c "CREATE DATABASE \"$NAUTOBOT_DB_NAME\" TEMPLATE \"${NB_TEMPLATE_DB:-nautobot_template}\""
redis-cli -h 127.0.0.1 -p "$NAUTOBOT_REDIS_PORT" FLUSHALL >/dev/null
