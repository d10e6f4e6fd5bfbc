import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { checkEventTargetCasts, eventTargetCasts } from '../../scripts/lint/event-target-casts.ts';

const repo = path.resolve(import.meta.dirname, '../..');
const script = path.join(repo, 'scripts/lint/event-target-casts.ts');

const lines = (code: string) => eventTargetCasts(code).map((c) => c.line);

t.test('casts of event targets are flagged, with their line', async (t) => {
  t.same(lines('<input onInput={(e) => set((e.target as HTMLInputElement).value)} />'), [1], '(e.target as X).value');
  t.same(lines('const el = ev.currentTarget as HTMLSelectElement;'), [1], 'currentTarget as X');
  t.same(lines('const el = event.target! as HTMLElement;'), [1], 'a non-null target');
  t.same(lines('const el = (e.target) as HTMLElement;'), [1], 'a group that starts with the target');
  t.same(lines('const el = <HTMLElement>e.target;'), [1], 'an angle-bracket assertion');
  t.same(lines('const l = e.currentTarget.value as Locale;'), [1], 'a value cast to a union');
  t.same(lines("const l = (e.target.value ?? '') as Locale;"), [1], 'a group holding the value');
  t.same(
    lines('<select\n  value={v}\n  onChange={(e) =>\n    setKind((e.target as HTMLSelectElement).value)\n  }\n/>'),
    [4],
    'a multi-line handler',
  );
  t.same(lines('<p>{x}</p><input onChange={(e) => f((e.target as HTMLInputElement).checked)} />'), [1], 'after </p>');
  t.match(eventTargetCasts('(e.target as HTMLInputElement).value;')[0].message, /e\.target is cast.*currentTarget/);
  t.match(eventTargetCasts('e.currentTarget.value as L;')[0].message, /value of e\.currentTarget is cast.*oneOf/);
});

t.test('clean code passes', async (t) => {
  const clean = [
    '<input onInput={(e) => setName(e.currentTarget.value)} />',
    '<input type="checkbox" onChange={(e) => setOn(e.currentTarget.checked)} />',
    '<input readOnly onFocus={(e) => e.currentTarget.select()} />',
    '<select onChange={(e) => setRole(oneOf(ROLES, e.currentTarget.value) ?? role)} />',
    'if (e.target instanceof Node && !box.contains(e.target)) close();',
    'const x = value as unknown as Y; const r = row.target as string;',
    'const n = (ev.detail as CustomEvent).type; const m = (mouseEvent.target.value);',
    '// a comment: (e.target as HTMLInputElement)',
    "const s = '(e.target as HTMLInputElement)';",
    'const el = target as HTMLElement;',
  ];
  for (const code of clean) t.same(eventTargetCasts(code), [], code);
});

t.test('the command checks core/web/src (.ts and .tsx), not tests nor other folders, with file:line', async (t) => {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-event-target-casts-'));
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  const files: Record<string, string> = {
    'core/web/src/pages/a.tsx':
      'export const A = () => (\n  <input onInput={(e) => f((e.target as HTMLInputElement).value)} />\n);\n',
    'core/web/src/lib/b.ts': 'export const g = (e: Event) => e.currentTarget as HTMLElement;\n',
    'core/web/src/pages/c.tsx': 'export const C = () => <input onInput={(e) => f(e.currentTarget.value)} />;\n',
    'core/web/src/pages/a.test.tsx': 'const v = (e.target as HTMLInputElement).value;\n',
    'core/src/x.ts': 'const v = (e.target as HTMLInputElement).value;\n',
    'test/web/y.ts': 'const v = (e.target as HTMLInputElement).value;\n',
  };
  for (const [rel, text] of Object.entries(files)) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  t.same(
    checkEventTargetCasts(root).map((c) => `${c.file}:${c.line}`),
    ['core/web/src/lib/b.ts:1', 'core/web/src/pages/a.tsx:2'],
  );
  const run = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  t.equal(run.status, 1);
  t.match(run.stdout, /^core\/web\/src\/pages\/a\.tsx:2: e\.target is cast/m);
  t.match(run.stdout, /2 cast\(s\) of event targets/);
  const one = spawnSync(process.execPath, [script, root, 'core/web/src/pages/c.tsx'], { encoding: 'utf8' });
  t.equal(one.status, 0, 'only the files named');

  fs.writeFileSync(path.join(root, 'core/web/src/pages/a.tsx'), 'export const A = () => <input />;\n');
  fs.writeFileSync(path.join(root, 'core/web/src/lib/b.ts'), 'export const g = (e: Event) => e.currentTarget;\n');
  const clean = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  t.equal(clean.status, 0);
  t.equal(clean.stdout, '');
});

t.test('the web client casts no event target', async (t) => {
  t.same(checkEventTargetCasts(repo), []);
});
