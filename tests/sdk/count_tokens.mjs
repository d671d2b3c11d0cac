// SPDX-License-Identifier: MIT
// count_tokens.mjs - the exact o200k_base token count of files, by js-tiktoken (pinned here), the
// oracle of toolfs's token estimate (tests/readers/test_tokens.py).
// Usage: node count_tokens.mjs FILE...
// Prints a JSON object {FILE: tokens}; a file's bytes are read as UTF-8 (invalid bytes U+FFFD).
import { readFileSync } from 'node:fs';
import { Tiktoken } from 'js-tiktoken/lite';
import o200k from 'js-tiktoken/ranks/o200k_base';

const enc = new Tiktoken(o200k);
const counts = {};
for (const file of process.argv.slice(2))
  counts[file] = enc.encode(readFileSync(file, 'utf8'), [], []).length;
process.stdout.write(JSON.stringify(counts));
