#!/usr/bin/env bash
# The Python end-to-end tests (test/python): four Python GenAI instrumentations record the weather
# agent through the collector, the Python openai SDK replays each run offline, the Responses API,
# the Anthropic Messages API and an OpenAI Agents SDK agent record and replay (test_model_apis.py), the notebook
# examples/reprise-datasets.ipynb runs under nbclient, every README reader snippet runs, and
# PySpark reads the datasets.
#
# Creates test/python/.venv (git-ignored) with Python 3.10+ and installs the pinned
# test/python/requirements.txt and python/reprise_pytest into it; the venv is reused while those
# files are unchanged. Builds the collector unless REPRISE_BIN names one. Needs Java 17+ on PATH
# for PySpark. Arguments are passed to pytest, e.g. scripts/test-python.sh -k notebook.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS=${GOFLAGS:--buildvcs=false} PIP_DISABLE_PIP_VERSION_CHECK=1
started=$SECONDS

python=${PYTHON:-python3}
"$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))' || { echo "test/python needs Python 3.10+ ($python is $("$python" --version))"; exit 1; }
java -version >/dev/null 2>&1 || { echo "test/python needs Java 17+ on PATH for PySpark"; exit 1; }

venv=test/python/.venv
stamp=$(cat test/python/requirements.txt python/reprise_pytest/pyproject.toml python/reprise_pytest/src/reprise_pytest/*.py | sha256sum | cut -d' ' -f1)
if [ "$(cat "$venv/.installed" 2>/dev/null)" != "$stamp" ]; then
  rm -rf "$venv"
  "$python" -m venv "$venv"
  "$venv/bin/pip" install --quiet -r test/python/requirements.txt
  "$venv/bin/pip" install --quiet --no-deps ./python/reprise_pytest
  echo "$stamp" > "$venv/.installed"
fi
echo "--- test/python: virtual environment ready after $((SECONDS - started))s"

if [ -z "${REPRISE_BIN:-}" ]; then
  bin_dir=$(mktemp -d)
  trap 'rm -rf "$bin_dir"' EXIT
  go build -o "$bin_dir/reprise" ./cmd/reprise
  export REPRISE_BIN="$bin_dir/reprise"
fi

ruff_config=test/python/ruff.toml
"$venv/bin/ruff" format --config "$ruff_config" --check test/python python \
  || { echo "run: $venv/bin/ruff format --config $ruff_config test/python python"; exit 1; }
"$venv/bin/ruff" check --config "$ruff_config" test/python python

status=0
(cd test/python && .venv/bin/python -m pytest "$@") || status=$?
echo "--- test/python took $((SECONDS - started))s"
exit $status
