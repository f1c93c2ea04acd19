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
baby="baby:$(cat /proc/sys/kernel/random/uuid)"
echo; echo "# the baby's focus key: $baby"
step famctl record add --focus "$baby" --store feeding kind=bottle milk=formula amountMl=120 \
  start="$(date -d '-2 hours' --iso-8601=seconds)"
step famctl record add --focus "$baby" --store sleep start="$(date -d '-90 minutes' --iso-8601=seconds)" nap=true
step famctl record add --focus "$baby" --store diaper wet=true dirty=false
step famctl record add --focus newMom --store postpartum kind=mood mood=4
step famctl log
step famctl status
step famctl replay
