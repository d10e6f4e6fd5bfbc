import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Locale, TemplateText } from '../../plugin-api/index.ts';
import type { LoadedPlugin } from '../../plugins/loader.ts';

const LOCALES_DIR = fileURLToPath(new URL('../../../../locales', import.meta.url));

/**
 * Default templates: what plugins ship, overridden by the files in `locales/<lang>/templates/*.json`
 * (operators edit those). Per-user overrides from the `templates` table win over both.
 */
export class TemplateCatalog {
  private byLocale = new Map<Locale, Map<string, TemplateText>>();

  constructor(plugins: LoadedPlugin[], localesDir = LOCALES_DIR) {
    for (const locale of ['en', 'ru'] as Locale[]) {
      const m = new Map<string, TemplateText>();
      for (const p of plugins)
        for (const [type, tpl] of Object.entries(p.def.manifest.templates?.[locale] ?? {})) m.set(type, tpl);
      const dir = path.join(localesDir, locale, 'templates');
      if (fs.existsSync(dir)) {
        for (const f of fs
          .readdirSync(dir)
          .filter((x) => x.endsWith('.json'))
          .sort()) {
          const data = JSON.parse(fs.readFileSync(path.join(dir, f), 'utf8')) as Record<string, TemplateText>;
          for (const [type, tpl] of Object.entries(data)) m.set(type, tpl);
        }
      }
      this.byLocale.set(locale, m);
    }
  }

  /** The template for an event type in a locale, falling back to English, then to a generic one. */
  get(type: string, locale: Locale): TemplateText {
    return (
      this.byLocale.get(locale)?.get(type) ??
      this.byLocale.get('en')?.get(type) ??
      this.byLocale.get('en')?.get('_generic') ?? { title: '{{event_type}}', body: '' }
    );
  }

  has(type: string, locale: Locale): boolean {
    return this.byLocale.get(locale)?.has(type) ?? false;
  }
}
