import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { checkRequestCasts, requestCasts } from '../../scripts/lint/request-casts.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const script = path.join(repo, 'scripts/lint/request-casts.ts');

const lines = (code: string) => requestCasts(code).map((c) => c.line);

t.test('casts of request data are flagged, with their line', async (t) => {
  t.same(lines('const b = req.body as X;'), [1], 'req.body as X');
  t.same(lines('const id = (req.query as any).id;'), [1], '(req.query as any)');
  t.same(lines('const p = req.params as unknown as Y;'), [1], 'req.params as unknown as Y: one cast');
  t.same(lines("const h = req.headers['x-token'] as string;"), [1], 'an indexed header');
  t.same(lines('const l = req.body.locale as L;\nconst m = req.body?.a?.b as M;'), [1, 2], 'a field of the body');
  t.same(lines('const b = (req.body ?? {}) as X;'), [1], 'a group that starts with the body');
  t.same(lines('const b = ((req.query)) as X;'), [1], 'nested groups');
  t.same(lines('const b = <X>req.body;'), [1], 'an angle-bracket assertion');
  t.same(
    lines(
      'app.post(\n  "/x",\n  async (request) => {\n    const b = request.body as {\n      a: string;\n    };\n  },\n);',
    ),
    [4],
  );
  t.same(lines('const s = `${(req.params as P).id}`;'), [1], 'inside a template substitution');
  t.match(requestCasts('req.query as Q;')[0].message, /req\.query is cast/);
});

t.test('clean code passes', async (t) => {
  const clean = [
    'const b = req.body;',
    'const id = req.params.id;',
    'const q = req.query?.q ?? "";',
    'const n = Number(req.headers["content-length"] ?? 0);',
    'const l: Locale = req.body?.locale ?? (row.locale as Locale);',
    'const x = value as unknown as Y;',
    'if (a > req.body.length) f();',
    'const c = req.query satisfies object;',
    '// a comment: req.body as X',
    '/* req.params as any */',
    "const s = 'req.body as X';",
    'const t = `req.query as ${name}`;',
    'const r = /req.body as X/;',
    'const f = reqs.body as X; const g = this.req.body as X;',
    'const a = <T,>(x: T) => x;\nconst g = (req: any) => req.body;',
  ];
  for (const code of clean) t.same(requestCasts(code), [], code);
});

/** A synthetic tree with the files given. */
function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-request-casts-'));
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

t.test('the command checks core/src, not tests nor other folders, and fails with file:line', async (t) => {
  const root = tree({
    'core/src/relay/a.ts': 'export const f = (req: any) => {\n  return req.body as { a: string };\n};\n',
    'core/src/relay/b.ts': 'export const g = (req: any) => req.body;\n',
    'core/src/relay/a.test.ts': 'const b = req.body as X;\n',
    'core/web/src/page.ts': 'const b = req.body as X;\n',
    'scripts/x.ts': 'const b = req.body as X;\n',
  });
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  t.same(
    checkRequestCasts(root).map((c) => `${c.file}:${c.line}`),
    ['core/src/relay/a.ts:2'],
  );
  const run = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  t.equal(run.status, 1);
  t.match(run.stdout, /^core\/src\/relay\/a\.ts:2: req\.body is cast/m);

  fs.writeFileSync(path.join(root, 'core/src/relay/a.ts'), 'export const f = (req: any) => req.body;\n');
  const clean = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  t.equal(clean.status, 0, clean.stdout);
  t.equal(clean.stdout, '');
});

t.test('the core casts no request data', async (t) => {
  t.same(checkRequestCasts(repo), []);
});
