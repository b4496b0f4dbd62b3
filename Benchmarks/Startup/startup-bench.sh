#!/usr/bin/env bash
# Start-up and idle memory of hearthd with N retained Home Assistant-discovered MQTT sensors
# (issue 22): how long from starting hearthd until every sensor's retained value has reached
# the core, and the resident set size once it is idle. Several builds side by side, alternated
# round by round (even rounds in reverse order), on one broker holding the same retained messages.
#
#   Benchmarks/Startup/startup-bench.sh [-n ROUNDS] [-d DEVICES] [-i IDLE_SECONDS] NAME=DIR [NAME=DIR ...]
#
# DIR holds a release `hearthd`, `libPluginKit.so` and `libMQTTPlugin.so` (copied from
# .build/release; `libHearthWebhook.so` too where the build has it, though no webhook runs here). Each start gets a fresh SQLite database and state folder (a first start,
# as after installing); only the MQTT plugin is loaded; the log level is the default (info).
# "All values in" is read from the unauthenticated metrics listener: `hearth_reports_total`
# of the MQTT plugin reaches DEVICES (every retained state was parsed and reported).
set -euo pipefail
rounds=3 devices=1000 idle=5
while getopts n:d:i: opt; do
    case $opt in
        n) rounds=$OPTARG ;; d) devices=$OPTARG ;; i) idle=$OPTARG ;;
        *) exit 2 ;;
    esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || { echo "usage: $0 [-n ROUNDS] [-d DEVICES] [-i IDLE_SECONDS] NAME=DIR ..." >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d /tmp/hearth-startup-bench.XXXXXX)
broker_pid=""
hearthd_pid=""
cleanup() {
    [ -n "$hearthd_pid" ] && kill -9 "$hearthd_pid" 2>/dev/null || true
    [ -n "$broker_pid" ] && kill "$broker_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

mqtt_port=$(free_port)
printf 'listener %s 127.0.0.1\nallow_anonymous true\npersistence false\nmax_queued_messages 100000\n' "$mqtt_port" > "$work/mosquitto.conf"
mosquitto -c "$work/mosquitto.conf" > "$work/mosquitto.log" 2>&1 &
broker_pid=$!
for _ in $(seq 100); do
    python3 -c "import socket; socket.create_connection(('127.0.0.1', $mqtt_port), timeout=1)" 2>/dev/null && break
    sleep 0.05
done
python3 "$here/publish_retained.py" "$mqtt_port" "$devices"

# One start: prints "seconds rss_kib hwm_kib".
run_one() {
    local dir=$1 run=$work/run-$RANDOM$RANDOM
    mkdir -p "$run/plugins" "$run/state"
    ln -s "$dir/libMQTTPlugin.so" "$run/plugins/"
    local api_port metrics_port
    api_port=$(free_port)
    metrics_port=$(free_port)
    cat > "$run/hearth.yaml" <<YAML
storage:
  database: $run/hearth.sqlite
plugins:
  mqtt:
    broker: { host: 127.0.0.1, port: $mqtt_port, clientID: hearth-bench-$RANDOM }
    discovery: { enabled: true, prefix: homeassistant }
server:
  listen: 127.0.0.1:$api_port
  stateDirectory: $run/state
metrics:
  enabled: true
  listen: 127.0.0.1:$metrics_port
YAML
    local start end
    start=$(date +%s%N)
    LD_LIBRARY_PATH=$dir "$dir/hearthd" --config "$run/hearth.yaml" --plugins "$run/plugins" > "$run/hearthd.log" 2>&1 &
    hearthd_pid=$!
    local reported=0 deadline=$((start + 60000000000))
    while :; do
        reported=$({ curl -s "http://127.0.0.1:$metrics_port/metrics" 2>/dev/null || true; } \
            | awk '/^hearth_reports_total\{.*plugin="mqtt"/ { n += $NF } END { printf "%d", n }')
        [ "${reported:-0}" -ge "$devices" ] && break
        if [ "$(date +%s%N)" -gt "$deadline" ] || ! kill -0 "$hearthd_pid" 2>/dev/null; then
            echo "hearthd did not report $devices values within 60 s (got $reported); log:" >&2
            tail -20 "$run/hearthd.log" >&2
            kill -9 "$hearthd_pid" 2>/dev/null || true
            exit 1
        fi
        sleep 0.005
    done
    end=$(date +%s%N)
    # CPU seconds hearthd used until then (user + system; clock ticks are 1/100 s).
    local cpu
    cpu=$(awk '{ printf "%.2f", ($14 + $15) / 100 }' "/proc/$hearthd_pid/stat")
    sleep "$idle"
    local rss hwm
    rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$hearthd_pid/status")
    hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$hearthd_pid/status")
    kill "$hearthd_pid"
    wait "$hearthd_pid" 2>/dev/null || true
    hearthd_pid=""
    awk -v s="$start" -v e="$end" -v r="$rss" -v h="$hwm" -v c="$cpu" 'BEGIN { printf "%.3f %s %d %d\n", (e - s) / 1e9, c, r, h }'
}

names=()
dirs=()
for arg in "$@"; do
    names+=("${arg%%=*}")
    dirs+=("$(cd "${arg#*=}" && pwd)")
done
echo "$devices retained sensors, $rounds rounds, idle ${idle}s before reading RSS; load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-10s %11s %9s %13s %13s\n' round build start-up_s cpu_s idle_RSS_MiB peak_RSS_MiB
for r in $(seq "$rounds"); do
    order=$(seq 0 $((${#names[@]} - 1)))
    [ $((r % 2)) -eq 0 ] && order=$(echo "$order" | tac)
    for i in $order; do
        read -r secs cpu rss hwm < <(run_one "${dirs[$i]}")
        awk -v r="$r" -v n="${names[$i]}" -v s="$secs" -v c="$cpu" -v m="$rss" -v h="$hwm" \
            'BEGIN { printf "%-6s %-10s %11.3f %9.2f %13.1f %13.1f\n", r, n, s, c, m / 1024, h / 1024 }'
    done
done
