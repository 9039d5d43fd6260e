#!/usr/bin/env bash
# start.sh DIR PORT -- bring up a private Nautobot (PostgreSQL 15 + redis + web server) on loopback.
#
#   DIR   state directory (created); reused if it already holds a migrated cluster
#   PORT  HTTP port of Nautobot on 127.0.0.1
#
# Env knobs:
#   NB_VENV        venv holding nautobot (default /var/tmp/netgen-nautobot/venv)
#   NB_PG_PORT     PostgreSQL port on 127.0.0.1 (default PORT+1)
#   NB_REDIS_PORT  redis port on 127.0.0.1      (default PORT+2)
#   NB_BGP         1 = enable nautobot_bgp_models if importable (default 1), 0 = off
#   NB_SERVER      uwsgi (default: nautobot-server start, 2 processes) | runserver
#   (the API token is random, made once and kept in DIR/token and in the template DB)
#   NB_DB_NAME     working database (default nautobot); re-created from the template on every start
#   NB_TEMPLATE_DB migrated template database (default nautobot_template); built once per nautobot version
#   NB_KEEP_DB     1 = keep an existing working database instead of re-cloning it
#   NB_FORCE_MIGRATE  non-empty = rebuild the template database
#   NB_SEED_DUMP   pg_dump -Fc file (+ FILE.stamp) of a migrated template, e.g. another DIR's template.dump:
#                  restored (~1 s) instead of running migrate (~5 min) when its stamp matches this install
#
# Prints the API token as the last line of stdout. Writes DIR/env.sh with everything a client needs.
set -euo pipefail

DIR=${1:?usage: start.sh DIR PORT}
PORT=${2:?usage: start.sh DIR PORT}
HERE=$(cd "$(dirname "$0")" && pwd)
NB_VENV=${NB_VENV:-/var/tmp/netgen-nautobot/venv}
PG_PORT=${NB_PG_PORT:-$((PORT + 1))}
REDIS_PORT=${NB_REDIS_PORT:-$((PORT + 2))}
NB_BGP=${NB_BGP:-1}
NB_SERVER=${NB_SERVER:-uwsgi}
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
DB_NAME=${NB_DB_NAME:-nautobot}

mkdir -p "$DIR"
DIR=$(cd "$DIR" && pwd)
# one start at a time per DIR: .ci/run migrates in the background while other tiers run, and the
# tests' start waits here until that is done (the web server does not inherit the lock)
exec 9>"$DIR.lock"
flock 9
mkdir -p "$DIR/log" "$DIR/run" "$DIR/redis" "$DIR/root"
chmod 755 "$DIR"

t0=$(date +%s.%N)
stamp() { printf '[start.sh %6.1fs] %s\n' "$(echo "$(date +%s.%N) - $t0" | bc)" "$*" >&2; }

# ---- PostgreSQL: private cluster, trust auth, loopback only -------------------------------------------
# postgres refuses to run as root: when we are root, run its binaries as the Debian 'postgres' user.
if [ "$(id -u)" = 0 ]; then asuser() { runuser -u postgres -- "$@"; }; else asuser() { "$@"; }; fi
if [ "$(id -u)" = 0 ] && ! runuser -u postgres -- test -x "$DIR"; then
    echo "start.sh: user postgres cannot reach $DIR (a parent dir such as /root is mode 700); use e.g. /var/tmp/..." >&2
    exit 2
fi
if [ ! -s "$DIR/pg/PG_VERSION" ]; then
    mkdir -p "$DIR/pg"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$DIR/pg" "$DIR/run" "$DIR/log"
    asuser "$PGBIN/initdb" -D "$DIR/pg" -U nautobot --auth=trust -E UTF8 --locale=C.UTF-8 >"$DIR/log/initdb.log"
    # test-only durability settings: no fsync, no full page writes
    cat >>"$DIR/pg/postgresql.conf" <<EOF
listen_addresses = '127.0.0.1'
unix_socket_directories = '$DIR/run'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 100
shared_buffers = 128MB
EOF
    stamp "initdb done"
fi
[ "$(id -u)" = 0 ] && chown postgres:postgres "$DIR/run" "$DIR/log"
asuser "$PGBIN/pg_ctl" -D "$DIR/pg" -o "-p $PG_PORT -c listen_addresses=127.0.0.1 -c unix_socket_directories=$DIR/run" \
    -l "$DIR/log/pg.log" -w -t 60 start >/dev/null 9>&-
