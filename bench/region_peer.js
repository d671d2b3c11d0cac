// SPDX-License-Identifier: MIT
// region_peer.js - the peer of bench/region.py: Node + sharp cropping a rectangle from an image
// and fitting it as toolfs does (extract, resize inside MAX_DIM without enlarging, toBuffer as
// PNG for a PNG source and JPEG at quality 85 for a JPEG source), base64 in a JSON result.
//   node region_peer.js FILE W H X Y MAX_DIM   prints the JSON (one process per region)
//   node region_peer.js --serve                reads "FILE W H X Y MAX_DIM" lines on stdin,
//                                              writes each JSON to /dev/null, answers "ok BYTES"
// sharp is pinned in bench/package.json and package-lock.json (`npm ci` in bench/), as for bench/run.
'use strict';
const fs = require('fs');
const readline = require('readline');
const sharp = require('sharp');

async function region(file, w, h, x, y, maxDim) {
  const buf = fs.readFileSync(file);
  const jpeg = buf[0] === 0xff && buf[1] === 0xd8;
  const img = sharp(buf, { sequentialRead: true })
    .extract({ left: x, top: y, width: w, height: h })
    .resize(maxDim, maxDim, { fit: 'inside', withoutEnlargement: true });
  const out = await (jpeg ? img.jpeg({ quality: 85 }) : img.png())
    .toBuffer({ resolveWithObject: true });
  return JSON.stringify({
    type: 'image',
    region: { x, y, width: w, height: h },
    width: out.info.width,
    height: out.info.height,
    mediaType: jpeg ? 'image/jpeg' : 'image/png',
    data: out.data.toString('base64'),
  });
}

function parse(args) {
  const [file, ...nums] = args;
  return [file, ...nums.map(Number)];
}

async function main() {
  if (process.argv[2] !== '--serve') {
    process.stdout.write(await region(...parse(process.argv.slice(2))) + '\n');
    return;
  }
  const sink = fs.openSync('/dev/null', 'w');
  for await (const line of readline.createInterface({ input: process.stdin })) {
    try {
      const json = await region(...parse(line.split(' ')));
      fs.writeSync(sink, json);
      process.stdout.write(`ok ${json.length}\n`);
    } catch (e) {
      process.stdout.write(`error ${String(e.message).replace(/\n/g, ' ')}\n`);
    }
  }
}

main().catch((e) => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
