// SPDX-License-Identifier: MIT
// mcp_bridge.mjs - drives an MCP server over stdio with the official TypeScript SDK's Client, for
// tests/frontends/test_mcp.py and bench/mcp.py. Reads one JSON command per line on stdin, answers
// each with one JSON line on stdout:
//   {"op":"connect","command":PATH,"args":[...],"roots":[URI...]|null}
//       -> {"serverVersion","capabilities","instructions","supported":[...],"latest":V}
//   {"op":"list"} -> the tools/list result (validated by the SDK)
//   {"op":"call","name":N,"arguments":{...}} -> {"ok":true,"result":R,"schemaOk":B} or
//       {"ok":false,"code":C,"message":M}
//   {"op":"calls","calls":[{"name","arguments"}...]} -> [the same, all sent at once]
//   {"op":"cancel","name":N,"arguments":{...},"afterMs":T} -> {"aborted":B,"ok":..}
//   {"op":"roots","roots":[URI...]} -> {} (roots replaced, notifications/roots/list_changed sent)
//   {"op":"ping"} -> {}
//   {"op":"time","name":N,"calls":[{"arguments"}...]} -> {"ms":[per call, sequential]}
//   {"op":"close"} -> {"closed":true}
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import {
  CallToolResultSchema, ListRootsRequestSchema, LATEST_PROTOCOL_VERSION,
  SUPPORTED_PROTOCOL_VERSIONS,
} from '@modelcontextprotocol/sdk/types.js';

let client = null;
let transport = null;
let roots = null;

function outcome(promise) {
  return promise.then(
    (result) => ({ ok: true, result, schemaOk: CallToolResultSchema.safeParse(result).success }),
    (err) => ({ ok: false, code: err.code ?? null, message: String(err.message ?? err) }));
}

async function run(cmd) {
  switch (cmd.op) {
    case 'connect': {
      roots = cmd.roots ?? null;
      client = new Client({ name: 'toolfs-tests', version: '1.0.0' },
        { capabilities: roots ? { roots: { listChanged: true } } : {} });
      if (roots)
        client.setRequestHandler(ListRootsRequestSchema, async () =>
          ({ roots: roots.map((uri) => ({ uri, name: uri })) }));
      transport = new StdioClientTransport({ command: cmd.command, args: cmd.args ?? [],
        stderr: 'inherit' });
      await client.connect(transport);
      return { serverVersion: client.getServerVersion(),
        capabilities: client.getServerCapabilities(), instructions: client.getInstructions(),
        supported: SUPPORTED_PROTOCOL_VERSIONS, latest: LATEST_PROTOCOL_VERSION,
        pid: transport.pid };
    }
    case 'list':
      return await client.listTools();
    case 'call':
      return await outcome(client.callTool({ name: cmd.name, arguments: cmd.arguments }));
    case 'calls':
      return await Promise.all(cmd.calls.map((c) =>
        outcome(client.callTool({ name: c.name, arguments: c.arguments }))));
    case 'cancel': {
      const ac = new AbortController();
      const p = outcome(client.callTool({ name: cmd.name, arguments: cmd.arguments }, undefined,
        { signal: ac.signal }));
      setTimeout(() => ac.abort('test cancels'), cmd.afterMs ?? 0);
      const r = await p;
      return { aborted: !r.ok && /abort|cancel/i.test(r.message), ...r };
    }
    case 'roots':
      roots = cmd.roots;
      await client.sendRootsListChanged();
      return {};
    case 'ping':
      await client.ping();
      return {};
    case 'time': {
      const ms = [];
      for (const c of cmd.calls) {
        const t0 = process.hrtime.bigint();
        const r = await client.callTool({ name: cmd.name, arguments: c.arguments });
        ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
        if (r.isError && !cmd.errorsOk)
          throw new Error(`call failed: ${JSON.stringify(r.content).slice(0, 300)}`);
      }
      return { ms };
    }
    case 'close':
      await client.close();
      return { closed: true };
    default:
      throw new Error(`unknown op ${cmd.op}`);
  }
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim())
    continue;
  let answer;
  try {
    answer = { ok: true, value: await run(JSON.parse(line)) };
  } catch (err) {
    answer = { ok: false, error: String(err && err.stack ? err.stack : err) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
}
if (client)
  await client.close().catch(() => {});
