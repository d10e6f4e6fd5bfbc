import type { Feature } from '../features.ts';
import { backupRoutes } from './routes.ts';
import { restoreRoutes } from './routes-restore.ts';
import { registerScheduledBackups } from './scheduled.ts';

/**
 * Configuration backup and restore: backup files, export, the backup schedule, and the staged
 * restore (applied at the next boot by `applyStagedRestore`, which app.ts calls after migrations).
 */
export default {
  name: 'backup',
  async register(app, core) {
    await backupRoutes(app, core);
    await restoreRoutes(app, core);
    registerScheduledBackups(core);
  },
} satisfies Feature;
