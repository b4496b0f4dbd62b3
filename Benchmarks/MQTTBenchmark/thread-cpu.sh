#!/usr/bin/env bash
# Per-thread CPU of hearthd (and of mosquitto and the benchmark) in the middle of a long flood:
# which thread carries the MQTT path (issue 22). Not a test; prints figures.
#
#   Benchmarks/MQTTBenchmark/thread-cpu.sh DIR [PUBLISHERS]
#
# DIR holds release `hearthd`, `libMQTTPlugin.so`, `libPluginKit.so` and `mqtt-benchmark`.
# Runs `mqtt-benchmark e2e` with a 1,000,000-message flood, reads /proc/PID/task/*/stat of the
# three processes 7 s into the run and again 4 s later, and prints each busy thread's share of a
# core over those 4 s, then the e2e row (its rate gives the CPU per message: share ÷ rate).
set -euo pipefail
dir=${1:?usage: thread-cpu.sh DIR [PUBLISHERS]}
publishers=${2:-1}
log=$(mktemp)
"$dir/mqtt-benchmark" e2e --hearthd "x=$dir/hearthd@deviceDeltas" --rounds 1 --seconds 2 --messages 1000000 \
    --publishers "$publishers" >"$log" 2>&1 &
bench=$!
trap 'kill $bench 2>/dev/null || true; rm -f "$log"' EXIT
p=""
for _ in $(seq 1 300); do p=$(pgrep -n -x hearthd || true); [ -n "$p" ] && break; sleep 0.1; done
[ -n "$p" ] || { echo "thread-cpu: hearthd did not start" >&2; exit 1; }
sleep 7
m=$(pgrep -n -x mosquitto || true)
snap() {
    for q in $p $bench $m; do
        for t in /proc/"$q"/task/*; do
            [ -r "$t/stat" ] || continue
            echo "$(basename "$t") $(tr ' ' _ <"$t/comm")@$q $(awk '{print $14+$15}' "$t/stat")"
        done
    done | sort
}
a=$(snap); sleep 4; b=$(snap)
ticks=$(getconf CLK_TCK)
join <(echo "$a") <(echo "$b") | awk -v hz="$ticks" '{d=$5-$3; if (d>0) printf "%-32s %5.1f %% of a core\n", $2, 100*d/hz/4}' | sort -k2 -rn
wait $bench || true
grep -E "^(run|x) " "$log"
