#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Builds the libFuzzer targets of tests/fuzz with clang, generates their seeds, replays every
# input under tests/fuzz/regressions/<target>/, then fuzzes each target for SECONDS (one process
# at a time) and prints the executions per target. Exit status non-zero on any crash, leak,
# sanitizer report, timeout, or when clang is missing. On a failure the end of the output names
# the error, the seed and the failing input (base64), so that a CI log is enough to reproduce it.
# Usage: tests/fuzz/run.sh SECONDS [TARGET...]
#   TOOLFS_FUZZ_BUILD  build dir (default: build-fuzz); its fuzz-corpus/ keeps what was found
#   TOOLFS_FUZZ_SEED   libFuzzer's -seed for every target (default: a random one, printed). With
#                      a fixed seed and an empty corpus a run repeats the same inputs in the
#                      same order, as far as its time lets it go.
#   TOOLFS_FUZZ_ARGS   extra libFuzzer arguments for every run
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
seconds=${1:?usage: tests/fuzz/run.sh SECONDS [TARGET...]}
shift
build=${TOOLFS_FUZZ_BUILD:-build-fuzz}
case $build in /*) ;; *) build="$repo/$build" ;; esac
# What the targets write (fuzz_mcp's tree) goes to a folder of this run's, removed at the end.
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export TMPDIR=$scratch

all_targets=(fuzz_png fuzz_jpeg fuzz_gif fuzz_webp fuzz_names fuzz_render fuzz_text
  fuzz_tokens fuzz_notebook fuzz_read fuzz_pdf fuzz_mcp fuzz_office fuzz_png_shrink fuzz_confine
  fuzz_svg fuzz_media fuzz_sandbox_wire)
if [ $# -gt 0 ]; then
  targets=("$@")
else
  targets=("${all_targets[@]}")
fi

# Longest input per target: poppler and whole reads are slow on big inputs.
max_len() {
  case $1 in
    fuzz_pdf) echo 8192 ;;
    fuzz_read | fuzz_notebook) echo 16384 ;;
    fuzz_office | fuzz_media) echo 32768 ;;
    fuzz_names) echo 256 ;;
    fuzz_confine) echo 1024 ;;
    fuzz_mcp) echo 8192 ;;
    *) echo 4096 ;;
  esac
}

if ! command -v clang >/dev/null 2>&1; then
  echo "tests/fuzz/run.sh: clang not found (Debian: apt-get install clang libclang-rt-14-dev)" >&2
  exit 1
fi
if [ ! -f "$build/build.ninja" ]; then
  CC=clang meson setup "$build" -Dfuzz=enabled -Dwerror=true >/dev/null
fi
# Only the fuzz targets: the rest of the project is built and tested by tests/run.
ninja -C "$build" "${targets[@]/#/tests/fuzz/}"

seeds="$build/fuzz-seeds"
rm -rf "$seeds"
/usr/bin/python3 tests/fuzz/make_seeds.py "$seeds"

# A small quarantine: freed memory is reused sooner, which halves the page faults that otherwise
# dominate the slower targets (use-after-free is still caught within 16 MiB of frees). No
# strict_string_checks: libmagic strndup()s bounded buffers without a NUL, which it reports
# (regressions/fuzz_read/libmagic_strndup).
export ASAN_OPTIONS="abort_on_error=1:detect_leaks=1:allocator_may_return_null=1:quarantine_size_mb=16"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1"
export LSAN_OPTIONS="suppressions=$repo/tests/lsan.supp:print_suppressions=0"

seed=${TOOLFS_FUZZ_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')}
echo "=== libFuzzer seed: $seed (TOOLFS_FUZZ_SEED=$seed repeats this run)"

failed=()
failure_notes=()
total=0
summary=()
for t in "${targets[@]}"; do
  exe="$build/tests/fuzz/$t"
  corpus="$build/fuzz-corpus/$t"
  artifacts="$build/fuzz-artifacts/$t/"
  log="$build/fuzz-logs/$t.log"
  mkdir -p "$corpus" "$artifacts" "$(dirname "$log")"
  mkdir -p "$seeds/$t"

  # Every input that once crashed must not crash again.
  regressions=(tests/fuzz/regressions/"$t"/*)
  if [ -e "${regressions[0]}" ]; then
    if ! "$exe" -runs=1 "${regressions[@]}" >"$log.regressions" 2>&1; then
      echo "=== $t: a regression input fails again (log: $log.regressions)"
      tail -n 40 "$log.regressions"
      failed+=("$t (regression)")
      continue
    fi
    echo "=== $t: ${#regressions[@]} regression inputs pass"
  fi

  dict=()
  case $t in
    fuzz_notebook | fuzz_read) dict=(-dict=tests/fuzz/fuzz_notebook.dict) ;;
    fuzz_pdf) dict=(-dict=tests/fuzz/fuzz_pdf.dict) ;;
    fuzz_office) dict=(-dict=tests/fuzz/fuzz_office.dict) ;;
    fuzz_mcp) dict=(-dict=tests/fuzz/fuzz_mcp.dict) ;;
    fuzz_svg) dict=(-dict=tests/fuzz/fuzz_svg.dict) ;;
  esac
  echo "=== $t: fuzzing for ${seconds}s"
  rc=0
  "$exe" "$corpus" "$seeds/$t" -max_total_time="$seconds" -max_len="$(max_len "$t")" \
    -seed="$seed" -timeout=30 -rss_limit_mb=2560 -print_final_stats=1 "${dict[@]}" \
    -artifact_prefix="$artifacts" ${TOOLFS_FUZZ_ARGS:-} >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  execs=${execs:-0}
  total=$((total + execs))
  summary+=("$(printf '%-14s %12s executions' "$t" "$execs")")
  if [ "$rc" -ne 0 ]; then
    echo "=== $t: FAILED (exit $rc; log: $log; artifacts: $artifacts)"
    grep -E 'ERROR: |FUZZ CHECK FAILED|runtime error|SUMMARY' "$log" | head -n 5 || true
    tail -n 60 "$log"
    failed+=("$t")
    failure_notes+=("=== $t (seed $seed): $(grep -m 2 -E 'ERROR: |FUZZ CHECK FAILED|runtime error|Assertion |^\*\*\* ' "$log" | tr '\n' ' ')")
    # The crash's innermost frames by name (a library's own abort leaves no other trace).
    frames=$(sed -n -e 's/^ *#[0-9]* 0x[0-9a-f]* in \([^ ]*\).*/\1/p' \
      -e 's/^ *#[0-9]* 0x[0-9a-f]* *(\([^)]*\)).*/\1/p' "$log" |
      grep -v -E '^(__sanitizer|fuzzer::|__interceptor|__GI_|__libc|abort$|raise$|gsignal$|pthread_kill|__pthread)' |
      sed 's|.*/||' | head -n 8 | paste -sd '<' - || true)
    [ -z "$frames" ] || failure_notes+=("=== $t: innermost frames: $frames")
    # The input itself, so that a CI log alone is enough to reproduce (base64 -d > file).
    for a in "$artifacts"*; do
      [ -f "$a" ] && [ "$(stat -c %s "$a")" -le 16384 ] || continue
      failure_notes+=("=== $t: $(basename "$a") as base64: $(base64 -w0 "$a")")
    done
  fi
done

echo "=== fuzzing summary (${seconds}s per target)"
printf '%s\n' "${summary[@]}"
printf '%-14s %12s executions\n' "total" "$total"
if [ ${#failed[@]} -ne 0 ]; then
  # Again at the end, where a CI log's tail shows it.
  [ ${#failure_notes[@]} -eq 0 ] || printf '%s\n' "${failure_notes[@]}"
  echo "FAILED: ${failed[*]}"
  exit 1
fi
