#!/usr/bin/env bash
# Two loopback-only Syncthing instances sharing one folder (A <-> B), for the
# end-to-end sync test and for trying famctl by hand.
#
#   scripts/syncthing-pair.sh start BASE   # prints "ready A B" once connected
#   scripts/syncthing-pair.sh stop BASE    # stops both and removes BASE
#
# Needs Debian's syncthing, curl and jq. Everything stays on 127.0.0.1: no
# discovery, relays, NAT traversal, usage reporting or upgrades.
set -euo pipefail
cmd=${1:?start|stop}; BASE=${2:?base directory}
# Ports below the kernel's ephemeral range (32768 and up: no outgoing
# connection holds them), and none that a socket already uses (another
# test's pair or server), unless STPAIR_PORT_OFFSET names them.
OFF=${STPAIR_PORT_OFFSET:-$(( ($$ % 438) * 10 ))}
ports_free() { local p; for p in "$@"; do [ -z "$(ss -Htan "( sport = :$p )" 2>/dev/null)" ] || return 1; done; }
if [ -z "${STPAIR_PORT_OFFSET:-}" ] && command -v ss >/dev/null; then
  for _ in $(seq 20); do
    ports_free $((18384 + OFF)) $((28384 + OFF)) $((22001 + OFF)) $((23001 + OFF)) && break
    OFF=$(( (RANDOM % 438) * 10 ))
  done
fi
GUI1=127.0.0.1:$((18384 + OFF)); GUI2=127.0.0.1:$((28384 + OFF))
P1=$((22001 + OFF)); P2=$((23001 + OFF))
KEY1=famctl-pair-key-one; KEY2=famctl-pair-key-two
FID=famctl
export HOME=${HOME:-$BASE}

stop() {  # each `syncthing serve` is a monitor and a child: end both, then make sure
  [ -f "$BASE/pids" ] || { rm -rf "$BASE"; return 0; }
  local all=""
  for p in $(cat "$BASE/pids"); do all="$all $p $(ps -o pid= --ppid "$p" 2>/dev/null || true)"; done
  kill $all 2>/dev/null || true
  for _ in $(seq 50); do kill -0 $all 2>/dev/null || break; sleep 0.1; done
  kill -9 $all 2>/dev/null || true
  rm -rf "$BASE"
}
[ "$cmd" = stop ] && { stop; exit 0; }

for t in syncthing curl jq; do command -v $t >/dev/null || { echo "missing: $t (make setup installs it)" >&2; exit 69; }; done
api() { local g=$1 k=$2 m=$3 p=$4; shift 4; curl -fsS --max-time 30 -X "$m" -H "X-API-Key: $k" -H 'Content-Type: application/json' "http://$g$p" "$@"; }
waitfor() { local end=$(( $(date +%s) + $1 )); shift; until "$@" >/dev/null 2>&1; do [ "$(date +%s)" -lt "$end" ] || { echo "timeout: $*" >&2; return 1; }; sleep 0.1; done; }

rm -rf "$BASE"; mkdir -p "$BASE"/{h1,h2,A,B}
: >"$BASE/pids"
trap 'stop' ERR
for i in 1 2; do syncthing generate --home="$BASE/h$i" --no-default-folder --skip-port-probing >/dev/null 2>&1; done
ID1=$(syncthing serve --home="$BASE/h1" --device-id)
ID2=$(syncthing serve --home="$BASE/h2" --device-id)
patch_cfg() {
  sed -i \
    -e "s#<listenAddress>default</listenAddress>#<listenAddress>tcp://127.0.0.1:$2</listenAddress>#" \
    -e 's#<globalAnnounceEnabled>true#<globalAnnounceEnabled>false#' \
    -e 's#<localAnnounceEnabled>true#<localAnnounceEnabled>false#' \
    -e 's#<relaysEnabled>true#<relaysEnabled>false#' \
    -e 's#<natEnabled>true#<natEnabled>false#' \
    -e 's#<stunKeepaliveStartS>[0-9]*#<stunKeepaliveStartS>0#' \
    -e 's#<urAccepted>0#<urAccepted>-1#' \
    -e 's#<crashReportingEnabled>true#<crashReportingEnabled>false#' \
    -e 's#<autoUpgradeIntervalH>[0-9]*#<autoUpgradeIntervalH>0#' \
    -e 's#<startBrowser>true#<startBrowser>false#' \
    "$1/config.xml"
}
patch_cfg "$BASE/h1" "$P1"; patch_cfg "$BASE/h2" "$P2"
syncthing serve --home="$BASE/h1" --no-browser --no-restart --no-upgrade --gui-address="http://$GUI1" --gui-apikey="$KEY1" </dev/null >"$BASE/st1.log" 2>&1 &
echo $! >>"$BASE/pids"
syncthing serve --home="$BASE/h2" --no-browser --no-restart --no-upgrade --gui-address="http://$GUI2" --gui-apikey="$KEY2" </dev/null >"$BASE/st2.log" 2>&1 &
echo $! >>"$BASE/pids"
waitfor 60 api "$GUI1" "$KEY1" GET /rest/system/ping
waitfor 60 api "$GUI2" "$KEY2" GET /rest/system/ping
add() {  # GUI KEY PEER_ID PEER_PORT PATH
  api "$1" "$2" POST /rest/config/devices -d "$(jq -n --arg id "$3" --arg a "tcp://127.0.0.1:$4" '{deviceID:$id, name:$id[0:7], addresses:[$a]}')" >/dev/null
  api "$1" "$2" POST /rest/config/folders -d "$(jq -n --arg id "$FID" --arg p "$5" --arg d1 "$ID1" --arg d2 "$ID2" \
    '{id:$id, label:$id, path:$p, type:"sendreceive", rescanIntervalS:5, fsWatcherEnabled:true, fsWatcherDelayS:1,
      devices:[{deviceID:$d1},{deviceID:$d2}]}')" >/dev/null
}
add "$GUI1" "$KEY1" "$ID2" "$P2" "$BASE/A"
add "$GUI2" "$KEY2" "$ID1" "$P1" "$BASE/B"
connected() { api "$1" "$2" GET /rest/system/connections | jq -e --arg id "$3" '.connections[$id].connected'; }
idle() { api "$1" "$2" GET "/rest/db/status?folder=$FID" | jq -e '.state=="idle"'; }
waitfor 120 connected "$GUI1" "$KEY1" "$ID2"
waitfor 60 idle "$GUI1" "$KEY1"; waitfor 60 idle "$GUI2" "$KEY2"
trap - ERR
echo "ready $BASE/A $BASE/B"
