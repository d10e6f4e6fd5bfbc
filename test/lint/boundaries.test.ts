import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { checkBoundaries, checkDependencies, importsOf, packageOf } from '../../scripts/lint/boundaries.ts';

const script = path.resolve(import.meta.dirname, '../../scripts/lint/boundaries.ts');

/** A synthetic repository: root manifest, the core, the contract, one plugin and one fixture plugin. */
function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-boundaries-'));
  const base: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'herald', devDependencies: { tap: '*' } }),
    'core/package.json': JSON.stringify({ name: '@herald/core', dependencies: { fastify: '*' } }),
    'core/src/app.ts': "import { x } from './plugins/host.ts';\nimport Fastify from 'fastify';\n",
    'core/src/plugins/host.ts': 'export const x = 1;\n',
    'packages/plugin-api/package.json': JSON.stringify({ name: '@herald/plugin-api', dependencies: { typebox: '*' } }),
    'packages/plugin-api/src/index.ts': "export * from './errors.ts';\nimport { Type } from 'typebox';\n",
    'packages/plugin-api/src/errors.ts': 'export class E extends Error {}\n',
    'plugins/provider-a/package.json': JSON.stringify({
      name: '@herald/provider-a',
      dependencies: { ws: '*' },
      peerDependencies: { '@herald/plugin-api': '^1' },
    }),
    'plugins/provider-a/src/index.ts': [
      "import { defineProvider } from '@herald/plugin-api';",
      "import type { Secret } from '@herald/core/plugin-api';",
      "import { WebSocket } from 'ws';",
      "import fs from 'node:fs';",
      "import path from 'path';",
      "import { helper } from './helper.ts';",
      'export const x = 1;',
    ].join('\n'),
    'plugins/provider-a/src/helper.ts': 'export const helper = 1;\n',
    'plugins/provider-a/src/a.test.ts':
      "import t from 'tap';\nimport { host } from '@herald/plugin-api/testing';\nimport { fake } from " +
      "'../test/fakes/fake.ts';\n",
    'plugins/provider-a/test/fakes/fake.ts': "import t from 'tap';\nexport const fake = 1;\n",
    'test/fixtures/plugins/herald-target-b/package.json': JSON.stringify({ name: 'herald-target-b' }),
    'test/fixtures/plugins/herald-target-b/src/index.ts': "import { defineTarget } from '@herald/core/plugin-api';\n",
  };
  for (const [rel, text] of Object.entries({ ...base, ...files })) {
    fs.mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
    fs.writeFileSync(path.join(root, rel), text);
  }
  return root;
}

const found = (root: string) => checkBoundaries(root).map((v) => `${v.file}:${v.line} ${v.specifier}`);

t.test('a tree that keeps its boundaries passes', async (t) => {
  const root = tree({});
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  t.same(found(root), []);
  t.same(checkDependencies(root), []);
  const run = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  t.equal(run.status, 0, run.stderr);
  t.match(run.stdout, /dependencies: every declared dependency is imported/);
});

t.test('a plugin reaching into the core or out of its folder is caught', async (t) => {
  const root = tree({
    'plugins/provider-a/src/bad.ts': [
      "import { openDb } from '@herald/core/src/db/database.ts';",
      "import type { Row } from '../../../core/src/plugins/host.ts';",
      "export { fake } from '../../../test/fakes/shared.ts';",
      "const lazy = () => import('@herald/core');",
      "type T = import('../../provider-c/src/index.ts').C;",
      "import { get } from 'undici';",
      "import { other } from '@herald/target-z';",
      "import { deep } from '@herald/plugin-api/src/errors.ts';",
    ].join('\n'),
    'plugins/provider-a/src/index.test.ts': "import { startFakeSmtp } from '../../../test/fakes/smtp.ts';\n",
    'test/fixtures/plugins/herald-target-b/src/index.ts':
      "import { dispatcher } from '../../../../../core/src/relay/pipeline/dispatcher.ts';\n",
  });
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  t.same(
    found(root).sort(),
    [
      'plugins/provider-a/src/bad.ts:1 @herald/core/src/db/database.ts',
      'plugins/provider-a/src/bad.ts:2 ../../../core/src/plugins/host.ts',
      'plugins/provider-a/src/bad.ts:3 ../../../test/fakes/shared.ts',
      'plugins/provider-a/src/bad.ts:4 @herald/core',
      'plugins/provider-a/src/bad.ts:5 ../../provider-c/src/index.ts',
      'plugins/provider-a/src/bad.ts:6 undici',
      'plugins/provider-a/src/bad.ts:7 @herald/target-z',
      'plugins/provider-a/src/bad.ts:8 @herald/plugin-api/src/errors.ts',
      'plugins/provider-a/src/index.test.ts:1 ../../../test/fakes/smtp.ts',
      'test/fixtures/plugins/herald-target-b/src/index.ts:1 ../../../../../core/src/relay/pipeline/dispatcher.ts',
    ].sort(),
  );
  const run = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  t.equal(run.status, 1);
  t.match(
    run.stderr,
    new RegExp(
      /plugins\/provider-a\/src\/bad\.ts:2: import '\.\.\/\.\.\/\.\.\/core\/src\/plugins\/host\.ts': a /.source +
        /plugin imports only its own files/.source,
    ),
  );
  t.match(run.stderr, /"undici" is not declared in plugins\/provider-a\/package\.json/);
  t.match(run.stderr, /boundaries: 10 import\(s\) cross a package boundary/);
});

