#!/usr/bin/env bash
# The docker-compose stack, for real: builds the images, then
#  1. per-service run: `up -d gateway send` (+ the peers) starts only those and their dependencies
#     (stores, migrate) and an email sent through the gateway reaches the SMTP peer;
#  2. the whole stack: `up -d`, every Mailyard service healthy (/healthz and /readyz), an email
#     through the gateway reaches the SMTP peer and its signed MAIL_DELIVERED webhook arrives; a
#     sending domain is verified against the peers' DNS, configured for inbound, and an email sent
#     from the host to the published inbound SMTP port arrives as an INCOMING_EMAIL webhook;
#  3. `down -v`, and nothing of the project is left running.
# docker-compose.yml is used as shipped, with deploy/compose-test/docker-compose.test.yml over it
# (Debian-built PostgreSQL/RabbitMQ/Redis because no registry is reachable here, and the peers).
#
#   bash scripts/compose-test.sh      # as root; about 7 minutes on a fresh machine (docs/deploy.md)
#
# Without a Docker socket it sets up podman first (deploy/compose-test/podman-up.sh: installs
# podman and docker-compose with apt-get, builds the base images). Host ports are free ones unless
# GATEWAY_PORT, TRACKING_PUBLIC_PORT, PEERS_PORT or INBOUND_SMTP_PORT are set. The services' last
# log lines are kept in $COMPOSE_TEST_LOG (default /tmp/mailyard-compose-test.log).
set -euo pipefail
cd "$(dirname "$0")/.."
PROJECT=${COMPOSE_PROJECT_NAME:-mailyardtest}
KEY=myk_compose_test_key_0123456789abcdef
LOG=${COMPOSE_TEST_LOG:-/tmp/mailyard-compose-test.log}
free_port() { node -e "const s=require('net').createServer().listen(0,'127.0.0.1',()=>{console.log(s.address().port);s.close()})"; }
GATEWAY_PORT=${GATEWAY_PORT:-$(free_port)}
TRACKING_PUBLIC_PORT=${TRACKING_PUBLIC_PORT:-$(free_port)}
PEERS_PORT=${PEERS_PORT:-$(free_port)}
INBOUND_SMTP_PORT=${INBOUND_SMTP_PORT:-$(free_port)}
export TEST_API_KEY=$KEY GATEWAY_PORT TRACKING_PUBLIC_PORT PEERS_PORT INBOUND_SMTP_PORT
STARTED_PODMAN=0
if [ -z "${DOCKER_HOST:-}" ] && [ ! -S /var/run/docker.sock ]; then
  export PODMAN_WORKDIR=${PODMAN_WORKDIR:-/tmp/podman-work}
  pid_file=$PODMAN_WORKDIR/service.pid
  if ! { [ -f "$pid_file" ] && kill -0 "$(cat "$pid_file")" 2>/dev/null; }; then STARTED_PODMAN=1; fi
  # shellcheck disable=SC1090
  source "${PODMAN_UP:-deploy/compose-test/podman-up.sh}" "$PODMAN_WORKDIR"
fi
# The podman API service and healthcheck loop this run started are stopped at the end (images stay).
stop_podman() { if [ "$STARTED_PODMAN" = 1 ]; then bash "${PODMAN_UP:-deploy/compose-test/podman-up.sh}" stop; fi; }

cat > .env.compose-test <<EOC
SECRET_KEY=$(head -c 32 /dev/urandom | base64)
ADMIN_API_KEY=compose-test-admin-key-0123456789
TRACKING_BASE_URL=http://localhost:${TRACKING_PUBLIC_PORT}
LOG_LEVEL=info
EOC
DC=(docker-compose -p "$PROJECT" --env-file .env.compose-test -f docker-compose.yml -f deploy/compose-test/docker-compose.test.yml)
# The services read .env (env_file); without one, the test file stands in for it.
CREATED_ENV=0
[ -e .env ] || { ln -s .env.compose-test .env; CREATED_ENV=1; }
cleanup() {
  "${DC[@]}" logs --no-color --tail=120 > "$LOG" 2>&1 || true
  "${DC[@]}" down -v -t 2 >/dev/null 2>&1 || true
  if [ "$CREATED_ENV" = 1 ]; then rm -f .env; fi
  rm -f .env.compose-test
  stop_podman
}
trap 'echo "compose test FAILED after ${SECONDS}s; service logs: $LOG"; cleanup' EXIT

step() { printf '\n== %s (%ss)\n' "$1" "$SECONDS"; }
wait_for() { # wait_for <seconds> <description> <command...>
  local deadline=$((SECONDS + $1)) what=$2; shift 2
  until "$@" >/dev/null 2>&1; do
    [ $SECONDS -lt $deadline ] || { echo "timed out: $what"; return 1; }
    sleep 2
  done
}
API=http://127.0.0.1:$GATEWAY_PORT
PEERS=http://127.0.0.1:$PEERS_PORT
AUTH=(-H "Authorization: Bearer $KEY" -H "Content-Type: application/json")
api() { curl -fsS "${AUTH[@]}" "$@"; }
json() { node -pe "const v=JSON.parse(require('fs').readFileSync(0,'utf8')); $1"; }
# received <js expression over r = {mails, hooks}>: true once the peers have seen it.
received() { curl -fsS "$PEERS/received" | node -e "const r=JSON.parse(require('fs').readFileSync(0,'utf8')); process.exit(($1) ? 0 : 1)"; }
running() { [ -n "$("${DC[@]}" ps -q "$1" 2>/dev/null)" ]; }
healthy() { "${DC[@]}" ps "$1" 2>/dev/null | grep -q '(healthy)'; }
send_email() { # send_email <mailer> <to> <subject>
  api "$API/v1/email/send" -d "{\"mailer_id\":\"$1\",\"from\":{\"email\":\"me@compose.test\"},\"to\":[{\"email\":\"$2\"}],\"subject\":\"$3\",\"content\":[{\"type\":\"text/plain\",\"value\":\"hello from compose\"}]}"
  echo
}
MAILYARD=(gateway send tracking webhook-dispatcher inbound-smtp imap-backfill)

