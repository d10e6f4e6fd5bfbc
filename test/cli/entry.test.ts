/**
 * The two ways in: `npm run herald -- <command>` and, in the image, the `herald` wrapper on PATH
 * (`docker exec herald herald <command>`). Both run core/src/cli/main.ts with the service's Node
 * flags; the wrapper is built here from the Dockerfile's own lines and run against this checkout.
 */

import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { SERVICE_NODE_FLAGS } from '../../scripts/node-flags.ts';
import { ROOT } from './support.ts';

t.test("npm run herald runs the command line with the service's Node flags", async (t) => {
  const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };
  t.equal(pkg.scripts.herald, ['node', ...SERVICE_NODE_FLAGS, 'core/src/cli/main.ts'].join(' '));
  const r = spawnSync('npm', ['run', '--silent', 'herald', '--', '--help'], {
    cwd: ROOT,
    encoding: 'utf8',
    env: { ...process.env, LANG: 'C.UTF-8', LC_ALL: '' },
  });
  t.equal(r.status, 0, r.stderr);
  t.match(r.stdout, /^Usage: herald \[options\] \[command\]\n/);
});

t.test('the image puts a herald wrapper on PATH that passes its arguments through', async (t) => {
  const dockerfile = fs.readFileSync(path.join(ROOT, 'Dockerfile'), 'utf8');
  // The RUN step's `printf … > /usr/local/bin/herald`, as sh runs it, writing here instead.
  const step = new RegExp(
    /(printf '%s\\n' '#!\/bin\/sh' \\\n(?:.*\\\n)*?.*) > \/usr\/local\/bin\/herald \\\n\s*&& chmod 755 /.source +
      /\/usr\/local\/bin\/herald/.source,
  ).exec(dockerfile);
  t.ok(step, 'the Dockerfile writes /usr/local/bin/herald and makes it executable');
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-wrapper-'));
  t.teardown(() => fs.rmSync(dir, { recursive: true, force: true }));
  const wrapper = path.join(dir, 'herald');
  execFileSync('sh', ['-c', `${step![1]!.replace(/\\\n/g, ' ')} > "$1"`, 'sh', wrapper]);
  const text = fs.readFileSync(wrapper, 'utf8');
  t.match(text, /^#!\/bin\/sh\n/);
  t.match(
    text,
    new RegExp(`\\nexec node ${SERVICE_NODE_FLAGS.join(' ')} /app/core/src/cli/main.ts "\\$@"\\n$`),
    "the service's flags, every argument passed on",
  );
  // Run it against this checkout: /app is the repository, `node` this test's Node.
  fs.writeFileSync(wrapper, text.replaceAll('/app/', `${ROOT}/`));
  fs.chmodSync(wrapper, 0o755);
  fs.symlinkSync(process.execPath, path.join(dir, 'node'));
  const r = spawnSync(wrapper, ['user', 'create', '--help'], {
    encoding: 'utf8',
    env: { PATH: `${dir}:/usr/bin:/bin`, LANG: 'C.UTF-8' },
  });
  t.equal(r.status, 0, r.stderr || String(r.error));
  t.match(r.stdout, /^Usage: herald user create \[options\] <email>\n/, 'the arguments arrive as they were given');
});
