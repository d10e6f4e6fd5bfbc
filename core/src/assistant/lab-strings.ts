/**
 * The server-side strings of the assistant's lab tools (tool descriptions given to the model, the
 * event context of a chat, the AI digest's framing) in English and Russian:
 * `locales/<lang>/assistant-lab.json`, flat keys.
 */
import fs from 'node:fs';

export type Lang = 'en' | 'ru';
export const langOf = (locale: string | null | undefined): Lang => (locale === 'ru' ? 'ru' : 'en');

const cache = new Map<Lang, Record<string, string>>();

function strings(lang: Lang): Record<string, string> {
  let s = cache.get(lang);
  if (!s) {
    s = JSON.parse(
      fs.readFileSync(new URL(`../../../locales/${lang}/assistant-lab.json`, import.meta.url), 'utf8'),
    ) as Record<string, string>;
    cache.set(lang, s);
  }
  return s;
}

/**
 * One string in `locale` (English when the key is missing there), `{{name}}` filled from `params`;
 * placeholders without a value stay as they are (the schedule tool's description names the
 * message placeholders `{{date}}` and `{{action_name}}` literally).
 */
export function lab(
  locale: string | null | undefined,
  key: string,
  params: Record<string, string | number> = {},
): string {
  const text = strings(langOf(locale))[key] ?? strings('en')[key] ?? key;
  return text.replace(/\{\{(\w+)\}\}/g, (m, k: string) => (k in params ? String(params[k]) : m));
}
