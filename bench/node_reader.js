// SPDX-License-Identifier: MIT
// node_reader.js - the peer toolfs is measured against: the Read tool of a Node.js agent.
//
// It does what such a tool does: read the whole file, detect an image by its signature, base64
// it, build a ToolResult-like object and JSON.stringify it; for text, split the lines and
// format the first 2000 the way `cat -n` does. Two modes:
//   node node_reader.js FILE      prints the JSON of FILE
//   node node_reader.js --serve   reads one path per line on stdin, writes each JSON to
//                                 /dev/null and answers "ok BYTES" on stdout (a warm process,
//                                 as an agent's tool runs inside a long-lived harness)
'use strict';
const fs = require('fs');
const path = require('path');

const MAX_LINES = 2000;
const MAX_LINE_CHARS = 2000;

function imageType(buf) {
  if (buf.length >= 8 && buf.readUInt32BE(0) === 0x89504e47 && buf.readUInt32BE(4) === 0x0d0a1a0a)
    return 'image/png';
  if (buf.length >= 3 && buf[0] === 0xff && buf[1] === 0xd8 && buf[2] === 0xff) return 'image/jpeg';
  if (buf.length >= 6 && (buf.toString('latin1', 0, 6) === 'GIF87a' || buf.toString('latin1', 0, 6) === 'GIF89a'))
    return 'image/gif';
  if (buf.length >= 12 && buf.toString('latin1', 0, 4) === 'RIFF' && buf.toString('latin1', 8, 12) === 'WEBP')
    return 'image/webp';
  return null;
}

function read(file) {
  const st = fs.statSync(file);
  const buf = fs.readFileSync(file);
  const meta = { size: st.size, modified: st.mtime.toISOString() };
  const mime = imageType(buf);
  if (mime) {
    return {
      success: true, contentType: 'image', path: file, mimeType: mime,
      content: `Image ${path.basename(file)}`,
      shortResult: `Read image (${(st.size / 1024).toFixed(1)} KB)`, truncated: false,
      images: [{ data: buf.toString('base64'), mediaType: mime }], metadata: meta,
    };
  }
  const lines = buf.toString('utf8').split(/\r?\n/);
  if (lines.length && lines[lines.length - 1] === '') lines.pop();
  const shown = lines.slice(0, MAX_LINES).map((line, i) => {
    const cut = line.length > MAX_LINE_CHARS ? line.slice(0, MAX_LINE_CHARS) : line;
    return `${String(i + 1).padStart(6)}\t${cut}`;
  });
  return {
    success: true, contentType: 'text', path: file, content: shown.join('\n') + (shown.length ? '\n' : ''),
    shortResult: `Read ${shown.length} lines (1-${shown.length} of ${lines.length})`,
    truncated: lines.length > MAX_LINES,
    range: { unit: 'line', start: 1, end: shown.length, total: lines.length },
    lineCount: shown.length, metadata: meta,
  };
}

if (process.argv[2] === '--serve') {
  const sink = fs.openSync('/dev/null', 'w');
  let pending = '';
  process.stdin.on('data', (chunk) => {
    pending += chunk.toString();
    let nl;
    while ((nl = pending.indexOf('\n')) >= 0) {
      const file = pending.slice(0, nl);
      pending = pending.slice(nl + 1);
      const json = JSON.stringify(read(file)) + '\n';
      fs.writeSync(sink, json);
      process.stdout.write(`ok ${Buffer.byteLength(json)}\n`);
    }
  });
} else {
  process.stdout.write(JSON.stringify(read(process.argv[2])) + '\n');
}
