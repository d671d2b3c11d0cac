// SPDX-License-Identifier: MIT
// check_mcp.mjs - validates MCP CallToolResults with the MCP SDK's own schema (tests/frontends/test_formats.py).
// Usage: node check_mcp.mjs FILE, FILE holding a JSON array of results. Prints a JSON array with,
// for each, {"ok": true, "parsed": <what CallToolResultSchema.parse returned>} or
// {"ok": false, "error": "<zod's message>"}.
import { readFileSync } from 'node:fs';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';

const results = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const verdicts = results.map((result) => {
  const parsed = CallToolResultSchema.safeParse(result);
  return parsed.success ? { ok: true, parsed: parsed.data } : { ok: false, error: parsed.error.message };
});
process.stdout.write(JSON.stringify(verdicts));
