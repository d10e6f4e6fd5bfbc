/**
 * The resolve hook of the built service (installed by its launcher and by its worker-thread entries before
 * anything else loads): a plugin's `import 'typebox'` (or a subpath, or the plugin contract) is answered with
 * the built service's own entry for it, so the plugin shares the service's copy instead of loading the
 * package's 683 modules a second time. Imports from within the build and every other specifier resolve as
 * Node would.
 */
import module from 'node:module';
import { SHARED_ENTRIES } from './shared.ts';

export function installSharedResolve(buildUrl: string): void {
  const base = buildUrl.endsWith('/') ? buildUrl : `${buildUrl}/`;
  const urls = new Map(Object.entries(SHARED_ENTRIES).map(([spec, file]) => [spec, new URL(file, base).href]));
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      const url = urls.get(specifier);
      if (url !== undefined && !context.parentURL?.startsWith(base))
        return { url, format: 'module', shortCircuit: true };
      return nextResolve(specifier, context);
    },
  });
}
