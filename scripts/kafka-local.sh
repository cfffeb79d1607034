#!/usr/bin/env bash
# Fetch, start and stop a real single-node Apache Kafka 4.x broker for end-to-end tests and for
# trying sluice with Kafka: KRaft combined mode (broker + controller in one JVM), plaintext, bound
# to 127.0.0.1 only, replication factor 1 everywhere.
#
# The jars come from Maven Central via scripts/kafka/pom.xml (`mvn dependency:copy-dependencies`)
# rather than from the release tarball, because Maven Central is the only Kafka source reachable
# from our build machines. Needs Java 17+ and Maven 3.8+; the jars are copied once into
# $SLUICE_KAFKA_HOME/libs and reused (refetched only when the pom changes).
#
# Usage: scripts/kafka-local.sh start [--sasl-ssl] | stop | status | env
#        scripts/kafka-local.sh topic NAME PARTITIONS     create a topic (replication 1), idempotent
#        scripts/kafka-local.sh run MAIN_CLASS [ARGS...]  run a Kafka CLI class on the broker classpath
#
# Env:   SLUICE_KAFKA_PORT   broker port (default 9092); the controller uses PORT+1
#        SLUICE_KAFKA_HOME   jar cache + state (default ~/.cache/sluice-kafka); state in run-PORT/
#        SLUICE_KAFKA_HEAP   broker heap flags (default "-Xms256m -Xmx512m")
#        SLUICE_KAFKA_START_TIMEOUT  seconds to wait for readiness (default 60)
#        SLUICE_KAFKA_KEEP_DATA=1  keep the previous run's topics instead of formatting afresh
#        SLUICE_KAFKA_AUTO_CREATE=true  let the broker auto-create topics (default false)
#        SLUICE_KAFKA_SASL_SSL=1  same as `start --sasl-ssl`
#        SLUICE_KAFKA_SASL_PASSWORD  password of the SCRAM user for `start --sasl-ssl` (default: a
#                            random one made once per state dir); letters, digits and ._~+/@%^*-
# `start` returns only once the broker answers metadata requests (or fails after 60 s, printing
# the log tail); running `start` again while it is up does nothing. Each fresh start formats
# empty storage, so no topics survive a stop/start unless SLUICE_KAFKA_KEEP_DATA=1.
# `env` prints `export SLUICE_KAFKA_BROKERS=127.0.0.1:PORT`, for `eval "$(scripts/kafka-local.sh env)"`.
#
# `start --sasl-ssl` also opens a SASL_SSL listener on 127.0.0.1:PORT+2 (SCRAM-SHA-512, user
# `sluice`); the PLAINTEXT listener (inter-broker too) and the controller stay as without it. It
# needs openssl, which makes a CA and a broker certificate for IP:127.0.0.1 and DNS:localhost
# once per state dir, kept in run-PORT/sasl/ with the password (run-PORT/sasl/password) and a
# client config for the Kafka CLI tools (run-PORT/sasl/client.properties, e.g. for TopicCommand
# --command-config). The SCRAM user is written into the storage when it is formatted (or set over
# the PLAINTEXT listener when SLUICE_KAFKA_KEEP_DATA=1 keeps the storage); `start` is ready once a
# topic list over SASL_SSL succeeds as well. `start --sasl-ssl` while the broker runs without the
# listener fails (stop it first); a plain `start` while it runs with the listener does nothing.
# While the listener is up, `env` also prints SLUICE_KAFKA_SASL_BROKERS, SLUICE_KAFKA_SASL_USER,
# SLUICE_KAFKA_SASL_PASSWORD and SLUICE_KAFKA_CA (the CA certificate, PEM), shell-quoted.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
POM="$ROOT/scripts/kafka/pom.xml"
PORT="${SLUICE_KAFKA_PORT:-9092}"
CPORT=$((PORT + 1))
KHOME="${SLUICE_KAFKA_HOME:-$HOME/.cache/sluice-kafka}"
case "$KHOME" in /*) ;; *) KHOME="$PWD/$KHOME" ;; esac  # absolute: `env` prints paths under it
LIBS="$KHOME/libs"
STATE="$KHOME/run-$PORT"
PIDFILE="$STATE/kafka.pid"
LOG="$STATE/server.log"
BOOTSTRAP="127.0.0.1:$PORT"
SPORT=$((PORT + 2))
SASL_BOOTSTRAP="127.0.0.1:$SPORT"
SASL_DIR="$STATE/sasl"
SASL_USER=sluice
START_TIMEOUT="${SLUICE_KAFKA_START_TIMEOUT:-60}"
STOP_TIMEOUT=20

die() { echo "kafka-local: $*" >&2; exit 1; }
say() { echo "kafka-local: $*" >&2; }
# shellcheck source-path=SCRIPTDIR source=lib/service.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/service.sh"

# ---- jars -------------------------------------------------------------------------------------
fetch_jars() {
    local stamp
    stamp="$(sha256sum "$POM" | cut -d' ' -f1)"
    if [ -f "$LIBS/.pom-sha256" ] && [ "$(cat "$LIBS/.pom-sha256")" = "$stamp" ]; then
        return 0
    fi
    command -v mvn >/dev/null || die "needs Maven (apt-get install maven) to fetch the Kafka jars"
    say "fetching Kafka jars from Maven Central into $LIBS"
    local tmp="$KHOME/libs.tmp.$$"
    rm -rf "$tmp"
    mkdir -p "$tmp"
    # (sed: Maven 3.8 prints stray ANSI resets even with -B; all its output goes to stderr)
    if ! mvn -q -B -f "$POM" dependency:copy-dependencies -DoutputDirectory="$tmp" 2>&1 \
            | sed 's/\x1b\[[0-9;]*m//g' >&2; then
        rm -rf "$tmp"
        die "mvn dependency:copy-dependencies failed"
    fi
    echo "$stamp" > "$tmp/.pom-sha256"
    rm -rf "$LIBS"
    mv "$tmp" "$LIBS"
}

# Run a Kafka main class (CLI tools): small heap, quick JIT, warnings only, to stderr.
KJAVA=(java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Djava.awt.headless=true
       -Dlog4j2.configurationFile="$STATE/tools-log4j2.properties" -cp "$LIBS/*")
tools_log_config() {
    mkdir -p "$STATE"
    [ -f "$STATE/tools-log4j2.properties" ] && return 0
    cat > "$STATE/tools-log4j2.properties.$$" <<'EOF'
status = warn
shutdownHook = disable
appender.err.type = Console
appender.err.name = STDERR
appender.err.target = SYSTEM_ERR
appender.err.layout.type = PatternLayout
appender.err.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = WARN
rootLogger.appenderRef.err.ref = STDERR
EOF
    mv "$STATE/tools-log4j2.properties.$$" "$STATE/tools-log4j2.properties"
}
kjava() {
    [ -f "$LIBS/.pom-sha256" ] || die "jars not fetched; run: $0 start"
    tools_log_config
    "${KJAVA[@]}" "$@"
}

# ---- process state ----------------------------------------------------------------------------
broker_pid() { service_pid "$PIDFILE" 'kafka.Kafka'; }  # succeeds only if our broker process is alive

write_config() {  # $1 = 1: with the SASL_SSL listener
    local listeners="PLAINTEXT://127.0.0.1:$PORT,CONTROLLER://127.0.0.1:$CPORT"
    local protocols="PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT"
    if [ "$1" = 1 ]; then
        listeners="$listeners,SASL_SSL://$SASL_BOOTSTRAP"
        protocols="$protocols,SASL_SSL:SASL_SSL"
    fi
    cat > "$STATE/server.properties" <<EOF
# Generated by scripts/kafka-local.sh; rewritten on every start.
process.roles=broker,controller
node.id=1
controller.quorum.bootstrap.servers=127.0.0.1:$CPORT
listeners=$listeners
advertised.listeners=$listeners
listener.security.protocol.map=$protocols
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
log.dirs=$STATE/data
num.partitions=1
auto.create.topics.enable=${SLUICE_KAFKA_AUTO_CREATE:-false}
default.replication.factor=1
min.insync.replicas=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
transaction.max.timeout.ms=900000
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
group.initial.rebalance.delay.ms=0
num.network.threads=2
num.io.threads=4
EOF
    if [ "$1" = 1 ]; then
        cat >> "$STATE/server.properties" <<EOF
# SASL_SSL listener for clients only (inter-broker and controller traffic stay PLAINTEXT).
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.ssl.keystore.type=PKCS12
listener.name.sasl_ssl.ssl.keystore.location=$SASL_DIR/broker.p12
listener.name.sasl_ssl.ssl.keystore.password=$(cat "$SASL_DIR/keystore-password")
listener.name.sasl_ssl.ssl.key.password=$(cat "$SASL_DIR/keystore-password")
listener.name.sasl_ssl.ssl.client.auth=none
EOF
    fi
    cat > "$STATE/log4j2.properties" <<'EOF'
status = warn
appender.out.type = Console
appender.out.name = STDOUT
appender.out.layout.type = PatternLayout
appender.out.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = INFO
rootLogger.appenderRef.out.ref = STDOUT
logger.state.name = state.change.logger
logger.state.level = WARN
logger.request.name = kafka.request.logger
logger.request.level = WARN
EOF
}

random_cluster_id() {  # 16 random bytes, base64url without padding (what `random-uuid` prints)
    local id
    while :; do
        id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | cut -c1-22)"
        case "$id" in -*) ;; *) echo "$id"; return ;; esac
    done
}

# ---- SASL_SSL listener ------------------------------------------------------------------------
random_secret() {  # 24 random letters and digits
    local s=""
    while [ ${#s} -lt 24 ]; do
        s="$s$(head -c 24 /dev/urandom | base64 | tr -dc 'A-Za-z0-9')"
    done
    echo "${s:0:24}"
}

sasl_running() {  # the running broker's config has the SASL_SSL listener
    grep -q '^listeners=.*SASL_SSL://' "$STATE/server.properties" 2>/dev/null
}

# The SCRAM password: SLUICE_KAFKA_SASL_PASSWORD if set (and then kept in the file), else the one
# in $SASL_DIR/password, made when missing. Letters, digits and ._~+/@%^*- only: the value goes
# unquoted into `--add-scram 'SCRAM-SHA-512=[name=..,password=..]'` and into a JAAS string.
sasl_password() {
    local pw="${SLUICE_KAFKA_SASL_PASSWORD:-}"
    if [ -n "$pw" ]; then
        case "$pw" in
            *[!A-Za-z0-9._~+/@%^*-]*) die "SLUICE_KAFKA_SASL_PASSWORD: only letters, digits and ._~+/@%^*- are allowed" ;;
        esac
    elif [ -s "$SASL_DIR/password" ]; then
        return 0
    else
        pw="$(random_secret)"
    fi
    (umask 077; echo "$pw" > "$SASL_DIR/password.tmp")
    mv "$SASL_DIR/password.tmp" "$SASL_DIR/password"
}

# A CA and a broker certificate signed by it (subjectAltName IP:127.0.0.1, DNS:localhost, as
# librdkafka verifies the host name), the broker's key and certificate chain in a PKCS12 keystore.
# Made once per state dir; remade when a file is missing, the broker certificate no longer
# verifies against the CA, or either expires within a day.
make_certs() {
    local d="$SASL_DIR" ext
    command -v openssl >/dev/null || die "--sasl-ssl needs openssl (apt-get install openssl)"
    if ! [ -s "$d/ca.pem" ] || ! [ -s "$d/ca.key" ] \
            || ! openssl x509 -in "$d/ca.pem" -noout -checkend 86400 >/dev/null 2>&1; then
        say "making a CA in $d"
        rm -f "$d/broker.pem" "$d/broker.p12"
        (umask 077; openssl req -x509 -new -newkey rsa:2048 -nodes -sha256 -days 3650 \
            -subj "/CN=sluice kafka-local CA $PORT" \
            -addext basicConstraints=critical,CA:TRUE -addext keyUsage=critical,keyCertSign,cRLSign \
            -keyout "$d/ca.key.tmp" -out "$d/ca.pem.tmp" 2>/dev/null) || die "openssl: making the CA failed"
        mv "$d/ca.key.tmp" "$d/ca.key"
        mv "$d/ca.pem.tmp" "$d/ca.pem"
    fi
    if [ -s "$d/broker.p12" ] && [ -s "$d/keystore-password" ] && [ -s "$d/broker.pem" ] \
            && openssl verify -CAfile "$d/ca.pem" "$d/broker.pem" >/dev/null 2>&1 \
            && openssl x509 -in "$d/broker.pem" -noout -checkend 86400 >/dev/null 2>&1; then
        return 0
    fi
    say "making the broker certificate and keystore in $d"
    [ -s "$d/keystore-password" ] || (umask 077; random_secret > "$d/keystore-password")
    ext="$d/broker.ext"
    cat > "$ext" <<'EOF'
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth
subjectAltName=IP:127.0.0.1,DNS:localhost
subjectKeyIdentifier=hash
authorityKeyIdentifier=keyid
EOF
    (umask 077
     openssl req -new -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" \
         -keyout "$d/broker.key" -out "$d/broker.csr" 2>/dev/null \
     && openssl x509 -req -in "$d/broker.csr" -CA "$d/ca.pem" -CAkey "$d/ca.key" \
         -set_serial "0x$(openssl rand -hex 16)" -days 825 -sha256 -extfile "$ext" \
         -out "$d/broker.pem.tmp" 2>/dev/null \
     && openssl pkcs12 -export -in "$d/broker.pem.tmp" -inkey "$d/broker.key" -certfile "$d/ca.pem" \
         -name broker -passout "file:$d/keystore-password" -out "$d/broker.p12.tmp") \
        || die "openssl: making the broker certificate failed"
    rm -f "$d/broker.csr" "$ext"
    mv "$d/broker.p12.tmp" "$d/broker.p12"
    mv "$d/broker.pem.tmp" "$d/broker.pem"
}

write_client_config() {  # for the Kafka CLI tools (--command-config) and the readiness check
    (umask 077; cat > "$SASL_DIR/client.properties.tmp" <<EOF
# Generated by scripts/kafka-local.sh: a client of the SASL_SSL listener at $SASL_BOOTSTRAP.
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required username="$SASL_USER" password="$(cat "$SASL_DIR/password")";
ssl.truststore.type=PEM
ssl.truststore.location=$SASL_DIR/ca.pem
EOF
    )
    mv "$SASL_DIR/client.properties.tmp" "$SASL_DIR/client.properties"
}

# Shell-quote for `eval`: bare when safe, else in single quotes.
shq() {
    case "$1" in
        '' | *[!A-Za-z0-9_./:@%+=,-]*) printf "'%s'" "${1//\'/\'\\\'\'}" ;;
        *) printf '%s' "$1" ;;
    esac
}

# ---- commands ---------------------------------------------------------------------------------
cmd_start() {
    local sasl=0 arg
    [ "${SLUICE_KAFKA_SASL_SSL:-0}" = 1 ] && sasl=1
    for arg in "$@"; do
        case "$arg" in
            --sasl-ssl) sasl=1 ;;
            *) die "usage: $0 start [--sasl-ssl]" ;;
        esac
    done
    if broker_pid >/dev/null; then
        if [ "$sasl" = 1 ] && ! sasl_running; then
            die "the broker at $BOOTSTRAP is running without the SASL_SSL listener; stop it first ($0 stop), then start it with --sasl-ssl"
        fi
        say "already running at $BOOTSTRAP"
        return 0
    fi
    command -v java >/dev/null || die "needs Java 17+ (apt-get install openjdk-17-jre-headless)"
    port_open "$PORT" && die "port $PORT is taken by another process (set SLUICE_KAFKA_PORT)"
    port_open "$CPORT" && die "port $CPORT (controller) is taken by another process"
    if [ "$sasl" = 1 ]; then
        port_open "$SPORT" && die "port $SPORT (SASL_SSL) is taken by another process"
    fi
    fetch_jars
    mkdir -p "$STATE"
    rm -f "$PIDFILE"
    local scram=()
    if [ "$sasl" = 1 ]; then
        mkdir -p "$SASL_DIR"
        chmod 700 "$SASL_DIR"
        make_certs
        sasl_password
        write_client_config
        scram=(--add-scram "SCRAM-SHA-512=[name=$SASL_USER,password=$(cat "$SASL_DIR/password")]")
    fi
    write_config "$sasl"
    rm -f "$STATE/tools-log4j2.properties"
    tools_log_config

    local kept=0
    if [ "${SLUICE_KAFKA_KEEP_DATA:-0}" = 1 ] && [ -f "$STATE/data/meta.properties" ]; then
        say "keeping existing data in $STATE/data"
        kept=1
    else
        rm -rf "$STATE/data"
        kjava kafka.tools.StorageTool format --standalone \
            --cluster-id "$(random_cluster_id)" --config "$STATE/server.properties" \
            ${scram[@]+"${scram[@]}"} >/dev/null \
            || die "formatting $STATE/data failed"
    fi

    local t0=$SECONDS
    # setsid: detach from the caller's process group so its Ctrl-C / exit does not kill the broker.
    # stdin from /dev/null and output to the log so callers capturing our output do not hang.
    # The JVM writes its own pid (bash execs into it): `$!` would be setsid's, which forks when
    # the caller leads its process group (a pipeline under job control) and then exits at once.
    # shellcheck disable=SC2016,SC2086
    setsid bash -c 'echo $$ > "$0"; exec "$@"' "$PIDFILE" \
        java ${SLUICE_KAFKA_HEAP:--Xms256m -Xmx512m} \
        -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError -Djava.awt.headless=true \
        -Dkafka.logs.dir="$STATE" -Dlog4j2.configurationFile="$STATE/log4j2.properties" \
        -cp "$LIBS/*" kafka.Kafka "$STATE/server.properties" \
        </dev/null >"$LOG" 2>&1 &
    local waited
    for ((waited = 0; waited < 50; waited++)); do
        [ -s "$PIDFILE" ] && break
        sleep 0.1
    done

    # Ready = the process is alive, the port accepts connections and a metadata request (topic
    # list through the admin client) succeeds; with --sasl-ssl then the same over SASL_SSL, with
    # the SCRAM user (set first over PLAINTEXT when the storage was kept, as it may predate it).
    local left phase=plain err="$STATE/sasl-check.err"
    while :; do
        left=$((START_TIMEOUT - (SECONDS - t0)))
        if ! broker_pid >/dev/null; then
            tail -n 40 "$LOG" >&2 || true
            rm -f "$PIDFILE"
            die "broker exited during startup (log: $LOG)"
        fi
        if [ "$left" -le 0 ]; then
            tail -n 40 "$LOG" >&2 || true
            if [ "$phase" = sasl ] && [ -s "$err" ]; then
                say "last topic list over SASL_SSL said:"
                tail -n 10 "$err" >&2
            fi
            cmd_stop
            die "broker not ready after ${START_TIMEOUT}s (log: $LOG)"
        fi
        if [ "$phase" = plain ]; then
            if port_open "$PORT" && timeout "$left" "${KJAVA[@]}" org.apache.kafka.tools.TopicCommand \
                    --bootstrap-server "$BOOTSTRAP" --list >/dev/null 2>&1; then
                [ "$sasl" = 1 ] || break
                if [ "$kept" = 1 ] && ! timeout "$left" "${KJAVA[@]}" org.apache.kafka.tools.ConfigCommand \
                        --bootstrap-server "$BOOTSTRAP" --alter --entity-type users \
                        --entity-name "$SASL_USER" --add-config \
                        "SCRAM-SHA-512=[password=$(cat "$SASL_DIR/password")]" >/dev/null; then
                    cmd_stop
                    die "setting the SCRAM credential of $SASL_USER failed"
                fi
                phase=sasl
                continue
            fi
        elif port_open "$SPORT" && timeout "$left" "${KJAVA[@]}" org.apache.kafka.tools.TopicCommand \
                --bootstrap-server "$SASL_BOOTSTRAP" --command-config "$SASL_DIR/client.properties" \
                --list >/dev/null 2>"$err"; then
            rm -f "$err"
            break
        elif grep -q 'SaslAuthenticationException\|SslAuthenticationException' "$err" 2>/dev/null; then
            tail -n 10 "$err" >&2
            cmd_stop
            die "the SASL_SSL listener at $SASL_BOOTSTRAP refused the client (see above)"
        fi
        sleep 0.5
    done
    if [ "$sasl" = 1 ]; then
        say "ready at $BOOTSTRAP and SASL_SSL $SASL_BOOTSTRAP after $((SECONDS - t0))s (pid $(cat "$PIDFILE"), log $LOG)"
    else
        say "ready at $BOOTSTRAP after $((SECONDS - t0))s (pid $(cat "$PIDFILE"), log $LOG)"
    fi
}

cmd_stop() {
    service_stop "$PIDFILE" 'kafka.Kafka' broker "$STOP_TIMEOUT"
}

cmd_status() {
    if broker_pid >/dev/null && port_open "$PORT"; then
        echo "$BOOTSTRAP"
    else
        exit 1
    fi
}

cmd_env() {
    echo "export SLUICE_KAFKA_BROKERS=$(shq "$BOOTSTRAP")"
    if broker_pid >/dev/null && sasl_running && [ -s "$SASL_DIR/password" ]; then
        echo "export SLUICE_KAFKA_SASL_BROKERS=$(shq "$SASL_BOOTSTRAP")"
        echo "export SLUICE_KAFKA_SASL_USER=$(shq "$SASL_USER")"
        echo "export SLUICE_KAFKA_SASL_PASSWORD=$(shq "$(cat "$SASL_DIR/password")")"
        echo "export SLUICE_KAFKA_CA=$(shq "$SASL_DIR/ca.pem")"
    fi
}

cmd_topic() {
    [ $# -eq 2 ] || die "usage: $0 topic NAME PARTITIONS"
    broker_pid >/dev/null || die "broker is not running; run: $0 start"
    kjava org.apache.kafka.tools.TopicCommand --bootstrap-server "$BOOTSTRAP" --create \
        --if-not-exists --topic "$1" --partitions "$2" --replication-factor 1 >&2
}

case "${1:-}" in
    start) shift; cmd_start "$@" ;;
    stop) cmd_stop ;;
    status) cmd_status ;;
    topic) shift; cmd_topic "$@" ;;
    env) cmd_env ;;
    run) shift; [ $# -ge 1 ] || die "usage: $0 run MAIN_CLASS [ARGS...]"; kjava "$@" ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2; exit 2 ;;
esac
