/**
 * Every dependency of a workspace package on another workspace package is satisfied by that
 * package's own version: otherwise `npm ci` on a fresh clone looks for it in the registry and fails
 * (as it did when the plugin contract moved to 1.1.0 while core still pinned 1.0.0).
 */
import fs from 'node:fs';
import path from 'node:path';
import t from 'tap';

const ROOT = new URL('../..', import.meta.url).pathname;
type Pkg = {
  name: string;
  version?: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
};

function workspaces(): { dir: string; pkg: Pkg }[] {
  const root = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { workspaces: string[] };
  const out: { dir: string; pkg: Pkg }[] = [];
  for (const pattern of root.workspaces) {
    const dirs = pattern.endsWith('/*')
      ? fs.readdirSync(path.join(ROOT, pattern.slice(0, -2))).map((d) => path.join(pattern.slice(0, -2), d))
      : [pattern];
    for (const dir of dirs) {
      const file = path.join(ROOT, dir, 'package.json');
      if (fs.existsSync(file)) out.push({ dir, pkg: JSON.parse(fs.readFileSync(file, 'utf8')) });
    }
  }
  return out;
}

const parse = (v: string) => v.split('.').map(Number) as [number, number, number];

/** The ranges used in this repository: exact, `^x.y.z`, `~x.y.z`, `*`. */
export function satisfies(version: string, range: string): boolean {
  if (range === '*' || range === '') return true;
  const [M, m, p] = parse(version);
  const op = /^[\^~]/.test(range) ? range[0] : '';
  const [rM, rm, rp] = parse(range.slice(op.length));
  const atLeast = M > rM || (M === rM && (m > rm || (m === rm && p >= rp)));
  if (op === '') return M === rM && m === rm && p === rp;
  if (op === '~') return atLeast && M === rM && m === rm;
  return atLeast && (rM > 0 ? M === rM : m === rm);
}

t.test('the range check', async (t) => {
  t.ok(satisfies('1.1.0', '^1.0.0'));
  t.notOk(satisfies('1.1.0', '1.0.0'));
  t.notOk(satisfies('1.0.0', '^1.1.0'));
  t.notOk(satisfies('2.0.0', '^1.1.0'));
  t.ok(satisfies('1.1.3', '~1.1.0'));
  t.notOk(satisfies('1.2.0', '~1.1.0'));
});

t.test('workspace packages depend on versions the workspace has', async (t) => {
  const all = workspaces();
  const versions = new Map(all.map(({ pkg }) => [pkg.name, pkg.version ?? '0.0.0']));
  t.ok(versions.has('@herald/plugin-api') && versions.has('@herald/core'), 'the workspaces were read');
  const wrong: string[] = [];
  for (const { dir, pkg } of all) {
    for (const field of ['dependencies', 'devDependencies', 'peerDependencies'] as const) {
      for (const [name, range] of Object.entries(pkg[field] ?? {})) {
        const have = versions.get(name);
        if (have && !range.startsWith('file:') && !range.startsWith('workspace:') && !satisfies(have, range))
          wrong.push(`${dir} ${field} ${name}@${range} (workspace has ${have})`);
      }
    }
  }
  t.same(wrong, []);
});

t.test('one copy of SQLite in the process: the lockfile installs better-sqlite3 once', async (t) => {
  // Two copies of SQLite in one process each believe they alone use the file: one closing its
  // descriptor drops the other's POSIX locks, one truncating the shared-memory index the other has
  // mapped kills the process with SIGBUS. The service's connection, the snapshot, its check, the
  // checkpointer and the dispatch thread all open the file, so they must load the very same module.
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, unknown>;
  };
  const copies = Object.keys(lock.packages).filter(
    (p) => p === 'node_modules/better-sqlite3' || p.endsWith('/node_modules/better-sqlite3'),
  );
  t.same(copies, ['node_modules/better-sqlite3'], 'one hoisted copy');
  const { createRequire } = await import('node:module');
  const fromCore = createRequire(path.join(ROOT, 'core/src/db/open.ts')).resolve('better-sqlite3');
  t.equal(
    fs.realpathSync(fromCore),
    fs.realpathSync(path.join(ROOT, 'node_modules/better-sqlite3/lib/index.js')),
    'the core loads the hoisted copy',
  );
});
