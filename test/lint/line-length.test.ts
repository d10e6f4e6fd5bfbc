import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { checkLineLength, lineLength, longLines, MAX_LINE_LENGTH, PENDING } from '../../scripts/lint/line-length.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const script = path.join(repo, 'scripts/lint/line-length.ts');

/** A synthetic tree checked with the repository's own biome.jsonc. */
function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-line-length-'));
  fs.copyFileSync(path.join(repo, 'biome.jsonc'), path.join(root, 'biome.jsonc'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

const line = (n: number, c = 'x') => `// ${c.repeat(n - 3)}`;

t.test('the limit is 120 characters: 120 passes, 121 fails', async (t) => {
  t.equal(MAX_LINE_LENGTH, 120);
  t.equal(line(120).length, 120);
  t.same(longLines(`${line(120)}\n`), []);
  t.same(longLines(`a\n${line(121)}\n`), [{ line: 2, length: 121 }]);
  t.same(longLines(`${line(120)}\r\n`), [], 'a CRLF ending is not counted');
});

t.test('characters are counted, not bytes nor UTF-16 units', async (t) => {
  t.equal(lineLength('é'.repeat(120)), 120);
  t.equal(Buffer.byteLength('é'.repeat(120)), 240);
  t.same(longLines(`// ${'é'.repeat(117)}\n`), [], '120 accented characters (240 bytes) pass');
  t.same(longLines(`// ${'é'.repeat(118)}\n`), [{ line: 1, length: 121 }]);
  t.equal(lineLength('😀'), 1, 'an astral character counts once');
  t.same(longLines(`// ${'😀'.repeat(117)}\n`), [], '120 code points (237 UTF-16 units) pass');
});

t.test('the CLI lists file:line and length of each long line in the included files, and exits 1', async (t) => {
  const root = tree({
    'scripts/long.ts': `export const a = 1;\n${line(121)}\n${line(120)}\n${line(200)}\n`,
    'plugins/provider-a/src/ok.ts': `${line(120)}\n`,
    // Not selected by biome.jsonc's includes: never checked.
    'core/web/dist/bundle.ts': `${line(300)}\n`,
    'plugins/provider-a/node_modules/x/index.ts': `${line(300)}\n`,
    'docs/notes.md': `${line(300)}\n`,
  });
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const run = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  t.equal(run.status, 1, 'exits 1');
  t.match(run.stderr, /^scripts\/long\.ts:2: 121 characters$/m);
  t.match(run.stderr, /^scripts\/long\.ts:4: 200 characters$/m);
  t.notMatch(run.stderr, /scripts\/long\.ts:3:/, 'the 120-character line passes');
  t.notMatch(run.stderr, /bundle|node_modules|notes/, 'files outside the includes are not checked');
  t.match(run.stderr, /2 line\(s\) over 120 characters in 2 files/);
});

t.test('a clean tree passes', async (t) => {
  const root = tree({ 'scripts/ok.ts': `${line(120)}\n`, 'test/ok.test.ts': 'export {};\n' });
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const run = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /2 files, no line over 120 characters/);
});

t.test('pending prefixes are skipped, each with a reason', async (t) => {
  for (const p of PENDING) t.ok(p.reason.length > 10, `${p.prefix} says why`);
  const pending = [{ prefix: 'core/src/' }, { prefix: 'test/web/' }];
  const root = tree({
    'core/src/long.ts': `${line(150)}\n`,
    'core/web/src/long.tsx': `${line(150)}\n`,
    'test/web/long.test.tsx': `${line(150)}\n`,
    'core/other/long.ts': `${line(150)}\n`,
    'test/core/long.test.ts': `${line(150)}\n`,
  });
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  t.same(
    checkLineLength(root, undefined, pending).findings.map((f) => f.file),
    ['core/other/long.ts', 'core/web/src/long.tsx', 'test/core/long.test.ts'],
    'only the files outside the pending prefixes',
  );
  t.same(
    checkLineLength(root, undefined, []).findings.map((f) => f.file),
    [
      'core/other/long.ts',
      'core/src/long.ts',
      'core/web/src/long.tsx',
      'test/core/long.test.ts',
      'test/web/long.test.tsx',
    ],
    'with nothing pending every file is checked',
  );
  t.same(
    checkLineLength(root, ['core/other/long.ts', 'core/src/long.ts'], pending).findings.map((f) => f.file),
    ['core/other/long.ts'],
    'named files: still only those outside the pending prefixes',
  );
  t.same(
    checkLineLength(root)
      .findings.map((f) => f.file)
      .filter((f) => !PENDING.some((p) => f.startsWith(p.prefix))),
    checkLineLength(root).findings.map((f) => f.file),
    "the default is the repository's PENDING list",
  );
});
