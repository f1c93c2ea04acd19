#!/usr/bin/env bash
# A household demo on the embedded default: a device in a temporary home,
# a few records appended, the log shown, and replay verifying every event.
set -euo pipefail
bin=${1:-famctl}
home=$(mktemp -d "${TMPDIR:-/tmp}/famctl-demo.XXXXXX")
trap 'rm -rf "$home"' EXIT
export FAMCTL_HOME="$home/mum"
famctl() { "$bin" "$@"; }
step() { printf '\n$ %s\n' "$*"; "$@"; }

step famctl init --name "Mum's phone"
printf '\n$ famctl subject add baby --name Lily --birth 2026-06-01\n'
baby=$(famctl subject add baby --name Lily --birth 2026-06-01)
echo "$baby"
step famctl subject add newMom
step famctl record add --focus "$baby" --store feeding kind=bottle milk=formula amountMl=120 \
  start="$(date -d '-2 hours' --iso-8601=seconds)"
step famctl record add --focus "$baby" --store sleep start="$(date -d '-90 minutes' --iso-8601=seconds)" nap=true
step famctl record add --focus "$baby" --store diaper wet=true dirty=false
step famctl record add --focus newMom --store postpartum kind=mood mood=4
printf '\n$ famctl record add --focus newMom --store postpartum kind=epds epds=…  (an id, kept for the update below)\n'
epds=$(famctl record add --focus newMom --store postpartum kind=epds epds=1,1,0,1,0,1,0,1,0,0)
echo "$epds"
step famctl record update "$epds" note="talked it through with the midwife"
step famctl record add --focus "$baby" --store sleep start="$(date -d '-5 hours' --iso-8601=seconds)" end="$(date -d '-4 hours' --iso-8601=seconds)"
printf '\n# a sleep overlapping another sleep of the same baby is refused (exit 65):\n'
step famctl record add --focus "$baby" --store sleep start="$(date -d '-80 minutes' --iso-8601=seconds)" || true
step famctl record list
step famctl record show "$epds" --history
step famctl log
step famctl status
step famctl digest
step famctl replay
