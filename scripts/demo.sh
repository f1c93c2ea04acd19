#!/usr/bin/env bash
# The household demo on the embedded default: three devices (three homes on
# this machine) sharing one temporary folder, as Syncthing or Dropbox would
# keep it. Mum creates the family and the baby, invites Dad (member) and
# Grandma (viewer); records are added on different devices, one is edited on
# two at once; everyone syncs; all print the same digest; Grandma's attempted
# write is refused; replay passes everywhere.
set -euo pipefail
bin=${1:-famctl}
base=$(mktemp -d "${TMPDIR:-/tmp}/famctl-demo.XXXXXX")
trap 'rm -rf "$base"' EXIT
shared="$base/shared"
say() { printf '\n\033[1m# %s\033[0m\n' "$*"; }
on() { local who=$1; shift; printf '\n[%s] $ famctl %s\n' "$who" "$*"; "$bin" --home "$base/$who" "$@"; }
quiet() { local who=$1; shift; "$bin" --home "$base/$who" "$@"; }

say "Mum sets up her phone and the family"
on mum init --name "Mum's phone"
on mum family create --name "The Lins" --dir "$shared"
printf '\n[mum] $ famctl subject add baby --name Lily --birth 2026-06-01\n'
baby=$(quiet mum subject add baby --name Lily --birth 2026-06-01); echo "$baby"
on mum subject add newMom

say "Mum invites Dad (member) and Grandma (viewer); they accept on their own phones"
printf '\n[mum] $ famctl invite --role member\n'
dadcode=$(quiet mum invite --role member); echo "$dadcode"
printf '\n[mum] $ famctl invite --role viewer --expires 2d\n'
grancode=$(quiet mum invite --role viewer --expires 2d); echo "${grancode:0:40}…"
on dad accept "$dadcode" --name "Dad's phone" --dir "$shared"
on grandma accept "$grancode" --name "Grandma's tablet" --dir "$shared" --merge
for who in mum dad grandma mum; do quiet "$who" sync >/dev/null; done
on mum members

say "Records from different devices"
printf '\n[mum] $ famctl record add --focus %s --store feeding kind=bottle …\n' "$baby"
feed=$(quiet mum record add --focus "$baby" --store feeding kind=bottle milk=formula amountMl=120 \
  start="$(date -d '-3 hours' --iso-8601=seconds)"); echo "$feed"
on dad record add --focus "$baby" --store diaper wet=true dirty=false color=yellow
on dad record add --focus "$baby" --store sleep start="$(date -d '-5 hours' --iso-8601=seconds)" end="$(date -d '-4 hours' --iso-8601=seconds)" nap=true
on mum record add --focus newMom --store postpartum kind=mood mood=4

say "Grandma is a viewer: her write is refused"
on grandma record add --focus "$baby" --store diaper wet=true || echo "(exit $?: refused, as it should be)"

say "Everyone syncs; then Mum and Dad edit the same feeding at the same time, different fields"
for who in mum dad grandma; do on "$who" sync; done
on mum record update "$feed" amountMl=150
on dad record update "$feed" end="$(date -d '-150 minutes' --iso-8601=seconds)" note="burped twice"
for who in mum dad grandma mum dad grandma; do quiet "$who" sync >/dev/null; done
on grandma record show "$feed" --history

say "Everyone holds the same state"
for who in mum dad grandma; do printf '[%s] digest ' "$who"; quiet "$who" digest; done
on grandma record list
on dad status

say "The audit passes on every device"
for who in mum dad grandma; do printf '[%s] ' "$who"; quiet "$who" replay | tail -1; done
