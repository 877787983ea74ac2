#!/bin/sh
# Entrypoint of the ctxlens serve container image (deploy/Containerfile); test/service/deploy.test.ts
# runs it as a script. Configuration is the environment, so a Kubernetes manifest or `docker run -e`
# sets it without a shell:
#
#   CTXLENS_ROOT             templates folder, mounted read-only          (/srv/prompts)
#   CTXLENS_HOST             address to bind                              (0.0.0.0)
#   CTXLENS_PORT             port                                         (8710)
#   CTXLENS_TOKEN_FILE       file holding the bearer token                (/run/secrets/ctxlens/token)
#   CTXLENS_ALLOW_HOSTS      host names clients use besides IP addresses, space-separated (a Service's name)
#   CTXLENS_WORKERS          worker threads                               (1)
#   CTXLENS_STORE_URL        redis://HOST:PORT/DB of the shared context store (ctxlens reads it itself)
#   CTXLENS_STORE_PASSWORD_FILE  file holding the store's password
#   CTXLENS_CLI, CTXLENS_NODE    the CLI bundle and node               (/app/node_modules/context-lens/dist/cli.js, node)
#
# `entrypoint.sh healthcheck` asks /healthz of the running service (the image's HEALTHCHECK): exit 0
# when it answers 200 (also while the store is degraded: the replica still serves), 1 otherwise.
# Any other arguments are passed on to `ctxlens serve`. The service is exec'd, so SIGTERM reaches it
# and drains it. Nothing is written to the file system: the root file system can be read-only.
set -eu

ROOT="${CTXLENS_ROOT:-/srv/prompts}"
HOST="${CTXLENS_HOST:-0.0.0.0}"
PORT="${CTXLENS_PORT:-8710}"
TOKEN_FILE="${CTXLENS_TOKEN_FILE:-/run/secrets/ctxlens/token}"
WORKERS="${CTXLENS_WORKERS:-1}"
CLI="${CTXLENS_CLI:-/app/node_modules/context-lens/dist/cli.js}"
NODE="${CTXLENS_NODE:-node}"

fail() {
  echo "ctxlens entrypoint: $*" >&2
  exit 2
}

if [ "${1:-}" = "healthcheck" ]; then
  exec "$NODE" -e '
    const port = process.argv[1];
    fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2500) })
      .then((r) => process.exit(r.status === 200 ? 0 : 1), () => process.exit(1));
  ' "$PORT"
fi

case "$PORT" in
  '' | *[!0-9]*) fail "CTXLENS_PORT must be a port number" ;;
esac
[ -d "$ROOT" ] || fail "the templates folder $ROOT does not exist (mount it read-only, or set CTXLENS_ROOT)"
[ -f "$CLI" ] || fail "the ctxlens CLI is not at $CLI (set CTXLENS_CLI)"
# The token is required off loopback; its value is never printed.
[ -r "$TOKEN_FILE" ] || fail "no bearer token at $TOKEN_FILE (mount the Secret there, or set CTXLENS_TOKEN_FILE)"

set -- --root "$ROOT" --host "$HOST" --port "$PORT" --token-file "$TOKEN_FILE" --workers "$WORKERS" "$@"
for name in ${CTXLENS_ALLOW_HOSTS:-}; do
  set -- "$@" --allow-host "$name"
done
if [ -n "${CTXLENS_STORE_PASSWORD_FILE:-}" ]; then
  [ -r "$CTXLENS_STORE_PASSWORD_FILE" ] || fail "no store password at $CTXLENS_STORE_PASSWORD_FILE"
  [ -n "${CTXLENS_STORE_URL:-}" ] || fail "CTXLENS_STORE_PASSWORD_FILE is set without CTXLENS_STORE_URL"
  set -- "$@" --store-password-file "$CTXLENS_STORE_PASSWORD_FILE"
fi

exec "$NODE" "$CLI" serve "$@"
