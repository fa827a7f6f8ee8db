#!/usr/bin/env bash
# Regenerates the committed collector sources in cmd/reprise from builder-config.yaml with ocb,
# or, with --check, fails when the committed sources differ from what ocb generates.
set -euo pipefail
cd "$(dirname "$0")/.."
OCB_VERSION=v0.165.0
if ! command -v builder >/dev/null 2>&1 || ! builder version 2>/dev/null | grep -q "$OCB_VERSION"; then
  go install "go.opentelemetry.io/collector/cmd/builder@$OCB_VERSION"
  PATH="$(go env GOPATH)/bin:$PATH"
fi
out=$(mktemp -d) scratch=$(mktemp -d)
trap 'rm -rf "$out" "$scratch"' EXIT
sed "s#output_path: .*#output_path: $out#" builder-config.yaml > "$out/builder-config.yaml"
# ocb makes an empty otelcol-distribution* directory in $TMPDIR on every run, even with
# output_path set: give it one that is removed.
TMPDIR="$scratch" builder --config "$out/builder-config.yaml" --skip-compilation --skip-get-modules >/dev/null 2>&1
rm "$out/builder-config.yaml"
gofmt -w "$out"/*.go
# Files ocb writes; cmd/reprise also holds hand-written ones (subcommands.go) that are kept.
generated="main.go main_others.go main_windows.go components.go"
if [ "${1:-}" = "--check" ]; then
  if ! diff -r $(for f in $(ls cmd/reprise); do case " $generated " in *" $f "*) ;; *) echo "-x $f";; esac; done) "$out" cmd/reprise; then
    echo "cmd/reprise does not match builder-config.yaml: run scripts/gen-distribution.sh and commit" >&2
    exit 1
  fi
  echo "cmd/reprise matches builder-config.yaml"
else
  (cd cmd/reprise && rm -f $generated)
  cp "$out"/*.go cmd/reprise/
  echo "regenerated cmd/reprise from builder-config.yaml"
fi
