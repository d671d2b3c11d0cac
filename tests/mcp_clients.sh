#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# Checks toolfs-mcp with the agent CLIs that can test a configured MCP server without a model
# account: installs them (npm, pinned below) into a temporary folder, configures toolfs-mcp as the
# README says under a temporary HOME, and prints what their health checks say. Not part of
# tests/run (it downloads the clients); Claude Code's and Gemini CLI's checks must say
# "Connected" (exit 1 otherwise). Codex CLI 0.169 lists the server but has no health check.
# Usage: tests/mcp_clients.sh [BUILD_DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$repo/build}" && pwd)
server="$build/mcp/toolfs-mcp"
[ -x "$server" ] || { echo "tests/mcp_clients.sh: $server is not built" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/clients" "$work/home" "$work/project"
echo "int main(void) { return 0; }" >"$work/project/main.c"
(cd "$work/clients" && echo '{"private":true}' >package.json &&
  npm install --no-audit --no-fund --loglevel=error @anthropic-ai/claude-code@2.1.330 \
    @google/gemini-cli@0.61.0 @openai/codex@0.169.0 >/dev/null)
bin="$work/clients/node_modules/.bin"
export HOME="$work/home"
cd "$work/project"
status=0

echo "== Claude Code $("$bin/claude" --version)"
"$bin/claude" mcp add toolfs -- "$server" "$work/project" >/dev/null
"$bin/claude" mcp list | tee "$work/claude.out"
grep -q "toolfs: .* Connected" "$work/claude.out" || status=1

echo "== Gemini CLI $("$bin/gemini" --version)"
mkdir -p "$HOME/.gemini"
printf '{"mcpServers":{"toolfs":{"command":"%s","args":["%s"]}}}\n' "$server" "$work/project" \
  >"$HOME/.gemini/settings.json"
printf '{"%s":"TRUST_FOLDER"}\n' "$work/project" >"$HOME/.gemini/trustedFolders.json"
"$bin/gemini" mcp list 2>&1 | tee "$work/gemini.out"
grep -q "toolfs: .* Connected" "$work/gemini.out" || status=1

echo "== Codex CLI $("$bin/codex" --version)"
mkdir -p "$HOME/.codex"
printf '[mcp_servers.toolfs]\ncommand = "%s"\nargs = ["%s"]\n' "$server" "$work/project" \
  >"$HOME/.codex/config.toml"
"$bin/codex" mcp list 2>/dev/null
exit $status
