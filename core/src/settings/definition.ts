/**
 * The assistant's operator settings, defined once: each with its schema as the API shows it and as
 * a change sets it (`GET, PATCH /api/v1/admin/settings`). Stored as text in the `settings` table
 * (settings.ts, whose SETTING_DEFAULTS gives their values until set); `assistantSettingsOf` reads
 * them back. A new setting is one line here and one in SETTING_DEFAULTS.
 */
import Type, { type Static } from 'typebox';
import { optional } from '../http/optional.ts';
import type { SettingKey } from './settings.ts';

const Count = Type.Integer({ minimum: 0, maximum: 1_000_000_000 });
export const ASSISTANT_SETTINGS = {
  /** Whether anyone may create an account (`POST /api/v1/auth/register`). */
  self_registration_enabled: Type.Boolean(),
  /** The chats a new user may keep. */
  default_max_chats: Type.Integer({ minimum: 0, maximum: 100_000 }),
  default_max_ai_messages_per_day: Count,
  default_max_ai_tokens_per_day: Count,
} satisfies Partial<Record<SettingKey, unknown>>;
type Key = keyof typeof ASSISTANT_SETTINGS;

/** The settings as the API shows them (no limits: a value stored before a limit was set is shown as it is). */
export const AssistantSettingsView = Type.Object({
  self_registration_enabled: Type.Boolean(),
  default_max_chats: Type.Integer(),
  default_max_ai_messages_per_day: Type.Integer(),
  default_max_ai_tokens_per_day: Type.Integer(),
} satisfies Record<Key, unknown>);
export type AssistantSettings = Static<typeof AssistantSettingsView>;

/** The change body: any of the settings; what is left out keeps its value. */
export const AssistantSettingsPatch = Type.Object(optional(ASSISTANT_SETTINGS), { additionalProperties: false });

/** The settings from their stored text (`Settings.all()`). */
export function assistantSettingsOf(s: Record<SettingKey, string>): AssistantSettings {
  return {
    self_registration_enabled: s.self_registration_enabled === 'true',
    default_max_chats: Number.parseInt(s.default_max_chats, 10),
    default_max_ai_messages_per_day: Number.parseInt(s.default_max_ai_messages_per_day, 10),
    default_max_ai_tokens_per_day: Number.parseInt(s.default_max_ai_tokens_per_day, 10),
  };
}

/** A change as stored: each value given, as text. */
export function storedSettings(patch: Partial<AssistantSettings>): Partial<Record<Key, string>> {
  const out: Partial<Record<Key, string>> = {};
  for (const k of Object.keys(ASSISTANT_SETTINGS) as Key[]) if (patch[k] !== undefined) out[k] = String(patch[k]);
  return out;
}
