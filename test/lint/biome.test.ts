import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { includedFiles, parseJsonc } from '../../scripts/lint/biome.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const script = path.join(repo, 'scripts/lint/biome.ts');
/**
 * The lint script on `args`. A run of a handful of files takes about a second; once in a full suite on
 * a busy machine one never ended (Biome's WebAssembly build, no output), so a run still going after
 * 30 s is killed and made once more. What is asserted is what the second run prints.
 */
function lintRun(args: string[]) {
  const once = () =>
    spawnSync(process.execPath, [script, ...args], { encoding: 'utf8', timeout: 30_000, killSignal: 'SIGKILL' });
  const first = once();
  return first.signal === 'SIGKILL' ? once() : first;
}

/** A synthetic tree linted with the repository's own biome.jsonc. */
function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-biome-'));
  fs.copyFileSync(path.join(repo, 'biome.jsonc'), path.join(root, 'biome.jsonc'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

t.test('biome.jsonc reads as JSON with comments', async (t) => {
  t.same(parseJsonc('{\n  // a comment\n  "a": "// not a comment", /* block */\n  "b": [1, 2,],\n}\n'), {
    a: '// not a comment',
    b: [1, 2],
  });
});

t.test('violations are reported with file, line, rule and message, and fail the run', async (t) => {
  const root = tree({
    'scripts/scratch.ts': "export const a = (x?: string) => x!.length + 'a'.length;\nconst unused = 1;\n",
    'core/src/relay/bots.ts': "import { bot } from '@herald/target-telegram';\nexport const b = bot;\n",
    'plugins/provider-a/src/index.ts': "import { db } from '@herald/core/src/db/database.ts';\nexport const c = db;\n",
    // Excluded by biome.jsonc: never linted.
    'core/web/dist/bundle.ts': 'const unused = 1;\n',
    'plugins/provider-a/node_modules/x/index.ts': 'const unused = 1;\n',
    'test-output/x.ts': 'const unused = 1;\n',
  });
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  t.same(
    includedFiles(root, (parseJsonc(fs.readFileSync(path.join(root, 'biome.jsonc'), 'utf8')) as any).files.includes),
    ['core/src/relay/bots.ts', 'plugins/provider-a/src/index.ts', 'scripts/scratch.ts'],
  );
  const run = lintRun([root]);
  t.equal(run.status, 1, 'exits 1');
  t.match(run.stderr, /scripts\/scratch\.ts:2:7: warning lint\/correctness\/noUnusedVariables: /);
  t.match(
    run.stderr,
    /core\/src\/relay\/bots\.ts:1:\d+: error lint\/style\/noRestrictedImports: The core does not import a plugin/,
  );
  t.match(
    run.stderr,
    new RegExp(
      /plugins\/provider-a\/src\/index\.ts:1:\d+: error lint\/style\/noRestrictedImports: A plugin imports /.source +
        /only the contract/.source,
    ),
  );
  t.notMatch(run.stderr, /noNonNullAssertion/, 'a rule biome.jsonc switches off stays off');
  t.match(run.stderr, /biome [\d.]+: 3 diagnostic\(s\) in 3 files/);
});

t.test('a clean tree passes', async (t) => {
  const root = tree({ 'scripts/ok.ts': 'export const a = 1;\n' });
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const run = lintRun([root]);
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /biome [\d.]+: 1 files, no diagnostics/);
});

t.test(
  'a file not as the formatter writes it, or with unsorted imports, fails; --write rewrites it and nothing else',
  async (t) => {
    const wide = `export const list = [${Array.from({ length: 30 }, (_, i) => `'item-${i}'`).join(', ')}];\n`;
    const root = tree({
      'scripts/wide.ts': wide,
      'scripts/imports.ts':
        "import path from 'node:path';\nimport fs from 'node:fs';\n\nexport const x = [fs, path];\n",
      'scripts/quotes.ts': 'export const q = "double";\n',
      'scripts/ok.ts': 'export const a = 1;\n',
    });
    t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
    const run = lintRun([root]);
    t.equal(run.status, 1, 'exits 1');
    for (const f of ['wide', 'imports', 'quotes']) {
      t.match(
        run.stderr,
        new RegExp(`scripts/${f}\\.ts:1:1: error format: not as the formatter writes it`),
        `${f}.ts reported`,
      );
    }
    t.notMatch(run.stderr, /scripts\/ok\.ts/, 'a formatted file is not');

    const write = lintRun(['--write', root]);
    t.equal(write.status, 0, write.stderr);
    const read = (f: string) => fs.readFileSync(path.join(root, 'scripts', f), 'utf8');
    t.ok(
      read('wide.ts')
        .split('\n')
        .every((l) => l.length <= 120),
      'lines within 120 characters',
    );
    t.equal(
      read('wide.ts').replace(/\s+/g, ''),
      wide.replace(/\s+/g, '').replace(/,\]/, ']').replace(/\];$/, ',];'),
      'only white space and a trailing comma changed',
    );
    t.equal(
      read('imports.ts'),
      "import fs from 'node:fs';\nimport path from 'node:path';\n\nexport const x = [fs, path];\n",
      'imports sorted',
    );
    t.equal(read('quotes.ts'), "export const q = 'double';\n", 'single quotes');
    t.equal(lintRun([root]).status, 0, 'a second check passes');
  },
);
