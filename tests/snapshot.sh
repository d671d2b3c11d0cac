#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Records what toolfs-read prints for every generated fixture, in every format and with a few
# selectors, so that a change meant to keep behaviour can prove the bytes are identical:
#   tests/snapshot.sh BUILD_DIR OUT_DIR [FIXTURE_DIR]
#   diff -r OUT_BEFORE OUT_AFTER
# TOOLFS_SNAPSHOT_FORMATS lists the formats (default: tool anthropic openai mcp).
# Fixtures are generated into FIXTURE_DIR (default: OUT_DIR.fixtures) unless it already holds
# them, and every file's mtime is pinned so that two runs compare equal.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "$1" && pwd)
out=$(mkdir -p "$2" && cd "$2" && pwd)
fixtures=${3:-$out.fixtures}
cli="$build/cli/toolfs-read"
[ -x "$cli" ] || cli="$build/readers/cli/toolfs-read" # a build from before cli/ moved to the top
[ -x "$cli" ] || cli="$build/readers/toolfs-read" # a build from before readers/cli/


if [ ! -d "$fixtures" ]; then
  for gen in text formats images notebooks pdfs fit hostile office office_cases; do
    /usr/bin/python3 "$repo/tests/fixtures/gen_$gen.py" "$fixtures/$gen" >/dev/null
  done
  find "$fixtures" -exec touch -h -d '2026-01-01T00:00:00Z' {} +
fi

cd "$fixtures"
: >"$out/index"
read -r -a formats <<<"${TOOLFS_SNAPSHOT_FORMATS:-tool anthropic openai mcp}"
# Output names are a digest of the path (fixture names can be long or hold any byte); index
# maps them back.
find . -type f -size -40M -print0 | LC_ALL=C sort -z | while IFS= read -r -d '' file; do
  key=$(printf '%s' "${file#./}" | sha1sum | cut -c1-16)
  printf '%s %q\n' "$key" "${file#./}" >>"$out/index"
  for fmt in "${formats[@]}"; do
    for sel in "" 1 2-3 2- 1.5-; do
      args=(--format "$fmt")
      [ -n "$sel" ] && args+=(--select "$sel")
      rc=0
      "$cli" "${args[@]}" -- "${file#./}" >"$out/$key@$sel@$fmt" 2>/dev/null || rc=$?
      echo "$rc" >>"$out/$key@$sel@$fmt"
    done
  done
done
echo "snapshot: $(ls "$out" | wc -l) outputs in $out"
