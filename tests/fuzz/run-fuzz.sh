#!/bin/sh
# run-fuzz.sh BINDIR SRCDIR RUNS NAME... — runs each libFuzzer harness BINDIR/fuzz-NAME over a
# scratch copy of its corpus (SRCDIR/tests/fuzz/corpus/NAME: seeds from the shipped files and the
# regression inputs of issue 11), then RUNS more executions.  The source tree is never written;
# a finding leaves crash-*/leak-*/timeout-* files in the current directory and fails the run.
set -eu
bindir=$1 srcdir=$2 runs=$3
shift 3
work=$(mktemp -d "${TMPDIR:-/tmp}/ddpsim-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM
for name in "$@"; do
  mkdir "$work/$name"
  cp "$srcdir/tests/fuzz/corpus/$name"/* "$work/$name/"
  echo "== fuzz-$name: corpus of $(ls "$work/$name" | wc -l) inputs, then $runs runs"
  # -max_len keeps inputs file-sized but cheap (64 KiB: a minified trace of two steps is 18 KB); -timeout catches hangs (a FIFO would be one);
  # -rss_limit_mb catches runaway allocations (the 5.5 GB --gpus expansion of issue 11).
  "$bindir/fuzz-$name" -runs="$runs" -max_len=65536 -timeout=20 -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="./fuzz-$name-" "$work/$name" 2>"$work/$name.log" || {
    tail -40 "$work/$name.log" >&2
    echo "fuzz-$name: FAILED (see fuzz-$name-* in $(pwd))" >&2
    exit 1
  }
  grep -E '^(stat::number_of_executed_units|stat::peak_rss_mb|Done )' "$work/$name.log" || true
done
