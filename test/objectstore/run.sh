#!/usr/bin/env bash
# Tests the dataset's S3 object-store backend against a local S3-compatible server: moto's
# server mode (PyPI moto[server]==5.1.4, installed once into test/objectstore/.venv, git-ignored),
# on 127.0.0.1 only.
#   test/objectstore/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [ ! -x "$here/.venv/bin/moto_server" ]; then
  python3 -m venv "$here/.venv"
  "$here/.venv/bin/pip" install -q 'moto[server]==5.1.4'
fi
port=${S3_PORT:-19000}
"$here/.venv/bin/moto_server" -H 127.0.0.1 -p "$port" >"$here/.venv/moto.log" 2>&1 &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  sleep 0.2
done
echo "moto S3 server on 127.0.0.1:$port, pid $server"
cd "$here/../.."
export REPRISE_S3_ENDPOINT="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
GOFLAGS=-buildvcs=false go test -count=1 -race -run 'ObjectStore|S3|Uploads' -v ./dataset/ ./exporter/replayparquetexporter/ "$@"
