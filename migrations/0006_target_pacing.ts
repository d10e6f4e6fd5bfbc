import type { Migration } from './types.ts';

/**
 * Enforced target limits: `target_pacing` keeps each paced target's theoretical arrival time
 * (epoch ms; the pace survives restarts and holds across replicas), and `deliveries.parts_sent`
 * counts the parts of a split message the channel already accepted, so a retry resumes after them.
 */
export default {
  id: '0006_target_pacing',
  up: (d) => [
    'CREATE TABLE IF NOT EXISTS target_pacing (target_id TEXT PRIMARY KEY REFERENCES targets(id) ON DELETE ' +
      `CASCADE, tat ${d.bigint} NOT NULL)`,
    `ALTER TABLE deliveries ADD COLUMN ${d.name === 'postgresql' ? 'IF NOT EXISTS ' : ''}parts_sent INTEGER NOT ` +
      'NULL DEFAULT 0',
  ],
} satisfies Migration;
