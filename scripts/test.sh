#!/usr/bin/env bash
# The whole test suite, as CI runs it:
#   1. every Go package, with the race detector (includes the end-to-end collector tests);
#   2. test/readers: the datasets read by DuckDB and Apache Arrow (a module of its own, cgo);
#   3. test/objectstore: the dataset's S3 backend against a local moto server (pinned, in a venv);
#   4. test/node: record and replay with the real openai SDK and three GenAI instrumentations,
#      and `reprise ci` against changed agents;
#   5. test/python (scripts/test-python.sh): the same with the Python openai SDK and four Python
#      GenAI instrumentations, the notebook under nbclient, the README reader snippets, PySpark.
#   6. test/kafka: the scale-out setup (docs/scale-out.md) on a real Kafka broker (KRaft, jars from
#      Maven Central, cached) and moto: 10,000 runs through 1 tier-1 and 3 tier-2 collectors with
#      a kill -9, a trace split forced by a rebalance (marked trace_split and counted), and the
#      1 vs 3 tier-2 throughput ratio; about 4½ minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=${GOFLAGS:--buildvcs=false}
step_start=$SECONDS
took() { echo "--- $1 took $((SECONDS - step_start))s"; step_start=$SECONDS; }

# One collector build for every suite that runs it as a process (test/e2e, test/scrubbing,
# test/kafka, test/node, test/python), instead of one per suite in $TMPDIR.
bin_dir=$(mktemp -d)
trap 'rm -rf "$bin_dir"' EXIT
go build -o "$bin_dir/reprise" ./cmd/reprise
export REPRISE_BIN="$bin_dir/reprise"
took "collector build"

# -timeout: the dataset package alone takes ~5½ minutes under -race on 2 cores (335 s on
# 2026-12-05, nothing else running), close to go test's default 10-minute limit per package
# when the machine is shared.
go test -race -timeout 25m ./...
took "go test -race ./..."
(cd test/readers && go test ./...)
took "test/readers"
test/objectstore/run.sh
took "test/objectstore"

(cd test/node && npm ci --no-audit --no-fund --loglevel=error && npm test)
took "test/node"
scripts/test-python.sh
step_start=$SECONDS # test-python.sh reports its own time
test/kafka/run.sh
took "test/kafka (Kafka broker, moto, 1 tier-1 + 3 tier-2 collectors)"
