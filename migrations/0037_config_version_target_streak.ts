import type { Migration } from './types.ts';

/**
 * Columns of `targets` a send writes as it goes: the failure streak and the last error. They decide nothing about
 * where an event goes, so they leave `config_version` alone.
 */
export const TARGET_BOOKKEEPING = ['consecutive_failures', 'last_error'];
/** Every other column of `targets`: a change to one is a new routing configuration. */
export const TARGET_ROUTING = [
  'id',
  'user_id',
  'kind',
  'name',
  'config',
  'locale',
  'enabled',
  'created_at',
  'updated_at',
  'outbound_allow',
  'update_messages',
];

/**
 * Migration 0036 moved `config_version` on every update of a target row, the failure streak's included: every failed
 * send (and the first success after failures) emptied the webhook path's cached routing for the whole service, and on
 * PostgreSQL every such send also waited for the one version row in its own transaction. The trigger on updates of
 * `targets` now fires only for the columns that route (a later migration adding a column to `targets` names it here
 * or in the bookkeeping list; test/relay/config-cache.test.ts checks every column is in one of the two).
 */
export default {
  id: '0037_config_version_target_streak',
  up: (d) => {
    const when = `AFTER UPDATE OF ${TARGET_ROUTING.join(', ')} ON targets`;
    if (d.name === 'sqlite')
      return [
        'DROP TRIGGER IF EXISTS config_version_targets_update',
        `CREATE TRIGGER IF NOT EXISTS config_version_targets_update ${when} ` +
          'BEGIN UPDATE config_version SET v = v + 1 WHERE id = 1; END',
      ];
    return [
      `CREATE OR REPLACE TRIGGER config_version_targets_update ${when} FOR EACH ROW EXECUTE FUNCTION ` +
        'herald_config_bump()',
    ];
  },
} satisfies Migration;
