/**
 * Names the service gives things it creates itself, shown in the interface language. The
 * self-monitoring provider and its tracker are stored under the plugin's English display name;
 * a user's own names are shown as they are.
 */
import { t } from '../lib/i18n.ts';

const BUILT_IN: Record<string, () => string> = {
  'Self-monitoring': () => t('builtin.self_monitoring'),
};

/** The name to show for a provider, tracker or other record: built-in names translated. */
export const shownName = (name: string): string => BUILT_IN[name]?.() ?? name;

/** A language's name in the interface language ("Английский" in Russian), for badges and pickers. */
export const languageName = (code: string): string =>
  code === 'en' || code === 'ru' ? t(`language_names.${code}`) : code;
