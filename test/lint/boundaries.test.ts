import t from 'tap';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { checkBoundaries, packageOf } from '../../scripts/lint/boundaries.ts';

const script = path.resolve(import.meta.dirname, '../../scripts/lint/boundaries.ts');

/** A synthetic repository: root manifest, the core, the contract, one plugin and one fixture plugin. */
function tree(files: Record<string, string>): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-boundaries-'));
  const base: Record<string, string> = {
    'package.json': JSON.stringify({ name: 'herald', devDependencies: { tap: '*' } }),
    'core/package.json': JSON.stringify({ name: '@herald/core' }),
    'core/src/app.ts': "import { x } from './plugins/host.ts';\nimport Fastify from 'fastify';\n",
    'core/src/plugins/host.ts': 'export const x = 1;\n',
    'packages/plugin-api/package.json': JSON.stringify({ name: '@herald/plugin-api' }),
    'packages/plugin-api/src/index.ts': "export * from './errors.ts';\nimport { Type } from 'typebox';\n",
    'packages/plugin-api/src/errors.ts': 'export class E extends Error {}\n',
    'plugins/provider-a/package.json': JSON.stringify({ name: '@herald/provider-a', dependencies: { ws: '*' }, peerDependencies: { '@herald/plugin-api': '^1' } }),
    'plugins/provider-a/src/index.ts': [
      "import { defineProvider } from '@herald/plugin-api';",
      "import type { Secret } from '@herald/core/plugin-api';",
      "import { WebSocket } from 'ws';",
      "import fs from 'node:fs';",
      "import path from 'path';",
      "import { helper } from './helper.ts';",
      "export const x = 1;",
    ].join('\n'),
    'plugins/provider-a/src/helper.ts': 'export const helper = 1;\n',
    'plugins/provider-a/src/a.test.ts': "import t from 'tap';\nimport { host } from '@herald/plugin-api/testing';\nimport { fake } from '../test/fakes/fake.ts';\n",
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
  const run = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  t.equal(run.status, 0, run.stderr);
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
    'test/fixtures/plugins/herald-target-b/src/index.ts': "import { dispatcher } from '../../../../../core/src/relay/pipeline/dispatcher.ts';\n",
  });
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  t.same(found(root).sort(), [
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
  ].sort());
  const run = spawnSync(process.execPath, [script, root], { encoding: 'utf8' });
  t.equal(run.status, 1);
  t.match(run.stderr, /plugins\/provider-a\/src\/bad\.ts:2: import '\.\.\/\.\.\/\.\.\/core\/src\/plugins\/host\.ts': a plugin imports only its own files/);
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
    'core/src/relay/bots.ts': "import { bot } from '@herald/target-telegram';\nimport { x } from '../../../plugins/provider-a/src/index.ts';\nimport { y } from 'herald-target-b';\n",
    'packages/plugin-api/src/testing.ts': "import { Db } from '@herald/core/src/db/database.ts';\nimport { z } from '../../../core/src/app.ts';\n",
  });
  t.teardown(() => fs.rmSync(root, { recursive: true, force: true }));
  t.same(found(root).sort(), [
    'core/src/relay/bots.ts:1 @herald/target-telegram',
    'core/src/relay/bots.ts:2 ../../../plugins/provider-a/src/index.ts',
    'core/src/relay/bots.ts:3 herald-target-b',
    'packages/plugin-api/src/testing.ts:1 @herald/core/src/db/database.ts',
    'packages/plugin-api/src/testing.ts:2 ../../../core/src/app.ts',
  ].sort());
});

t.test('package names from specifiers', async (t) => {
  t.equal(packageOf('@herald/core/plugin-api'), '@herald/core');
  t.equal(packageOf('ws'), 'ws');
  t.equal(packageOf('typebox/value'), 'typebox');
});
