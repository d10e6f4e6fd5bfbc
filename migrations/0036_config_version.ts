import type { Migration } from './types.ts';

/** The tables whose rows decide where an inbound event goes: a change to any of them is a new configuration. */
const WATCHED = ['providers', 'targets', 'tracker_targets', 'templates'];
/** Trackers change on every poll (its time, its failure count): only the columns of their rules count. */
export const TRACKER_RULES =
  'provider_id, user_id, name, enabled, event_types, quiet_hours, quiet_policies, config, ' +
  'quiet_release, updated_at';

/**
 * `config_version`: one row whose `v` goes up, by trigger, in the same transaction as every insert, update and delete
 * of the routing configuration (providers, trackers' rules, targets, their links, template overrides), whoever writes
 * it: the API, the command line, a restore, another replica. The webhook path keeps the provider rows and routing
 * links it read in memory and reads only this row to know they still hold (core/src/relay/config-cache.ts): two
 * statements an event fewer, and two round trips fewer on PostgreSQL. Row triggers: a statement that changes no row
 * (a target's failure streak reset when it had none) changes nothing. A later migration that rebuilds one of these
 * tables must create its trigger again (test/relay/config-cache.test.ts checks they are all there).
 */
export default {
  id: '0036_config_version',
  up: (d) => {
    const bump = 'UPDATE config_version SET v = v + 1 WHERE id = 1';
    const base = [
      `CREATE TABLE IF NOT EXISTS config_version (id INTEGER PRIMARY KEY, v ${d.bigint} NOT NULL)`,
      'INSERT INTO config_version (id, v) VALUES (1, 0) ON CONFLICT (id) DO NOTHING',
    ];
    const on: [string, string, string][] = [];
    for (const table of WATCHED) for (const op of ['INSERT', 'UPDATE', 'DELETE']) on.push([table, op, op]);
    for (const op of ['INSERT', 'DELETE']) on.push(['trackers', op, op]);
    on.push(['trackers', 'UPDATE', `UPDATE OF ${TRACKER_RULES}`]);
    if (d.name === 'sqlite')
      return [
        ...base,
        ...on.map(
          ([table, op, when]) =>
            `CREATE TRIGGER IF NOT EXISTS config_version_${table}_${op.toLowerCase()} AFTER ${when} ON ${table} ` +
            `BEGIN ${bump}; END`,
        ),
      ];
    return [
      ...base,
      `CREATE OR REPLACE FUNCTION herald_config_bump() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ${bump}; ` +
        'RETURN NULL; END $$',
      ...on.map(
        ([table, op, when]) =>
          `CREATE OR REPLACE TRIGGER config_version_${table}_${op.toLowerCase()} AFTER ${when} ON ${table} ` +
          'FOR EACH ROW EXECUTE FUNCTION herald_config_bump()',
      ),
    ];
  },
} satisfies Migration;
