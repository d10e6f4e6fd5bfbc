/**
 * Loaded with --import into every test process Stryker starts in its sandbox (a copy of the
 * repository whose node_modules is a link to the original's). The workspace packages in there
 * (@herald/plugin-api, the plugins) are links too, so an import of one would reach the original
 * tree and never see the mutated copy: this sends every resolved file of the original tree outside
 * node_modules to the same file in the sandbox. Outside a sandbox it does nothing.
 */
import fs from 'node:fs';
import { registerHooks } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const here = process.cwd();
let origin = here;
try { origin = path.dirname(fs.realpathSync(path.join(here, 'node_modules'))); } catch { /* no node_modules: nothing to redirect */ }
if (origin !== here) {
  const from = `${pathToFileURL(origin).href}/`;
  const to = `${pathToFileURL(here).href}/`;
  registerHooks({
    resolve(specifier, context, next) {
      const r = next(specifier, context);
      // (The sandbox itself may lie inside the original tree.)
      if (!r.url.startsWith(from) || r.url.startsWith(to)) return r;
      const rest = r.url.slice(from.length);
      return rest.startsWith('node_modules/') ? r : { ...r, url: to + rest };
    },
  });
}
