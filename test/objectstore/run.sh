#!/usr/bin/env bash
# Tests the dataset's S3 object-store backend against a local S3-compatible server: moto's
# server mode (PyPI moto[server]==5.1.4, installed once into test/objectstore/.venv, git-ignored),
# on 127.0.0.1 only: the exporter's upload (with an object_store block, and with
# directory: s3://bucket/prefix), and the replay extension's and replay_parquet receiver's
# reads of the bucket.
#   test/objectstore/run.sh
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
# shellcheck source=moto.sh
. "$here/moto.sh"
start_moto "${S3_PORT:-19000}" "$here/.venv/moto.log"
trap 'kill "$moto_pid" 2>/dev/null || true; wait "$moto_pid" 2>/dev/null || true' EXIT
cd "$here/../.."
GOFLAGS=-buildvcs=false go test -count=1 -race -run 'ObjectStore|ObjectSource|S3|Uploads' -v ./dataset/ ./exporter/replayparquetexporter/ \
  ./replayext/ ./receiver/replayparquetreceiver/ "$@"
