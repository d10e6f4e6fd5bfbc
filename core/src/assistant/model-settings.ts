/**
 * The administrator's model choice as stored: the settings rows `models_allowed` (a JSON array of
 * model ids) and `default_model` (empty or absent: AI_MODEL). The limits and the rule here are the
 * ones `PUT /api/v1/admin/models` applies, shared with the configuration backup so a backup can
 * never carry a choice the API would refuse.
 */
import Type from 'typebox';
import type { Queryable } from '../db/database.ts';

export const MODEL_SETTING_KEYS = { allowed: 'models_allowed', default: 'default_model' } as const;

/** One model id, as the administrator may list it. */
export const ModelId = Type.String({ minLength: 1, maxLength: 200 });
/** The models users may pick (empty: every model the endpoint lists). */
export const ModelsAllowed = Type.Array(ModelId, { maxItems: 100 });
/** The default model (empty: AI_MODEL). */
export const DefaultModel = Type.String({ maxLength: 200 });

/** As the API saves them: ids trimmed, empty ones dropped, each once; the default trimmed. */
export function normalizeModelChoice(allowed: string[], def: string): { allowed: string[]; default: string } {
  return { allowed: [...new Set(allowed.map((m) => m.trim()).filter(Boolean))], default: def.trim() };
}

/** Why the pair is refused (undefined when it is fine): a default outside a configured list. */
export function defaultModelProblem(allowed: string[], def: string): string | undefined {
  return def && allowed.length && !allowed.includes(def) ? 'must be one of models_allowed' : undefined;
}

/** The stored choice: `default` is undefined when no row holds one. A damaged list counts as none. */
export async function readModelSettings(
  q: Queryable,
): Promise<{ allowed: string[]; default: string | undefined; stored: boolean }> {
  const rows = await q.all<{ key: string; value: string }>('SELECT key, value FROM settings WHERE key IN (?, ?)', [
    MODEL_SETTING_KEYS.allowed,
    MODEL_SETTING_KEYS.default,
  ]);
  const value = (key: string) => rows.find((r) => r.key === key)?.value;
  let allowed: string[] = [];
  try {
    const v = JSON.parse(value(MODEL_SETTING_KEYS.allowed) ?? '[]');
    if (Array.isArray(v)) allowed = v.filter((x): x is string => typeof x === 'string');
  } catch {
    /* a damaged value counts as none */
  }
  return { allowed, default: value(MODEL_SETTING_KEYS.default), stored: rows.length > 0 };
}

/** Writes what is given (the list as a JSON array, each id once). */
export async function writeModelSettings(
  q: Queryable,
  values: { allowed?: string[]; default?: string },
  now: string,
): Promise<void> {
  const write = async (key: string, value: string) =>
    q.run(
      'INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET ' +
        'value = excluded.value, updated_at = excluded.updated_at',
      [key, value, now],
    );
  if (values.allowed) await write(MODEL_SETTING_KEYS.allowed, JSON.stringify([...new Set(values.allowed)]));
  if (values.default !== undefined) await write(MODEL_SETTING_KEYS.default, values.default);
}
