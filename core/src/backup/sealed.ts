/**
 * Secrets inside a backup. An `include` backup carries them sealed (`enc:v1:`), as the database
 * stores them, so the file alone does not give them away: a service with the same
 * SERVICE_SECRET_KEY (or holding it as SERVICE_SECRET_KEY_PREVIOUS) reads it. A restore takes
 * sealed and clear values alike (older backups, hand-made ones), opens them for validation and
 * planning, and the planner seals them again with this service's key as it writes.
 */
import type { Core } from '../core.ts';
import { HttpError } from '../http/problem.ts';
import type { SecretsAtRest } from '../secrets/at-rest.ts';
import { isSealed } from '../secrets/at-rest.ts';
import type { ConfigurationT } from './schema.ts';
import { deleteAt, getAt, setAt, setSecretPointers } from './secret-paths.ts';

/**
 * For an `include` backup: each secret of `record` (JSON pointers `pointers`) sealed with the
 * current key, as stored when it already is. One that no key opens cannot travel: it is left out
 * and listed in `secrets_omitted`, as an `exclude` backup would.
 */
export function sealForBackup(atRest: SecretsAtRest, record: { secrets_omitted?: string[] }, pointers: string[]): void {
  const omitted = record.secrets_omitted ?? [];
  for (const p of pointers) {
    const v = getAt(record, p);
    if (typeof v !== 'string') continue;
    const state = atRest.state(v);
    if (state === 'unreadable') {
      deleteAt(record, p);
      omitted.push(p);
    } else if (state !== 'current') setAt(record, p, atRest.reseal(v));
  }
  if (omitted.length) record.secrets_omitted = omitted;
}

/** The secret pointers of a config record under `/config`, for the patterns its plugin declares. */
export const configSecrets = (record: { config: Record<string, unknown> }, patterns: string[] | undefined): string[] =>
  patterns ? setSecretPointers(record.config, patterns, '/config') : [];

/**
 * A copy of a backup's configuration with its sealed secrets opened (clear ones stay as they are).
 * Records of kinds this service does not have are left alone: the restore skips them. Refuses the
 * backup (422) when a value does not open with this service's keys.
 */
export function openBackupSecrets(core: Core, input: ConfigurationT): ConfigurationT {
  const c = structuredClone(input);
  const { atRest, plugins } = core;
  const unreadable: string[] = [];
  const open = (record: object, pointers: string[], at: string) => {
    for (const p of pointers) {
      const v = getAt(record, p);
      if (!isSealed(v)) continue;
      if (atRest.state(v) === 'unreadable') unreadable.push(`${at}${p}`);
      else setAt(record, p, atRest.open(v));
    }
  };
  const kindOf = new Map(c.providers.map((p) => [p.id, p.kind]));
  c.providers.forEach((p, i) => open(p, configSecrets(p, plugins.provider(p.kind)?.secretPaths), `/providers/${i}`));
  c.trackers.forEach((t, i) =>
    open(t, configSecrets(t, plugins.provider(kindOf.get(t.provider_id) ?? '')?.trackerSecretPaths), `/trackers/${i}`),
  );
  c.targets.forEach((t, i) => open(t, configSecrets(t, plugins.target(t.kind)?.secretPaths), `/targets/${i}`));
  c.bots.forEach((b, i) => open(b, b.token ? ['/token'] : [], `/bots/${i}`));
  if (unreadable.length) {
    throw new HttpError(
      422,
      'backup_secrets_unreadable',
      `The backup's secrets were sealed with another SERVICE_SECRET_KEY (${unreadable.length} value(s), ` +
        `e.g. /configuration${unreadable[0]}); restore it on a service with that key, or start this one with ` +
        'that key as SERVICE_SECRET_KEY_PREVIOUS, or restore an exclude backup and enter the secrets again.',
      {
        errors: unreadable
          .slice(0, 50)
          .map((p) => ({ path: `/configuration${p}`, message: 'is sealed with another key' })),
      },
    );
  }
  return c;
}
