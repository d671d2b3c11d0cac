// SPDX-License-Identifier: MIT
// peer.js - the Node peer of bench/office.py: an Office reader as Node agents build it today.
//
// .xlsx as Cline reads it: ExcelJS loads the workbook, every visible sheet becomes one
// tab-separated table of its cells' values (formula results, dates as ISO strings), at most
// 50,000 rows per sheet; with START, the rows of the first sheet from row START on (the window
// toolfs answers with `A.START-`; ExcelJS still has to load the whole workbook).
// .docx as Cline reads it: mammoth's extractRawText.
//
//   node peer.js xlsx FILE [START]
//   node peer.js docx FILE
// Prints the text's length in characters (the text itself goes nowhere: the bench times reading).
'use strict';
const ExcelJS = require('exceljs');
const mammoth = require('mammoth');

const MAX_ROWS = 50000;

function cellText(value) {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') {
    if ('result' in value) return cellText(value.result);
    if ('richText' in value) return value.richText.map((r) => r.text).join('');
    if ('text' in value) return String(value.text);
    if ('error' in value) return String(value.error);
  }
  return String(value);
}

async function readXlsx(file, start) {
  const workbook = new ExcelJS.Workbook();
  await workbook.xlsx.readFile(file);
  let out = '';
  for (const sheet of workbook.worksheets) {
    if (sheet.state !== 'visible') continue;
    out += `--- ${sheet.name} ---\n`;
    let rows = 0;
    sheet.eachRow({includeEmpty: false}, (row, number) => {
      if (start && number < start) return;
      if (rows >= MAX_ROWS) return;
      rows++;
      const values = [];
      row.eachCell({includeEmpty: true}, (cell) => values.push(cellText(cell.value)));
      out += values.join('\t') + '\n';
    });
    if (start) break;
  }
  return out;
}

async function readDocx(file) {
  const result = await mammoth.extractRawText({path: file});
  return result.value;
}

async function main() {
  const [kind, file, start] = process.argv.slice(2);
  const text = kind === 'xlsx' ? await readXlsx(file, start ? Number(start) : 0)
                               : await readDocx(file);
  process.stdout.write(`${text.length}\n`);
}

main().catch((err) => {
  process.stderr.write(`${err.stack || err}\n`);
  process.exit(1);
});
