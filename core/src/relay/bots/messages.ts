/** The bot's own replies, from `locales/<locale>/bot.json` (English is the fallback). */
import fs from 'node:fs';

type Strings = Record<string, string>;
const LOCALES_DIR = new URL('../../../../locales/', import.meta.url);

/** Loads the bot strings of every locale once; one instance per runtime, no module-level cache. */
export class BotMessages {
  private byLocale = new Map<string, Strings>();

  private load(locale: string): Strings {
    let s = this.byLocale.get(locale);
    if (!s) {
      try {
        s = JSON.parse(fs.readFileSync(new URL(`${locale}/bot.json`, LOCALES_DIR), 'utf8')) as Strings;
      } catch {
        s = {};
      }
      this.byLocale.set(locale, s);
    }
    return s;
  }

  /** The text of `key` in `locale`, falling back to English, then to the key itself. */
  text(key: string, locale: string): string {
    return this.load(/^[a-z]{2}$/.test(locale) ? locale : 'en')[key] ?? this.load('en')[key] ?? key;
  }
}
