// SPDX-License-Identifier: MIT
// sharp_peer.js - the image peer toolfs's fitting is measured against: Node + sharp the way
// Claude Code's Read tool fits an image (resize inside 2000x2000 without enlarging, PNG, then
// JPEG at quality 80, 60, 40, 20 until the bytes are under 3.75 MB), base64 in a JSON result.
//   node sharp_peer.js FILE      prints the JSON of FILE
//   node sharp_peer.js --serve   reads one path per line on stdin, writes each JSON to /dev/null
//                                and answers "ok BYTES" (a warm process, as inside a harness)
// sharp is pinned in bench/package.json and package-lock.json (`npm ci` in bench/).
'use strict';
const fs = require('fs');
const readline = require('readline');
const sharp = require('sharp');

const MAX_DIM = 2000;
const MAX_BYTES = 3.75 * 1024 * 1024; // 5 MB of base64
const JPEG_QUALITIES = [80, 60, 40, 20];

async function fit(buf) {
  const meta = await sharp(buf).metadata();
  const resized = sharp(buf).resize(MAX_DIM, MAX_DIM, { fit: 'inside', withoutEnlargement: true });
  let out = await resized.clone().png().toBuffer({ resolveWithObject: true });
  let mediaType = 'image/png';
  for (const quality of JPEG_QUALITIES) {
    if (out.data.length <= MAX_BYTES) break;
    out = await resized.clone().jpeg({ quality }).toBuffer({ resolveWithObject: true });
    mediaType = 'image/jpeg';
  }
  return {
    type: 'image',
    file: {
      base64: out.data.toString('base64'),
      type: mediaType,
      originalSize: buf.length,
      dimensions: {
        originalWidth: meta.width, originalHeight: meta.height,
        displayWidth: out.info.width, displayHeight: out.info.height,
      },
    },
  };
}

async function read(file) {
  return JSON.stringify(await fit(fs.readFileSync(file)));
}

async function main() {
  if (process.argv[2] !== '--serve') {
    process.stdout.write(await read(process.argv[2]) + '\n');
    return;
  }
  const sink = fs.openSync('/dev/null', 'w');
  for await (const line of readline.createInterface({ input: process.stdin })) {
    try {
      const json = await read(line);
      fs.writeSync(sink, json);
      process.stdout.write(`ok ${json.length}\n`);
    } catch (e) {
      process.stdout.write(`error ${String(e.message).replace(/\n/g, ' ')}\n`);
    }
  }
}

main().catch((e) => { console.error(e); process.exit(1); });
