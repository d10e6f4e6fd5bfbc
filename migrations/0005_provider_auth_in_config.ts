import type { Migration } from './types.ts';

/**
 * A provider's `auth_mode` and `acknowledge_unauthenticated` were columns on every provider, though
 * only the generic webhook plugin has them; they now live in that plugin's config alone. Rows with
 * an `auth_mode` get both values folded into their config (the columns win over what the config
 * held, as the API showed the columns), then the columns go. Skipped when they are already gone.
 */
export default {
  id: '0005_provider_auth_in_config',
  pending: (d) =>
    d.name === 'sqlite'
      ? `SELECT COUNT(*) AS n FROM pragma_table_info('providers') WHERE name = 'auth_mode'`
      : 'SELECT COUNT(*) AS n FROM information_schema.columns WHERE table_schema = current_schema() AND table_name ' +
        `= 'providers' AND column_name = 'auth_mode'`,
  up: (d) =>
    d.name === 'sqlite'
      ? [
          `UPDATE providers SET config = json_set(CASE WHEN json_valid(config) AND json_type(config) = 'object' ` +
            `THEN config ELSE '{}' END,
          '$.auth_mode', auth_mode,
          '$.acknowledge_unauthenticated', json(CASE WHEN acknowledge_unauthenticated THEN 'true' ELSE ` +
            `'false' END))
         WHERE auth_mode IS NOT NULL`,
          'ALTER TABLE providers DROP COLUMN auth_mode',
          'ALTER TABLE providers DROP COLUMN acknowledge_unauthenticated',
        ]
      : [
          `UPDATE providers SET config = ((CASE WHEN jsonb_typeof(config::jsonb) = 'object' THEN config::jsonb ` +
            `ELSE '{}'::jsonb END)
          || jsonb_build_object('auth_mode', auth_mode, 'acknowledge_unauthenticated', ` +
            `acknowledge_unauthenticated))::text
         WHERE auth_mode IS NOT NULL`,
          'ALTER TABLE providers DROP COLUMN IF EXISTS auth_mode',
          'ALTER TABLE providers DROP COLUMN IF EXISTS acknowledge_unauthenticated',
        ],
} satisfies Migration;
