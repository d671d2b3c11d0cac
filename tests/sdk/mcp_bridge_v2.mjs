// SPDX-License-Identifier: MIT
// mcp_bridge_v2.mjs - drives toolfs-mcp with the official TypeScript SDK v2 client
// (@modelcontextprotocol/client, pinned here), for tests/frontends/test_mcp_2026.py. Reads one JSON
// command per line on stdin, answers each with one JSON line on stdout ({"ok":true,"value":V} or
// {"ok":false,"error":E}):
//   {"op":"connect","command":PATH,"args":[...],"mode":"auto"|"legacy"|{"pin":V}}
//       -> {"era","version","serverVersion","capabilities","instructions","discover"}
//   {"op":"list"} -> the tools/list result (validated by the SDK)
//   {"op":"call","name":N,"arguments":{...}} -> {"ok":true,"result":R} or
//       {"ok":false,"code":C,"message":M}
//   {"op":"wire"} -> the requests the client sent and (once connected) the answers it got, raw
//   {"op":"close"} -> {"closed":true}
import { createInterface } from 'node:readline';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

let client = null;
let transport = null;
const wire = [];

// Records what crosses the transport. The SDK's StdioClientTransport is subclassed to watch
// what it sends (which also makes the client probe on this connection instead of a sibling
// process); what it receives is watched once connected.
class TappedTransport extends StdioClientTransport {
  async send(message, options) {
    wire.push({ sent: message });
    return super.send(message, options);
  }
}

function tapReceived(t) {
  const handler = t.onmessage;
  t.onmessage = (message, extra) => { wire.push({ got: message }); handler(message, extra); };
}

async function run(cmd) {
  switch (cmd.op) {
    case 'connect': {
      client = new Client({ name: 'toolfs-tests', version: '1.0.0' },
        { capabilities: {}, versionNegotiation: { mode: cmd.mode ?? 'auto',
          probe: { timeoutMs: 5000 } } });
      transport = new TappedTransport({ command: cmd.command, args: cmd.args ?? [],
        stderr: 'inherit' });
      await client.connect(transport);
      tapReceived(transport);
      return { era: client.getProtocolEra(), version: client.getNegotiatedProtocolVersion(),
        serverVersion: client.getServerVersion(), capabilities: client.getServerCapabilities(),
        instructions: client.getInstructions(), discover: client.getDiscoverResult() ?? null };
    }
    case 'list':
      return await client.listTools();
    case 'call':
      return await client.callTool({ name: cmd.name, arguments: cmd.arguments }).then(
        (result) => ({ ok: true, result }),
        (err) => ({ ok: false, code: err.code ?? null, message: String(err.message ?? err) }));
    case 'wire':
      return wire;
    case 'close':
      await client.close();
      return { closed: true };
    default:
      throw new Error(`unknown op ${cmd.op}`);
  }
}

const rl = createInterface({ input: process.stdin });
for await (const line of rl) {
  let answer;
  try {
    answer = { ok: true, value: await run(JSON.parse(line)) };
  } catch (err) {
    answer = { ok: false, error: String(err?.stack ?? err) };
  }
  process.stdout.write(JSON.stringify(answer) + '\n');
}
