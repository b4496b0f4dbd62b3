#!/usr/bin/env bash
# Issue 22: Home Assistant 2024.3.3 side by side with hearthd, on the load of `mqtt-benchmark e2e`
# (1,000 HA-discovered temperature sensors over MQTT; paced 1,000 msg/s for 10 s; a flood).
# Not a test: it downloads Home Assistant (PyPI) on first use; keep it out of scripts/test.
#
#   Benchmarks/HomeAssistant/ha-bench.sh [--recorder on|off|both] [--devices N] [--rate N]
#       [--seconds N] [--messages N] [--json FILE] [--hearthd DIR]
#
# Everything is cached under .build/ha-bench/ (a Python 3.11 venv with homeassistant==2024.3.3 and
# the requirements of the integrations it uses, pip's cache); each run gets a fresh work folder
# .build/ha-bench/run (mosquitto's config, Home Assistant's config directories and logs).
# --hearthd DIR: afterwards, in the same invocation, runs DIR/mqtt-benchmark e2e against
# DIR/hearthd (release binaries with libMQTTPlugin.so beside it, built beforehand, e.g.
# .build/release) with the same --devices/--rate/--seconds/--messages.
# Only 127.0.0.1 is used; every process started is killed at the end, also on failure.
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/../.."
abs() { case "$1" in /*) echo "$1" ;; *) echo "$caller/$1" ;; esac; }
here=Benchmarks/HomeAssistant
cache=.build/ha-bench
venv=$cache/venv
version=2024.3.3
export PIP_CACHE_DIR="$PWD/$cache/pip-cache" PIP_DISABLE_PIP_VERSION_CHECK=1

hearthd="" driver_args=() e2e_args=()
while [ $# -gt 0 ]; do
    case "$1" in
        --hearthd) hearthd=$(abs "${2:?--hearthd DIR}"); shift 2 ;;
        --json) driver_args+=("$1" "$(abs "${2:?--json FILE}")"); shift 2 ;;
        --devices|--rate|--seconds|--messages) driver_args+=("$1" "${2:?$1 N}"); e2e_args+=("$1" "$2"); shift 2 ;;
        --recorder|--start-timeout|--flood-timeout) driver_args+=("$1" "${2:?$1 VALUE}"); shift 2 ;;
        -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
        *) echo "ha-bench: unknown argument $1" >&2; exit 2 ;;
    esac
done
if [ -n "$hearthd" ]; then
    for f in hearthd mqtt-benchmark libMQTTPlugin.so; do
        [ -e "$hearthd/$f" ] || { echo "ha-bench: --hearthd $hearthd has no $f (build release hearthd, MQTTPlugin, mqtt-benchmark)" >&2; exit 2; }
    done
fi
command -v mosquitto >/dev/null || [ -x /usr/sbin/mosquitto ] || { echo "ha-bench: mosquitto is not installed (scripts/setup)" >&2; exit 1; }

# The venv, once: Home Assistant and the requirements of mqtt, recorder, http, api (pinned by
# Home Assistant's own package_constraints.txt; josepy held below 2), so its first start has nothing to install.
if [ ! -f "$venv/.ready-$version" ]; then
    python=$(command -v python3.11 || true)
    [ -n "$python" ] || { echo "ha-bench: needs python3.11 (Home Assistant $version)" >&2; exit 1; }
    echo "ha-bench: installing Home Assistant $version into $venv (once; several minutes)" >&2
    [ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
    if ! "$venv/bin/python" -c "import homeassistant.const as c, sys; sys.exit(c.__version__ != '$version')" 2>/dev/null; then
        "$venv/bin/pip" install -q --upgrade pip wheel
        "$venv/bin/pip" install -q "homeassistant==$version"
    fi
    constraints=$("$venv/bin/python" -c 'import homeassistant, os; print(os.path.join(os.path.dirname(homeassistant.__file__), "package_constraints.txt"))')
    mapfile -t reqs < <("$venv/bin/python" -B "$here/ha_bench.py" --requirements)
    # josepy 2 (2025) dropped what hass_nabucasa's acme (imported by http) uses: keep 1.x.
    "$venv/bin/pip" install -q -c "$constraints" "${reqs[@]}" 'josepy<2'
    touch "$venv/.ready-$version"
fi

work=$cache/run
rm -rf "$work"
mkdir -p "$work"
status=0
# setsid: the driver and all it starts form one process group, killed whatever happens.
setsid "$venv/bin/python" -B "$here/ha_bench.py" --work "$work" "${driver_args[@]}" &
pid=$!
stop() {  # the driver stops what it started (bounded, 20 s); then the whole group is killed
    kill -TERM "$pid" 2>/dev/null || true
    for _ in $(seq 1 250); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL -- -"$pid" 2>/dev/null || true
}
trap 'stop; exit 130' INT TERM
wait $pid || status=$?
kill -KILL -- -$pid 2>/dev/null || true
trap - INT TERM
[ $status -eq 0 ] || { echo "ha-bench: Home Assistant run failed ($status); logs in $work" >&2; exit $status; }

if [ -n "$hearthd" ]; then
    echo "ha-bench: hearthd on the same load: $hearthd/mqtt-benchmark e2e --hearthd hearthd=$hearthd/hearthd@deviceDeltas ${e2e_args[*]}" >&2
    "$hearthd/mqtt-benchmark" e2e --hearthd "hearthd=$hearthd/hearthd@deviceDeltas" "${e2e_args[@]}"
fi
