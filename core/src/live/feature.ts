import type { Feature } from '../features.ts';
import { LiveBus } from './bus.ts';
import type { PgLiveRelay } from './pg-relay.ts';
import { LiveStreams, liveRoutes } from './routes.ts';

const state = new WeakMap<object, { streams: LiveStreams; relay?: PgLiveRelay }>();

/**
 * The `live` feature: the bus the pipeline publishes hints on (the `live` service, registered before the relay looks
 * for it), `GET /api/live`, and on PostgreSQL the relay of hints between replicas.
 */
export default {
  name: 'live',
  async register(app, core) {
    const bus = new LiveBus(() => core.clock.now().getTime());
    const streams = new LiveStreams(core, bus);
    core.services.set('live', bus);
    await liveRoutes(app, core, bus, streams);
    let relay: PgLiveRelay | undefined;
    if (core.config.dialect === 'postgresql' && core.config.databaseUrl) {
      const { PgLiveRelay } = await import('./pg-relay.ts');
      relay = new PgLiveRelay(core.config.databaseUrl, bus, core.replicaId, core.logs.get('live'));
    }
    state.set(core, { streams, relay });
  },
  async start(core) {
    await state.get(core)?.relay?.start();
  },
  // At once when shutdown begins: an open stream would hold the server open for the whole grace period.
  async drain(core) {
    state.get(core)?.streams.closeAll();
  },
  async stop(core) {
    await state.get(core)?.relay?.stop();
  },
} satisfies Feature;
