/**
 * The launcher of the built service (core/dist/main.js, what `npm start` runs): switches on Node's compile
 * cache as core/src/main.ts does, checks that the build is not older than its sources (rebuilding it when it
 * is, or refusing to start with what to run), installs the resolve hook that gives plugins the service's own
 * typebox and plugin contract (hook.ts), then imports the service.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';
import { installSharedResolve } from './hook.ts';

try {
  module.enableCompileCache?.();
} catch {
  /* an unwritable cache directory only costs time */
}

const here = new URL('./', import.meta.url);

interface BuildInfo {
  /** Wall time (ms) the build started: a source modified later is newer than the build. */
  builtAt: number;
  /** The repository's root, relative to the build's directory. */
  root: string;
  /** The repository's source files the build read, relative to the root. */
  inputs: string[];
}

let info: BuildInfo | undefined;
try {
  info = JSON.parse(fs.readFileSync(new URL('build.json', here), 'utf8')) as BuildInfo;
} catch {
  /* not built by scripts/build/server.ts: rebuilt below */
}
// The build sits in core/dist, two levels below the repository's root, unless build.json says otherwise.
const root = new URL(info?.root ?? '../../', here);

/** The first input newer than the build (or gone), or undefined when the build is current. */
function staleInput(): string | undefined {
  if (info === undefined) return `${fileURLToPath(here)}build.json`;
  for (const rel of info.inputs) {
    const mtime = fs.statSync(new URL(rel, root), { throwIfNoEntry: false })?.mtimeMs;
    if (mtime === undefined || mtime > info.builtAt) return rel;
  }
  return undefined;
}

const stale = staleInput();
if (stale !== undefined) {
  // A developer's edit or an update without `npm ci`: rebuild (a few seconds) rather than run old code. The build's
  // own output goes to stderr, the service's stdout stays its log.
  process.stderr.write(`herald: ${stale} is newer than the built service; rebuilding it (npm run build:server)\n`);
  const script = fileURLToPath(new URL('scripts/build/server.ts', root));
  const r = spawnSync(process.execPath, [script, '--out', fileURLToPath(here)], { stdio: ['ignore', 2, 2] });
  if (r.status !== 0) {
    process.stderr.write(
      'herald: refusing to start: the built service (core/dist) is older than its sources and could not be ' +
        'rebuilt here; run `npm run build:server` (it needs the dev dependencies), or start from source with ' +
        '`npm run start:source`\n',
    );
    process.exit(1);
  }
}

installSharedResolve(here.href);
await import(new URL('service.js', here).href);
