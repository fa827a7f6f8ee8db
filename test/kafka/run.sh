#!/usr/bin/env bash
# End-to-end test of the scale-out setup (docs/scale-out.md) against a real Apache Kafka broker in
# KRaft mode (one process, broker + controller, loopback only), with the tier-2 collectors
# writing to a local S3-compatible server (moto, as in test/objectstore/run.sh):
#   test/kafka/run.sh                 # all tests in test/kafka (scripts/test.sh runs this)
#   test/kafka/run.sh -run Throughput # go test flags are passed on
#   REPRISE_KAFKA_RUNS=10000 REPRISE_KAFKA_THROUGHPUT_RUNS=10000 test/kafka/run.sh
# Needs Java 17+ and Maven (.ci/run installs both when missing); the broker's jars
# (org.apache.kafka:kafka_2.13, see pom.xml) are fetched from Maven Central once, with strict
# checksums, and cached in test/kafka/.cache (git-ignored).
#
# Every process it starts is stopped when it exits, passes or fails: the broker and moto by pid,
# and the test binary with the collectors it launched as one process group (a go test timeout
# panics before the test's own cleanup could stop them).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
libs="$here/.cache/kafka-libs"
if [ ! -f "$libs/.complete" ]; then
  # The plugin version is pinned: an unpinned prefix would resolve whatever is newest.
  (cd "$here" && mvn -q -B --strict-checksums \
    org.apache.maven.plugins:maven-dependency-plugin:2.8:copy-dependencies \
    -DincludeScope=runtime -DoutputDirectory="$libs")
  touch "$libs/.complete"
fi

port=${KAFKA_PORT:-19092}
controller=${KAFKA_CONTROLLER_PORT:-19093}
work=$(mktemp -d "${TMPDIR:-/tmp}/reprise-kafka.XXXXXX")
broker="" moto_pid="" tests=""

# stop PID [GROUP]: SIGTERM, up to 15 s for a clean exit, then SIGKILL. With GROUP, the signal
# goes to the process group PID leads.
stop() {
  local pid=$1 target=$1
  [ -n "$pid" ] || return 0
  [ -z "${2:-}" ] || target="-$pid"
  kill -TERM -- "$target" 2>/dev/null || return 0
  for _ in $(seq 1 30); do
    kill -0 -- "$target" 2>/dev/null || break
    sleep 0.5
  done
  kill -KILL -- "$target" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
cleanup() {
  local rc=$?
  stop "$tests" group
  stop "$moto_pid"
  stop "$broker"
  if [ "$rc" -ne 0 ]; then
    echo "--- test/kafka failed (exit $rc); broker log tail:" >&2
    tail -n 30 "$work/broker.log" "$work/broker.out" >&2 2>/dev/null || true
  fi
  rm -rf "$work"
  exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cat > "$work/server.properties" <<PROPS
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:$controller
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
log.dirs=$work/data
num.partitions=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=3
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
group.initial.rebalance.delay.ms=0
message.max.bytes=8388608
PROPS
cat > "$work/log4j.properties" <<PROPS
log4j.rootLogger=WARN, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=$work/broker.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
PROPS
# Small heap and one GC thread: the broker shares 2 cores with four collectors and the test.
java=(java -Xms256m -Xmx512m -XX:+UseSerialGC -Dlog4j.configuration="file:$work/log4j.properties" -cp "$libs/*")
"${java[@]}" kafka.tools.StorageTool format -t "$("${java[@]}" kafka.tools.StorageTool random-uuid)" \
  -c "$work/server.properties" >/dev/null
"${java[@]}" kafka.Kafka "$work/server.properties" >"$work/broker.out" 2>&1 &
broker=$!
for i in $(seq 1 120); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  if ! kill -0 "$broker" 2>/dev/null; then echo "the broker exited at start-up" >&2; exit 1; fi
  if [ "$i" -eq 120 ]; then echo "the broker did not listen on 127.0.0.1:$port within 60 s" >&2; exit 1; fi
  sleep 0.5
done
echo "kafka broker (KRaft) up on 127.0.0.1:$port, pid $broker, logs in $work"

# shellcheck source=../objectstore/moto.sh
. "$here/../objectstore/moto.sh"
start_moto "${S3_PORT:-19001}" "$work/moto.log"

cd "$here/../.."
# setsid: go test leads a process group of its own, which holds the test binary and the
# collectors it starts; cleanup stops that group.
KAFKA_BROKERS="127.0.0.1:$port" GOFLAGS=-buildvcs=false \
  setsid go test -count=1 -timeout "${REPRISE_KAFKA_TIMEOUT:-15m}" -v ./test/kafka/ "$@" \
  > >(tee "$work/test.log") 2>&1 &
tests=$!
if wait "$tests"; then rc=0; else rc=$?; fi
sleep 0.5 # tee writes the last lines
echo "--- test/kafka summary"
grep -E 'runs \(|throughput 3 vs 1|tier-2 collector\(s\):|split traces|^--- (PASS|FAIL|SKIP)' "$work/test.log" | sed 's/^ *//' || true
exit "$rc"
