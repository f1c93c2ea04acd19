#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each with its seed corpus.
#   scripts/fuzz.sh [RUNS]       (default 2,000,000 executions per target; the field target runs a tenth)
#   scripts/fuzz.sh --typecheck  (only type-checks the targets' sources, once for all five: quick, no fuzzing runtime needed)
set -euo pipefail
cd "$(dirname "$0")/.."
typecheck=false
if [ "${1:-}" = --typecheck ]; then typecheck=true; shift; fi
RUNS=${1:-2000000}
case "$RUNS" in ''|*[!0-9]*) echo "usage: scripts/fuzz.sh [RUNS | --typecheck]" >&2; exit 64;; esac
out=.build/fuzz; mkdir -p "$out"
src=(Sources/Envelope/*.swift
     Sources/Projections/Schema/*.swift Sources/Projections/FocusKey.swift Sources/Projections/RecordEvent.swift
     Sources/Projections/SubjectEvent.swift Sources/Projections/PhotoEvent.swift Sources/Projections/UUIDText.swift Sources/Projections/DecimalText.swift Sources/Projections/Household/InviteCode.swift
     Sources/Projections/Household/LibraryEvent.swift Sources/Projections/Household/Role.swift
     Sources/Replicator/Segment.swift Sources/Replicator/SegmentName.swift Sources/Replicator/ConflictCopy.swift
     Fuzz/FuzzTargets.swift)
targets=(envelope segment invite json field)
if $typecheck; then
  # The same sources as the build below, without the sanitizers: a file the
  # targets need and the list lacks shows up here. Every target is a
  # function compiled whatever the flag (the flag only picks the one the
  # entry point calls), so one type-check covers the five.
  swiftc -typecheck -parse-as-library -module-name Envelope -D FUZZ_ENVELOPE \
    -Xcc -fmodule-map-file=Sources/CSodium/module.modulemap -I Sources/CSodium \
    "${src[@]}" 2>"$out/typecheck.log" || { grep -E 'error' "$out/typecheck.log" >&2; echo "the fuzz targets do not type-check" >&2; exit 1; }
  echo "== ${targets[*]}: type-check"
  exit 0
fi
for t in "${targets[@]}"; do
  flag=FUZZ_$(echo "$t" | tr a-z A-Z)
  swiftc -O -sanitize=fuzzer,address -parse-as-library -module-name Envelope -D "$flag" \
    -Xcc -fmodule-map-file=Sources/CSodium/module.modulemap -I Sources/CSodium -lsodium \
    "${src[@]}" -o "$out/fuzz-$t" 2>"$out/build-$t.log" || { cat "$out/build-$t.log" >&2; exit 1; }
  mkdir -p "$out/corpus-$t"; cp Fuzz/corpus/"$t"/* "$out/corpus-$t/" 2>/dev/null || true
  echo "== $t"
  runs=$RUNS; [ "$t" = field ] && runs=$(( RUNS / 10 ))   # the field target checks every field of every store per input
  "$out/fuzz-$t" -runs="$runs" -max_len=4096 "$out/corpus-$t" 2>&1 | grep -E "^#[0-9]+ +DONE|^Done|ERROR|SUMMARY" || true
done
