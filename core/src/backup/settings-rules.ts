/**
 * The rules for operator setting values (all strings), shared by `PUT /api/backup/scheduled` and
 * by restore, so a backup can never store a value the API would refuse.
 */
import type { SettingKey } from '../settings/settings.ts';

/** The four backup settings, in the order the API shows them. */
export const BACKUP_SETTING_KEYS = [
  'backup_scheduled_enabled',
  'backup_scheduled_interval_hours',
  'backup_secrets_mode',
  'backup_retention_count',
] as const;
export type BackupSettingKey = (typeof BACKUP_SETTING_KEYS)[number];

const intIn =
  (min: number, max: number) =>
  (v: string): string | undefined =>
    /^(0|[1-9][0-9]{0,9})$/.test(v) && Number(v) >= min && Number(v) <= max
      ? undefined
      : `must be a whole number from ${min} to ${max}, written as a string`;
const oneOf =
  (...allowed: string[]) =>
  (v: string): string | undefined =>
    allowed.includes(v) ? undefined : `must be ${allowed.map((a) => `"${a}"`).join(' or ')}`;

const RULES: Record<SettingKey, (v: string) => string | undefined> = {
  self_registration_enabled: oneOf('true', 'false'),
  default_max_chats: intIn(0, 100_000),
  default_max_ai_messages_per_day: intIn(0, 1_000_000_000),
  default_max_ai_tokens_per_day: intIn(0, 1_000_000_000),
  backup_scheduled_enabled: oneOf('true', 'false'),
  backup_scheduled_interval_hours: intIn(1, 8760),
  backup_secrets_mode: oneOf('exclude', 'include'),
  backup_retention_count: intIn(1, 1000),
};

/** Why `value` is not acceptable for `key` (undefined when it is). Unknown keys are refused. */
export function settingProblem(key: string, value: unknown): string | undefined {
  const rule = (RULES as Record<string, (v: string) => string | undefined>)[key];
  if (!rule) return 'is not a known setting';
  if (typeof value !== 'string') return 'must be a string';
  return rule(value);
}