stamp "postgres up on 127.0.0.1:$PG_PORT"
PSQL=("$PGBIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U nautobot -d postgres -XtAq)
db_exists() { [ "$("${PSQL[@]}" -c "SELECT 1 FROM pg_database WHERE datname='$1'")" = 1 ]; }

# ---- redis: private, no persistence ------------------------------------------------------------------
redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --save '' --appendonly no --daemonize yes \
    --dir "$DIR/redis" --pidfile "$DIR/run/redis.pid" --logfile "$DIR/log/redis.log" 9>&-
for _ in $(seq 50); do redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
stamp "redis up on 127.0.0.1:$REDIS_PORT"

# ---- Nautobot config ---------------------------------------------------------------------------------
PLUGINS=""
if [ "$NB_BGP" = 1 ] && "$NB_VENV/bin/python" -c 'import nautobot_bgp_models' 2>/dev/null; then PLUGINS="nautobot_bgp_models"; fi
CFG="$DIR/nautobot_config.py"
if [ ! -f "$CFG" ]; then
    NAUTOBOT_ROOT="$DIR/root" "$NB_VENV/bin/nautobot-server" init --disable-installation-metrics "$CFG" >"$DIR/log/init.log" 2>&1
    cat >>"$CFG" <<'EOF2'

# ---- appended by start.sh ----
PLUGINS = [p for p in os.getenv("NB_PLUGINS", "").split(",") if p]
# reset.sh drops the DB under a running server: re-check persistent connections before each request
DATABASES["default"]["CONN_HEALTH_CHECKS"] = True
EOF2
fi
[ -s "$DIR/secret_key" ] || "$NB_VENV/bin/python" -c 'import secrets;print(secrets.token_urlsafe(50))' >"$DIR/secret_key"
[ -s "$DIR/token" ] || "$NB_VENV/bin/python" -c 'import secrets;print(secrets.token_hex(20))' >"$DIR/token"
TOKEN=$(cat "$DIR/token")
write_env() {  # $1 = database name
cat >"$DIR/env.sh" <<EOF2
export NAUTOBOT_CONFIG='$CFG'
export NAUTOBOT_ROOT='$DIR/root'
export NAUTOBOT_DB_NAME='$1' NAUTOBOT_DB_USER=nautobot NAUTOBOT_DB_PASSWORD='' NAUTOBOT_DB_HOST=127.0.0.1 NAUTOBOT_DB_PORT=$PG_PORT
export NAUTOBOT_REDIS_HOST=127.0.0.1 NAUTOBOT_REDIS_PORT=$REDIS_PORT NAUTOBOT_REDIS_PASSWORD=''
export NAUTOBOT_SECRET_KEY='$(cat "$DIR/secret_key")'
export NAUTOBOT_ALLOWED_HOSTS='*'
export NAUTOBOT_INSTALLATION_METRICS_ENABLED=false
export NB_PLUGINS='$PLUGINS'
export NAUTOBOT_URL='http://127.0.0.1:$PORT' NAUTOBOT_TOKEN='$TOKEN'
EOF2
}
NBS="$NB_VENV/bin/nautobot-server"

# ---- template database: migrated once, reused while nautobot version + plugins are unchanged -----------
# The template holds the migrated schema, the superuser admin/admin and the API token; every start clones it.
TEMPLATE=${NB_TEMPLATE_DB:-nautobot_template}
WANT="$("$NB_VENV/bin/python" -c 'import importlib.metadata as m;print(*sorted(f"{d.name}=={d.version}" for d in m.distributions() if d.name.lower().startswith("nautobot")))') plugins=$PLUGINS"
SEED=${NB_SEED_DUMP:-}
if [ "$(cat "$DIR/migrated.stamp" 2>/dev/null)" != "$WANT" ] || ! db_exists "$TEMPLATE" || [ -n "${NB_FORCE_MIGRATE:-}" ]; then
    rm -f "$DIR/migrated.stamp"
    db_exists "$TEMPLATE" && "${PSQL[@]}" -c "DROP DATABASE \"$TEMPLATE\" WITH (FORCE)"
    "${PSQL[@]}" -c "CREATE DATABASE \"$TEMPLATE\""
    write_env "$TEMPLATE"; . "$DIR/env.sh"
fi
if [ -n "$SEED" ] && [ -s "$SEED" ] && [ "$(cat "$SEED.stamp" 2>/dev/null)" = "$WANT" ] && [ -z "${NB_FORCE_MIGRATE:-}" ] \
   && [ "$(cat "$DIR/migrated.stamp" 2>/dev/null)" != "$WANT" ]; then
    # seed the template from a pg_dump of an identical nautobot+plugins install: skips the migrate entirely
    "$PGBIN/pg_restore" -h 127.0.0.1 -p "$PG_PORT" -U nautobot -d "$TEMPLATE" --no-owner "$SEED"
    TOKEN=$("$PGBIN/psql" -h 127.0.0.1 -p "$PG_PORT" -U nautobot -d "$TEMPLATE" -XtAq -c "SELECT key FROM users_token ORDER BY created LIMIT 1")
    echo "$TOKEN" >"$DIR/token"
    echo "$WANT" >"$DIR/migrated.stamp"
    stamp "template DB restored from $SEED"
fi
if [ "$(cat "$DIR/migrated.stamp" 2>/dev/null)" != "$WANT" ]; then
    m0=$(date +%s.%N)
    "$NBS" migrate --no-input >"$DIR/log/migrate.log" 2>&1 || { tail -30 "$DIR/log/migrate.log" >&2; exit 1; }
    stamp "migrate took $(echo "$(date +%s.%N) - $m0" | bc | cut -c1-6)s"
    "$NBS" nbshell --quiet-load --command "
from django.contrib.auth import get_user_model
from nautobot.users.models import Token
U = get_user_model()
u, _ = U.objects.get_or_create(username='admin', defaults=dict(is_superuser=True, is_staff=True, email='admin@example.invalid'))
u.is_superuser = u.is_staff = True; u.set_password('admin'); u.save()
Token.objects.get_or_create(user=u, key='$TOKEN')
" >"$DIR/log/token.log" 2>&1 || { tail -30 "$DIR/log/token.log" >&2; exit 1; }
    stamp "superuser admin/admin and token stored in template DB $TEMPLATE"
    "${PSQL[@]}" -c "VACUUM" -d "$TEMPLATE" 2>/dev/null || true
    echo "$WANT" >"$DIR/migrated.stamp"
    # portable copy of the migrated template (~1 MB): feed it to NB_SEED_DUMP on another machine / CI cache
    "$PGBIN/pg_dump" -h 127.0.0.1 -p "$PG_PORT" -U nautobot -Fc -f "$DIR/template.dump" "$TEMPLATE"
    echo "$WANT" >"$DIR/template.dump.stamp"
fi
# working database: a fresh copy of the template on every start (unless NB_KEEP_DB=1 and it exists)
if [ "${NB_KEEP_DB:-0}" != 1 ] || ! db_exists "$DB_NAME"; then
    db_exists "$DB_NAME" && "${PSQL[@]}" -c "DROP DATABASE \"$DB_NAME\" WITH (FORCE)"
    "${PSQL[@]}" -c "CREATE DATABASE \"$DB_NAME\" TEMPLATE \"$TEMPLATE\""
    stamp "database $DB_NAME cloned from $TEMPLATE"
fi
write_env "$DB_NAME"
# shellcheck disable=SC1091
. "$DIR/env.sh"

# ---- web server --------------------------------------------------------------------------------------
if [ "$NB_SERVER" = uwsgi ]; then
    setsid "$NBS" start --http11-socket "127.0.0.1:$PORT" --http-keepalive --processes "${NB_UWSGI_PROCESSES:-2}" --threads 1 --master \
        --die-on-term --need-app --pidfile "$DIR/run/web.pid" >"$DIR/log/web.log" 2>&1 </dev/null 9>&- &
else
    setsid "$NBS" runserver "127.0.0.1:$PORT" --noreload --skip-checks >"$DIR/log/web.log" 2>&1 </dev/null 9>&- &
    echo $! >"$DIR/run/web.pid"
fi
WEBPID=$!
echo "$WEBPID" >"$DIR/run/web.pgid"
for _ in $(seq 600); do
    if curl -fsS -o /dev/null -H "Authorization: Token $TOKEN" "http://127.0.0.1:$PORT/api/status/" 2>/dev/null; then break; fi
    kill -0 "$WEBPID" 2>/dev/null || { tail -30 "$DIR/log/web.log" >&2; exit 1; }
    sleep 0.2
done
curl -fsS -o /dev/null -H "Authorization: Token $TOKEN" "http://127.0.0.1:$PORT/api/status/"
stamp "nautobot answering on http://127.0.0.1:$PORT/api/status/"
echo "$TOKEN"
