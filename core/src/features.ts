import type { Core } from './core.ts';
import type { App } from './http/server.ts';

/**
 * A feature: routes plus optional start/drain/stop. The core registers features in this order,
 * starts them in this order after the server is listening, and stops them in reverse.
 */
export interface Feature {
  name: string;
  register(app: App, core: Core): Promise<void>;
  start?(core: Core): Promise<void>;
  /**
   * Called when shutdown begins, while the server finishes its requests in flight: take no new
   * work, let work in flight finish until `grace` aborts (the end of the grace period), then cut
   * it off so that it can be resumed after a restart. Resolves once that is done.
   */
  drain?(core: Core, grace: AbortSignal): Promise<void>;
  /** Called after the server closed and every feature drained; should take little time. */
  stop?(core: Core): Promise<void>;
}

export async function loadFeatures(): Promise<Feature[]> {
  const list: Feature[] = [];
  const mods = await Promise.all([
    import('./auth/feature.ts'),
    // Before the relay, which publishes on its bus.
    import('./live/feature.ts'),
    import('./relay/feature.ts'),
    import('./backup/feature.ts'),
    import('./assistant/feature.ts'),
    import('./web/feature.ts'),
  ]);
  for (const m of mods) list.push(m.default);
  return list;
}