t.test('shared test tooling is for test code only', async (t) => {
  const root = tree({ 'plugins/provider-a/src/runtime.ts': "import t from 'tap';\n" });
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  t.same(found(root), ['plugins/provider-a/src/runtime.ts:1 tap']);
});

t.test('the core importing a plugin, and the contract importing the core, are caught', async (t) => {
  const root = tree({
    'core/src/relay/bots.ts':
      "import { bot } from '@herald/target-telegram';\nimport { x } from " +
      "'../../../plugins/provider-a/src/index.ts';\nimport { y } from 'herald-target-b';\n",
    'packages/plugin-api/src/testing.ts':
      "import { Db } from '@herald/core/src/db/database.ts';\nimport { z } from '../../../core/src/app.ts';\n",
  });
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  t.same(
    found(root).sort(),
    [
      'core/src/relay/bots.ts:1 @herald/target-telegram',
      'core/src/relay/bots.ts:2 ../../../plugins/provider-a/src/index.ts',
      'core/src/relay/bots.ts:3 herald-target-b',
      'packages/plugin-api/src/testing.ts:1 @herald/core/src/db/database.ts',
      'packages/plugin-api/src/testing.ts:2 ../../../core/src/app.ts',
    ].sort(),
  );
});

t.test('package names from specifiers', async (t) => {
  t.equal(packageOf('@herald/core/plugin-api'), '@herald/core');
  t.equal(packageOf('ws'), 'ws');
  t.equal(packageOf('typebox/value'), 'typebox');
});

t.test('imports are found in code only, not in comments, strings, regexes or JSX text', async (t) => {
  const specifiers = (file: string, code: string) => importsOf(file, code).map((i) => `${i.line} ${i.specifier}`);
  t.same(
    specifiers(
      'a.ts',
      [
        "// import a from 'no-comment'",
        "/* import('no-block') */",
        'const s = "import b from \'no-string\'";',
        "const r = /from 'no-regex'/g; const d = 4 / 2 / 1;",
        'import {',
        '  a,',
        "} from 'multi-line';",
        "const from = 'no-from'; const o = { from: 'no-property' }; obj.import('no-member'); import.meta.url;",
        "const q = `${await import('in-template')} import x from 'no-template' ${`${import('nested')}`}`;",
        "export * from 'star';",
        'export { x as y } from "re-export";',
        "import 'side-effect';",
        "import type { T } from 'types-only';",
        "type U = import('type-import').U;",
        "import fs = require('required');",
        'const p = import(`template-plain`);',
        "const j = import('with-options', { with: { type: 'json' } });",
        "const e = '\\'import y from \"no-escaped\"'; const c = /[/']/;",
        "import last from 'last';",
      ].join('\n'),
    ),
    [
      '5 multi-line',
      '9 in-template',
      '9 nested',
      '10 star',
      '11 re-export',
      '12 side-effect',
      '13 types-only',
      '14 type-import',
      '15 required',
      '16 template-plain',
      '17 with-options',
      '19 last',
    ],
  );
  t.same(
    specifiers(
      'c.tsx',
      [
        "import { h } from 'preact';",
        "export const A = () => <p title=\"it's\">Don't import x from 'no-jsx-text' {`it's`} " +
          "<b>{import('in-jsx')}</b></p>;",
        'const B = (a: number, b: number) => a < b ? <></> : <C x={a > b} />;',
        "import { z } from 'after-jsx';",
      ].join('\n'),
    ),
    ['1 preact', '2 in-jsx', '4 after-jsx'],
  );
});

