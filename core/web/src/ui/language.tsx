/** The language switch: applies at once and is remembered; the account's locale follows. */
import { useId } from 'preact/hooks';
import { patch } from '../lib/api.ts';
import { oneOf } from '../lib/form.ts';
import { LOCALES, type Locale, locale, setLocale, t } from '../lib/i18n.ts';
import { sessionNow, updateUser } from '../lib/session.ts';
import type { User } from '../lib/types.ts';

export function LanguageSwitch() {
  const id = useId();
  const change = async (l: Locale) => {
    await setLocale(l);
    // Reports and notifications default to the account's language; keep it in step, quietly.
    if (sessionNow().user)
      patch<User>('/api/v1/users/me', { locale: l })
        .then(updateUser)
        .catch(() => {});
  };
  return (
    <div class="lang">
      <label for={id} class="sr-only">
        {t('nav.language')}
      </label>
      <select
        id={id}
        value={locale()}
        data-testid="language"
        onChange={(e) => {
          const l = oneOf(LOCALES, e.currentTarget.value);
          if (l) void change(l);
        }}
      >
        {LOCALES.map((l) => (
          <option key={l} value={l}>
            {t(`languages.${l}`)}
          </option>
        ))}
      </select>
    </div>
  );
}
