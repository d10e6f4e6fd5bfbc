/**
 * Templates, read-only: `GET /api/templates` (every provider kind's event types with their default
 * template per locale and the caller's own override) and `GET /api/templates/{event_type}/preview`
 * (the template rendered from the caller's last real event of that type). Also the one-line
 * message of an event the event log shows, rendered the same way.
 */
import Type from 'typebox';
import type { App } from '../../http/server.ts';
import type { Core } from '../../core.ts';
import type { Locale as LocaleT } from '../../plugin-api/index.ts';
import { caller, requireUser } from '../../auth/guard.ts';
import { Locale } from '../../http/schemas.ts';
import { HttpError } from '../../http/problem.ts';
import { Database as Db, type Queryable } from '../../db/database.ts';
import { localizeManifest, pickLocale } from '../../plugins/locales.ts';
import { TemplateCatalog } from '../templates/catalog.ts';
import { renderMessage } from '../pipeline/render.ts';
import { redactObject } from '../../logging/redact.ts';
import { relayIfRunning } from './common.ts';

/** Longest `message` the event log returns, in characters. */
export const MESSAGE_MAX = 200;

const own = new WeakMap<Core, TemplateCatalog>();
/** The catalog the dispatcher renders with (the relay's), or one built the same way while the relay is not running. */
export function catalogOf(core: Core): TemplateCatalog {
  const r = relayIfRunning(core) as unknown as { catalog?: TemplateCatalog } | undefined;
  if (r?.catalog) return r.catalog;
  let c = own.get(core);
  if (!c) { c = new TemplateCatalog([...core.plugins.plugins.values()]); own.set(core, c); }
  return c;
}

type Row = Record<string, any>;
type Override = { title: string; body: string };

/** The caller's own templates for these types in a locale, by event type. */
export async function overridesFor(db: Queryable, userId: string, types: string[], locale: LocaleT): Promise<Map<string, Override>> {
  const uniq = [...new Set(types)];
  if (!uniq.length) return new Map();
  const rows = await db.all(`SELECT event_type, title, body FROM templates WHERE user_id = ? AND locale = ? AND event_type IN (${uniq.map(() => '?').join(',')})`, [userId, locale, ...uniq]);
  return new Map(rows.map((r) => [r.event_type as string, { title: String(r.title), body: String(r.body ?? '') }]));
}

/**
 * An event (an event_log row, with `provider_name` when known) rendered as plain text in a locale.
 * Payload fields named like secrets are redacted first, as everywhere the API shows a payload.
 */
export function renderEvent(catalog: TemplateCatalog, ev: Row, locale: LocaleT, override: Override | undefined, names: { tracker?: string; target?: string } = {}): { title: string; body: string } {
  const input = {
    deliveryId: '', eventId: ev.id, eventType: ev.event_type, severity: ev.severity, locale, payload: redactObject(Db.json<Record<string, unknown>>(ev.payload, {})), extras: Db.json<Record<string, string> | null>(ev.extras, null),
    providerName: ev.provider_name ?? undefined, providerKind: ev.provider_kind, trackerName: names.tracker, targetName: names.target ?? '',
    occurredAt: ev.occurred_at, formats: ['text' as const], override,
  };
  let m: ReturnType<typeof renderMessage>;
  try {
    m = renderMessage(catalog, input);
  } catch {
    // A user's own template that does not parse: the default one, as the log must still show something.
    m = renderMessage(catalog, { ...input, override: undefined });
  }
  return { title: m.plainTitle ?? m.title, body: m.plainBody ?? m.body };
}

/** The short message of an event: the rendered title, else the body's first line, bounded. */
export function oneLine(r: { title: string; body: string }): string {
  const text = r.title.trim() || r.body.split('\n').map((l) => l.trim()).find(Boolean) || '';
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > MESSAGE_MAX ? `${flat.slice(0, MESSAGE_MAX - 1)}…` : flat;
}

