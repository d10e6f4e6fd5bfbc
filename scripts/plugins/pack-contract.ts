/**
 * `npm run plugin-api:pack [-- <directory>]`: builds the plugin contract (`@herald/plugin-api`) and
 * packs it as the registry would have it, `herald-plugin-api-<version>.tgz`, into the directory
 * given (default: where npm was run from). A plugin written outside this repository installs the
 * contract from that tarball (the template's devDependencies point at `vendor/`).
 *
 * The tarball holds the JavaScript, its declarations, the README and a package.json without what
 * only the repository uses (the `herald-source` export condition pointing at TypeScript sources,
 * the build scripts): nothing of the machine or the checkout it was made on.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const pkgDir = fileURLToPath(new URL('../../packages/plugin-api/', import.meta.url));
const dest = path.resolve(process.env.INIT_CWD ?? process.cwd(), process.argv[2] ?? '.');

/** The package.json as published: export conditions only the repository uses, and the scripts, left out. */
export function publishedManifest(pkg: Record<string, any>): Record<string, unknown> {
  const strip = (v: unknown): unknown => {
    if (!v || typeof v !== 'object' || Array.isArray(v)) return v;
    return Object.fromEntries(
      Object.entries(v as Record<string, unknown>)
        .filter(([k]) => k !== 'herald-source')
        .map(([k, x]) => [k, strip(x)]),
    );
  };
  const { scripts: _scripts, devDependencies: _dev, exports, ...rest } = pkg;
  return { ...rest, exports: strip(exports) };
}

function run(cmd: string, args: string[], cwd: string): string {
  const r = spawnSync(cmd, args, {
    cwd,
    encoding: 'utf8',
    env: Object.fromEntries(
      Object.entries(process.env).filter(
        ([k]) => !/^npm_(package_|lifecycle_|config_local_prefix$|config_prefix$)/i.test(k),
      ),
    ),
  });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}):\n${r.stdout ?? ''}${r.stderr ?? ''}`);
  return r.stdout;
}

if (import.meta.main) {
  run(process.execPath, ['build.mjs'], pkgDir);
  const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8')) as Record<string, any>;
  if (!fs.existsSync(path.join(pkgDir, 'dist', 'index.d.ts')))
    throw new Error(
      "The contract was built without declarations (TypeScript's native compiler is missing): reinstall with " +
        'optional dependencies before packing.',
    );
  const stage = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-plugin-api-'));
  try {
    fs.cpSync(path.join(pkgDir, 'dist'), path.join(stage, 'dist'), { recursive: true });
    for (const f of ['README.md', 'LICENSE'])
      if (fs.existsSync(path.join(pkgDir, f))) fs.copyFileSync(path.join(pkgDir, f), path.join(stage, f));
    fs.writeFileSync(path.join(stage, 'package.json'), `${JSON.stringify(publishedManifest(pkg), null, 2)}\n`);
    fs.mkdirSync(dest, { recursive: true });
    const out = run('npm', ['pack', '--json', '--pack-destination', dest], stage);
    const [info] = JSON.parse(out.slice(out.indexOf('['))) as { filename: string; files: { path: string }[] }[];
    console.log(path.join(dest, path.basename(info!.filename)));
  } finally {
    fs.rmSync(stage, { recursive: true, force: true });
  }
}
