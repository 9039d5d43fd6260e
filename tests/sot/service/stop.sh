#!/usr/bin/env bash
# stop.sh DIR -- stop the web server, redis and PostgreSQL started by start.sh DIR. Keeps DIR (cache).
set -uo pipefail
DIR=${1:?usage: stop.sh DIR}
DIR=$(cd "$DIR" && pwd)
PGBIN=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
# a process group is "alive" while it has a member that is not a zombie (our daemons are re-parented to
# pid 1, which may reap late, so kill -0 alone would wait on zombies)
group_alive() { ps -o stat= -g "$1" 2>/dev/null | grep -qv '^Z'; }
pid_alive() { local st; st=$(ps -o stat= -p "$1" 2>/dev/null) && [ "${st:0:1}" != Z ]; }

# web server: started with setsid, so its pid is also its process-group id
if [ -s "$DIR/run/web.pgid" ]; then
    pg=$(cat "$DIR/run/web.pgid")
    kill -TERM -- "-$pg" 2>/dev/null
    for _ in $(seq 100); do group_alive "$pg" || break; sleep 0.1; done
    kill -KILL -- "-$pg" 2>/dev/null
    rm -f "$DIR/run/web.pgid" "$DIR/run/web.pid"
fi
# redis
if [ -s "$DIR/run/redis.pid" ]; then
    rp=$(cat "$DIR/run/redis.pid")
    kill -TERM "$rp" 2>/dev/null
    for _ in $(seq 50); do pid_alive "$rp" || break; sleep 0.1; done
    rm -f "$DIR/run/redis.pid"
fi
# postgres
if [ -s "$DIR/pg/postmaster.pid" ]; then
    if [ "$(id -u)" = 0 ]; then
        runuser -u postgres -- "$PGBIN/pg_ctl" -D "$DIR/pg" -m fast -w stop >/dev/null
    else
        "$PGBIN/pg_ctl" -D "$DIR/pg" -m fast -w stop >/dev/null
    fi
fi
echo "stopped $DIR" >&2
