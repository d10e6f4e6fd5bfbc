import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { checkUntypedRecords, untypedRecords } from '../../scripts/lint/untyped-rows.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const script = path.join(repo, 'scripts/lint/untyped-rows.ts');

const lines = (code: string) => untypedRecords(code).map((c) => c.line);

t.test('Record<string, any> is flagged, with its line', async (t) => {
  t.same(lines('type Row = Record<string, any>;'), [1], 'a row type');
  t.same(lines('const m = new Map<string, Record<string, any>>();'), [1], 'closed by >>');
  t.same(lines('function f(\n  r: Record<\n    string,\n    any\n  >,\n) {}'), [2], 'across lines');
  t.same(lines('db.all<Record<string, any>>(sql);\nconst x: Record<string,any> = {};'), [1, 2], 'each one');
  t.match(untypedRecords('let r: Record<string, any>;')[0].message, /Record<string, unknown>/);
});

t.test('clean code passes', async (t) => {
  const clean = [
    'type Row = Record<string, unknown>;',
    'const m: Record<string, number> = {};',
    'type X = Record<number, any>;',
    '// a comment: Record<string, any>',
    "const s = 'Record<string, any>';",
    'const t = `Record<string, any>`;',
  ];
  for (const code of clean) t.same(lines(code), [], code);
});

t.test('the script checks core/src and core/web/src, not tests, and exits 1 on a find', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'untyped-rows-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const write = (rel: string, code: string) => {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), code);
  };
  write('core/src/a.ts', 'export type Row = Record<string, any>;\n');
  write('core/web/src/b.tsx', 'const x = 1;\nexport const p: Record<string, any> = {};\n');
  write('core/src/a.test.ts', 'type Row = Record<string, any>;\n');
  write('scripts/c.ts', 'type Row = Record<string, any>;\n');
  t.same(
    checkUntypedRecords(root).map((c) => `${c.file}:${c.line}`),
    ['core/src/a.ts:1', 'core/web/src/b.tsx:2'],
    'the two source files, not the test or scripts',
  );
  const r = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  t.equal(r.status, 1, 'exit 1');
  t.match(r.stdout, /core\/src\/a\.ts:1: Record<string, any>/);
  fs.rmSync(path.join(root, 'core/src/a.ts'));
  fs.rmSync(path.join(root, 'core/web/src/b.tsx'));
  t.equal(spawnSync(process.execPath, [script, root], { encoding: 'utf8' }).status, 0, 'clean: exit 0');
});

t.test('this repository has none', async (t) => {
  t.same(checkUntypedRecords(repo), []);
});