step "build (stores, and the one Mailyard image every service runs)"
"${DC[@]}" build postgres rabbitmq redis migrate

step "per-service run: up -d gateway send peers"
"${DC[@]}" up -d gateway send peers
wait_for 300 "gateway ready" curl -fsS "$API/readyz"
wait_for 120 "send healthy" healthy send
wait_for 60 "peers" curl -fsS "$PEERS/received"
for s in tracking webhook-dispatcher inbound-smtp imap-backfill; do
  if running "$s"; then echo "$s was started by 'up gateway send'"; exit 1; fi
done
echo "running: $("${DC[@]}" ps --services --filter status=running | sort | tr '\n' ' ')"
MAILER=$(api "$API/v1/mailer/smtp" -d '{"name":"peer","email":"me@compose.test","connection_type":"basic","config":{"host":"peers","port":2525,"username":"u","password":"p","secure":"None"}}' | json v.mailer_id)
echo "mailer $MAILER"
send_email "$MAILER" solo@example.test "compose per-service"
wait_for 180 "email from the per-service run at the SMTP peer" \
  received "r.mails.some(m => m.to.includes('solo@example.test') && m.raw.includes('Subject: compose per-service'))"

step "whole stack: up -d"
"${DC[@]}" up -d
for s in "${MAILYARD[@]}"; do wait_for 300 "$s healthy" healthy "$s"; done
wait_for 60 "tracking published" curl -fsS "http://127.0.0.1:$TRACKING_PUBLIC_PORT/healthz"
"${DC[@]}" ps

step "outbound: webhook, send, SMTP peer, MAIL_DELIVERED webhook"
api "$API/v1/webhook/register" -d '{"webhook_url":"http://peers:8080/hook","event":"EMAIL_EVENT","method":"POST","webhook_options":{"events":{"delivery":true}}}' | json v.webhook_id
send_email "$MAILER" you@example.test "compose test"
wait_for 180 "email at the SMTP peer" \
  received "r.mails.some(m => m.to.includes('you@example.test') && m.raw.includes('Subject: compose test'))"
wait_for 180 "MAIL_DELIVERED webhook" \
  received "r.hooks.some(h => h.path === '/hook' && h.body.includes('MAIL_DELIVERED') && h.body.includes('you@example.test') && h.headers['webhook-signature'])"

step "inbound: verify a domain against the peers' DNS, route it, mail the published SMTP port"
DOMAIN=in.compose.test
api "$API/v1/domain/add" -d "{\"domain\":\"$DOMAIN\"}" |
  json "JSON.stringify({txt: v.data.records.filter(r => r.type === 'TXT').map(r => ({name: r.name, value: r.value})), mx: v.data.records.filter(r => r.type === 'MX').map(r => ({name: r.name, host: r.value, preference: r.priority}))})" |
  curl -fsS "$PEERS/dns" -d @-
echo
api -X PUT "$API/v1/domain/verify/$DOMAIN" | json "v.data.verified || process.exit(1)"
api "$API/v1/inbound/relay_webhook" -d "{\"domain\":\"$DOMAIN\",\"url\":\"http://peers:8080/inbound\",\"method\":\"POST\"}"
echo
api "$API/v1/inbound/username" -d "{\"user_name\":\"support\",\"domain\":\"$DOMAIN\"}"
echo
printf 'From: Alice <alice@sender.test>\r\nTo: support@%s\r\nSubject: compose inbound\r\nMessage-ID: <compose-inbound@sender.test>\r\n\r\nhello through port 25\r\n' "$DOMAIN" |
  curl -fsS --url "smtp://127.0.0.1:$INBOUND_SMTP_PORT/client.sender.test" --mail-from alice@sender.test \
    --mail-rcpt "support@$DOMAIN" --upload-file -
wait_for 180 "INCOMING_EMAIL webhook" \
  received "r.hooks.some(h => h.path === '/inbound' && (b => b.event === 'INCOMING_EMAIL' && b.details.subject === 'compose inbound' && b.details.recipient === 'support@$DOMAIN')(JSON.parse(h.body)))"
echo "INCOMING_EMAIL for support@$DOMAIN arrived"

step "down -v"
"${DC[@]}" logs --no-color --tail=120 > "$LOG" 2>&1 || true
"${DC[@]}" down -v -t 2
left=$("${DC[@]}" ps -q)
[ -z "$left" ] || { echo "containers left after down: $left"; exit 1; }
trap - EXIT
if [ "$CREATED_ENV" = 1 ]; then rm -f .env; fi
rm -f .env.compose-test
stop_podman
echo "compose test passed in ${SECONDS}s"