export async function templateRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);

  app.get('/api/templates', {
    schema: {
      tags: ['relay'], summary: 'Every event type of the enabled provider kinds with its default template per locale',
      description: 'Per provider kind and event type: the default template (the plugin\'s, or the operator\'s file under `locales/<lang>/templates/`) in English and Russian (`fallback` when the locale has none and English is used), and the caller\'s own template for that type and locale, if saved. Names and descriptions are in the caller\'s language (`?locale=`). `last_event_at`: when the caller\'s newest event of that type occurred (null: none yet, so no preview).',
      querystring: Type.Object({ locale: Type.Optional(Locale) }),
    },
    preHandler: auth,
  }, async (req) => {
    const user = caller(req);
    const locale = pickLocale({ query: (req.query as { locale?: string }).locale, user: user.locale, acceptLanguage: req.headers['accept-language'] });
    const catalog = catalogOf(core);
    const kinds = [...core.plugins.plugins.values()].filter((p) => p.kind === 'provider' && Object.keys(p.def.manifest.events ?? {}).length);
    const types = kinds.flatMap((p) => Object.keys(p.def.manifest.events ?? {}));
    const mine = { en: await overridesFor(core.db, user.id, types, 'en'), ru: await overridesFor(core.db, user.id, types, 'ru') };
    // When the caller last had each type: the client asks for a preview only where there is an event to render.
    const last = new Map((await core.db.all<{ event_type: string; last: string }>('SELECT event_type, MAX(occurred_at) AS last FROM event_log WHERE user_id = ? GROUP BY event_type', [user.id])).map((r) => [r.event_type, String(r.last)]));
    const templates = kinds.flatMap((p) => {
      const words = localizeManifest(p.def.manifest, locale);
      return Object.entries(p.def.manifest.events ?? {}).map(([type, spec]) => ({
        provider_kind: p.id, provider_name: words.display_name, event_type: type, description: words.events[type] ?? null, severity: spec.severity,
        last_event_at: last.get(type) ?? null,
        locales: Object.fromEntries((['en', 'ru'] as const).map((l) => [l, {
          default: catalog.get(type, l), fallback: !catalog.has(type, l), override: mine[l].get(type) ?? null,
        }])) as Record<'en' | 'ru', { default: { title: string; body: string }; fallback: boolean; override: Override | null }>,
      }));
    });
    return { locale, templates };
  });

  app.get('/api/templates/:event_type/preview', {
    schema: {
      tags: ['relay'], summary: 'Preview a template with your last real event of that type',
      description: 'Renders the template of `event_type` in `locale` (default: your language) as plain text from the newest event of that type you own, exactly as a delivery would be rendered (your own template wins over the default), with the names of its first delivery\'s tracker and target. 404 `no_event_for_preview` when you have no such event yet.',
      params: Type.Object({ event_type: Type.String({ minLength: 1, maxLength: 100 }) }),
      querystring: Type.Object({ locale: Type.Optional(Locale) }),
    },
    preHandler: auth,
  }, async (req) => {
    const user = caller(req);
    const type = (req.params as { event_type: string }).event_type;
    const locale = pickLocale({ query: (req.query as { locale?: string }).locale, user: user.locale, acceptLanguage: req.headers['accept-language'] });
    const ev = await core.db.get(`SELECT e.*, p.name AS provider_name FROM event_log e LEFT JOIN providers p ON p.id = e.provider_id
      WHERE e.user_id = ? AND e.event_type = ? ORDER BY e.id DESC LIMIT 1`, [user.id, type]);
    if (!ev) {
      throw new HttpError(404, 'no_event_for_preview', `You have no ${type} event yet to preview its template with.`, { params: { event_type: type } });
    }
    const first = await core.db.get(`SELECT t.name AS target_name, tr.name AS tracker_name FROM deliveries d
      LEFT JOIN targets t ON t.id = d.target_id LEFT JOIN trackers tr ON tr.id = d.tracker_id WHERE d.event_id = ? ORDER BY d.id LIMIT 1`, [ev.id]);
    const override = (await overridesFor(core.db, user.id, [type], locale)).get(type);
    const text = renderEvent(catalogOf(core), ev, locale, override, { tracker: first?.tracker_name ?? undefined, target: first?.target_name ?? undefined });
    return {
      event_type: type, locale, event_id: ev.id as string, occurred_at: ev.occurred_at as string, provider_name: (ev.provider_name ?? null) as string | null,
      own_template: Boolean(override), title: text.title, body: text.body,
    };
  });
}
