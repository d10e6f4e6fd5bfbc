/** The enabled plugin kinds (`GET /api/plugins`), fetched once per page load. */
import { get } from './api.ts';
import { useAsync, type Async } from './hooks.ts';
import type { Plugin } from './types.ts';

let cache: Promise<Plugin[]> | null = null;

export function loadPlugins(): Promise<Plugin[]> {
  cache ??= get<{ plugins: Plugin[] }>('/api/plugins').then((r) => r.plugins).catch((err) => { cache = null; throw err; });
  return cache;
}

export const usePlugins = (): Async<Plugin[]> => useAsync(loadPlugins, []);

/** A plugin's display name, or its id when the plugin is not enabled any more. */
export const pluginName = (plugins: Plugin[] | undefined, id: string): string => plugins?.find((p) => p.id === id)?.display_name ?? id;

/** True for the generic webhook kind: its config carries auth_mode. */
export const hasAuthMode = (p: Plugin | undefined): boolean => Boolean(p?.config_schema.properties?.auth_mode);
