#!/usr/bin/env bash
set -euo pipefail
D=/var/lib/postgresql/data
B=/usr/lib/postgresql/15/bin
if [ ! -s "$D/PG_VERSION" ]; then
  $B/initdb -D "$D" -U postgres --auth=trust >/dev/null
  echo "host all all 0.0.0.0/0 trust" >> "$D/pg_hba.conf"
  $B/pg_ctl -D "$D" -o "-c listen_addresses=127.0.0.1" -w start >/dev/null
  psql -U postgres -h 127.0.0.1 -qc "CREATE USER ${POSTGRES_USER:-mailyard} PASSWORD '${POSTGRES_PASSWORD:-mailyard}'"
  psql -U postgres -h 127.0.0.1 -qc "CREATE DATABASE ${POSTGRES_DB:-mailyard} OWNER ${POSTGRES_USER:-mailyard}"
  $B/pg_ctl -D "$D" -w stop >/dev/null
fi
exec $B/postgres -D "$D" -c listen_addresses='*' -c unix_socket_directories=/tmp
