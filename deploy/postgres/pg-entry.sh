#!/bin/sh
# The entry point of local/trellis-postgres (scripts/base-images.sh, docker-compose.yml). First
# start: a cluster in $PGDATA (password auth for other hosts, trust on the local socket) and the
# database $POSTGRES_DB owned by $POSTGRES_USER; then the server in the foreground.
set -eu
: "${PGDATA:=/var/lib/postgresql/data}" "${POSTGRES_USER:=postgres}" "${POSTGRES_DB:=postgres}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  if [ -z "${POSTGRES_PASSWORD:-}" ]; then
    echo "pg-entry: set POSTGRES_PASSWORD (the password of $POSTGRES_USER)" >&2
    exit 1
  fi
  pw=$(mktemp)
  printf '%s\n' "$POSTGRES_PASSWORD" >"$pw"
  initdb -D "$PGDATA" -U "$POSTGRES_USER" --pwfile="$pw" -E UTF8 --no-locale \
    --auth-local=trust --auth-host=scram-sha-256 >/dev/null
  rm -f "$pw"
  printf 'host all all 0.0.0.0/0 scram-sha-256\nhost all all ::/0 scram-sha-256\n' \
    >>"$PGDATA/pg_hba.conf"
  if [ "$POSTGRES_DB" != postgres ]; then
    echo "CREATE DATABASE \"$POSTGRES_DB\" OWNER \"$POSTGRES_USER\"" |
      postgres --single -D "$PGDATA" -j postgres >/dev/null
  fi
  echo "pg-entry: made the cluster in $PGDATA and the database $POSTGRES_DB"
fi
exec postgres -D "$PGDATA" -c listen_addresses='*' -c jit=off "$@"