const problems = (root: string) => checkDependencies(root).map((v) => `${v.file}:${v.line} ${v.specifier}`);

t.test('declared dependencies no file imports are caught, less those used another way', async (t) => {
  const root = tree({
    'package.json': JSON.stringify(
      {
        name: 'herald',
        devDependencies: {
          tap: '*',
          typescript: '*',
          'left-pad': '*',
          '@types/ws': '*',
          '@types/gone': '*',
          '@types/mikro-orm__core': '*',
        },
      },
      null,
      2,
    ),
    'core/package.json': JSON.stringify(
      {
        name: '@herald/core',
        dependencies: { fastify: '*', pino: '*', '@fastify/helmet': '*', '@mikro-orm/core': '*' },
        peerDependencies: { 'not-imported-peer': '*' },
      },
      null,
      2,
    ),
    'core/src/db.ts': "import { MikroORM } from '@mikro-orm/core';\n",
  });
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  // typescript: a binary; @fastify/helmet: loaded with createRequire; @types/ws and
  // @types/mikro-orm__core: their packages are imported; a peer dependency is the host's to provide.
  t.same(
    problems(root).sort(),
    ['core/package.json:5 pino', 'package.json:6 left-pad', 'package.json:8 @types/gone'].sort(),
  );
  const run = spawnSync(process.execPath, [script, '--deps', root], { encoding: 'utf8' });
  t.equal(run.status, 1);
  t.match(run.stderr, /package\.json:6: "left-pad" is declared in devDependencies but no file of herald imports it/);
  t.match(run.stderr, /dependencies: 3 unused or undeclared dependencies/);
  t.notMatch(run.stdout + run.stderr, /boundaries:/, '--deps runs the dependency check only');
});

t.test(
  "bare imports a package does not declare are caught; test code and the web client may use the root's",
  async (t) => {
    const root = tree({
      'package.json': JSON.stringify({ name: 'herald', devDependencies: { tap: '*', preact: '*', vite: '*' } }),
      'core/src/undeclared.ts': "import pino from 'pino';\nimport t from 'tap';\n",
      'core/src/app.test.ts': "import t from 'tap';\nimport Fastify from 'fastify';\n",
      'core/web/src/main.tsx': "import { render } from 'preact';\nimport { h } from 'preact/hooks';\n",
      'core/web/vite.config.ts': "import { defineConfig } from 'vite';\n",
      'packages/plugin-api/src/extra.ts': "import { Value } from 'typebox/value';\nimport ajv from 'ajv';\n",
      'scripts/bench/load.ts':
        "import { request } from 'undici';\nimport { Cron } from 'croner';\nconst s = \"import x from 'ghost'\";\n",
      'test/api.test.ts':
        "import t from 'tap';\nimport { definePlugin } from '@herald/core/plugin-api';\nimport fs from " +
        "'node:fs';\nimport * as own from '#own';\n",
      'examples/template/package.json': JSON.stringify({ name: 'herald-provider-example' }),
      'examples/template/src/index.ts': "import { whatever } from 'not-ours-to-check';\n",
      // A plugin's undeclared import is rule 1's to report, once.
      'plugins/provider-a/src/extra.ts': "import { get } from 'undici';\n",
    });
    t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
    t.same(
      problems(root).sort(),
      [
        'core/src/undeclared.ts:1 pino',
        'core/src/undeclared.ts:2 tap',
        'packages/plugin-api/src/extra.ts:2 ajv',
        'scripts/bench/load.ts:2 croner',
      ].sort(),
    );
    const run = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
    t.equal(run.status, 1);
    t.match(run.stderr, /core\/src\/undeclared\.ts:1: import 'pino': "pino" is not declared in core\/package\.json/);
    t.match(run.stderr, /scripts\/bench\/load\.ts:2: import 'croner': "croner" is not declared in package\.json/);
    t.match(run.stderr, /boundaries: 1 import\(s\) cross a package boundary/);
    t.match(run.stderr, /dependencies: 4 unused or undeclared dependencies/);
  },
);
