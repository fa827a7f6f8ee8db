#!/usr/bin/env bash
# Builds the example gateway distribution (examples/custom-distribution/builder-config.yaml)
# with ocb v0.165.0, from the repository root, into ./_build/gateway/otelcol-gateway.
# The same command is what test/gateway runs, so the guide and the test cannot drift apart.
set -euo pipefail
cd "$(dirname "$0")/../.."
OCB_VERSION=v0.165.0
export PATH="$(go env GOPATH)/bin:$PATH"
if ! builder version 2>/dev/null | grep -q "$OCB_VERSION"; then
  go install "go.opentelemetry.io/collector/cmd/builder@$OCB_VERSION"
fi
mkdir -p _build
# ocb leaves an empty otelcol-distribution* directory in $TMPDIR on every run: give it one that
# is removed.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
TMPDIR="$scratch" builder --config examples/custom-distribution/builder-config.yaml
