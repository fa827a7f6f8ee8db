#!/usr/bin/env bash
# End-to-end test of the scale-out setup (docs/scale-out.md) against a real Apache Kafka broker in
# KRaft mode (one process, broker + controller, loopback only), with the tier-2 collectors
# writing to a local S3-compatible server (moto, as in test/objectstore/run.sh):
#   test/kafka/run.sh                 # all tests in test/kafka
#   test/kafka/run.sh -run Throughput # go test flags are passed on
# Needs Java 17+ and Maven; the broker's jars (org.apache.kafka:kafka_2.13, see pom.xml) are
# fetched from Maven Central once and cached in test/kafka/.cache (git-ignored).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
libs="$here/.cache/kafka-libs"
if [ ! -f "$libs/.complete" ]; then
  (cd "$here" && mvn -q -B dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$libs")
  touch "$libs/.complete"
fi

port=${KAFKA_PORT:-19092}
controller=${KAFKA_CONTROLLER_PORT:-19093}
work=$(mktemp -d /tmp/reprise-kafka.XXXXXX)
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
java=(java -Xms256m -Xmx512m -Dlog4j.configuration="file:$work/log4j.properties" -cp "$libs/*")
"${java[@]}" kafka.tools.StorageTool format -t "$("${java[@]}" kafka.tools.StorageTool random-uuid)" \
  -c "$work/server.properties" >/dev/null
"${java[@]}" kafka.Kafka "$work/server.properties" >"$work/broker.out" 2>&1 &
broker=$!
cleanup() { kill "$broker" 2>/dev/null || true; wait "$broker" 2>/dev/null || true; rm -rf "$work"; }
trap cleanup EXIT
for _ in $(seq 1 120); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then break; fi
  if ! kill -0 "$broker" 2>/dev/null; then cat "$work/broker.out" "$work/broker.log" >&2; exit 1; fi
  sleep 0.5
done
echo "kafka broker (KRaft) up on 127.0.0.1:$port, pid $broker, logs in $work"

# shellcheck source=../objectstore/moto.sh
. "$here/../objectstore/moto.sh"
start_moto "${S3_PORT:-19001}" "$work/moto.log"
trap 'kill "$moto_pid" 2>/dev/null || true; wait "$moto_pid" 2>/dev/null || true; cleanup' EXIT
cd "$here/../.."
KAFKA_BROKERS="127.0.0.1:$port" GOFLAGS=-buildvcs=false go test -count=1 -timeout 20m -v ./test/kafka/ "$@"
