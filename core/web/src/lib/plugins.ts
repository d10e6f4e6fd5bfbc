/**
 * The enabled plugin kinds (`GET /api/plugins`), in the interface language: fetched once per
 * page load and language, and again when the language changes.
 */
import { get } from './api.ts';
import { type Async, useAsync } from './hooks.ts';
import { type Locale, locale } from './i18n.ts';
import type { Plugin } from './types.ts';

const cache = new Map<Locale, Promise<Plugin[]>>();
let latest: Plugin[] | undefined;

/** The plugin list last loaded in the interface language, if any (for naming kinds where waiting is not possible). */
export const pluginsNow = (): Plugin[] | undefined => latest;

export function loadPlugins(l: Locale = locale()): Promise<Plugin[]> {
  let p = cache.get(l);
  if (!p) {
    p = get<{ plugins: Plugin[] }>('/api/plugins', { locale: l })
      .then((r) => {
        if (l === locale()) latest = r.plugins;
        return r.plugins;
      })
      .catch((err) => {
        cache.delete(l);
        throw err;
      });
    cache.set(l, p);
  }
  return p;
}

export const usePlugins = (): Async<Plugin[]> => {
  const l = locale();
  return useAsync(() => loadPlugins(l), [l]);
};

/** A plugin's display name, or its id when the plugin is not enabled any more. */
export const pluginName = (plugins: Plugin[] | undefined, id: string, kind?: Plugin['kind']): string =>
  plugins?.find((p) => p.id === id && (!kind || p.kind === kind))?.display_name ?? id;

/** True for the generic webhook kind: its config carries auth_mode. */
export const hasAuthMode = (p: Plugin | undefined): boolean => Boolean(p?.config_schema.properties?.auth_mode);
