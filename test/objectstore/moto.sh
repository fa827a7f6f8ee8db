# Sourced by the test scripts: start_moto PORT LOG installs moto's S3 server (PyPI
# moto[server]==5.1.4) into test/objectstore/.venv (git-ignored) once, starts it on 127.0.0.1:PORT,
# waits until it accepts connections, and sets moto_pid and the AWS variables the tests use.
start_moto() {
  local venv port=$1 log=$2
  venv="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/.venv"
  if [ ! -x "$venv/bin/moto_server" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q 'moto[server]==5.1.4'
  fi
  "$venv/bin/moto_server" -H 127.0.0.1 -p "$port" >"$log" 2>&1 &
  moto_pid=$!
  for i in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
    if [ "$i" -eq 100 ] || ! kill -0 "$moto_pid" 2>/dev/null; then
      echo "moto did not listen on 127.0.0.1:$port within 20 s:" >&2
      tail -n 20 "$log" >&2
      return 1
    fi
    sleep 0.2
  done
  echo "moto S3 server on 127.0.0.1:$port, pid $moto_pid"
  export REPRISE_S3_ENDPOINT="http://127.0.0.1:$port" AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test AWS_REGION=us-east-1
}
