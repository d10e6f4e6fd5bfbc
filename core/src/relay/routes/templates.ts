/**
 * Templates: `GET /api/templates` (every provider kind's event types with their default template per
 * locale and the caller's own override), `PUT`/`DELETE /api/templates/{event_type}/{locale}` (the
 * caller's own template: saved, or removed so the default applies again), and the previews
 * (`GET`: the saved template, `POST`: an unsaved draft) rendered from the caller's last real event of
 * that type. Also the one-line message of an event the event log shows, rendered the same way.
 */
import Type from 'typebox';
import { caller, requireUser } from '../../auth/guard.ts';
import type { Core } from '../../core.ts';
import { Database as Db, type Queryable } from '../../db/database.ts';
import { upsertRow } from '../../db/rows.ts';
import { newId } from '../../http/ids.ts';
import { HttpError, unprocessable } from '../../http/problem.ts';
import { errors, Locale, noContent, ok } from '../../http/schemas.ts';
import type { App } from '../../http/server.ts';
import { redactObject } from '../../logging/redact.ts';
import type { Locale as LocaleT } from '../../plugin-api/index.ts';
import { localizeManifest, pickLocale } from '../../plugins/locales.ts';
import { type EventDbRow, severityOf } from '../definitions/event.ts';
import {
  BODY_MAX,
  SavedTemplate,
  TEMPLATE_KEY,
  TemplateCatalog as TemplateCatalogView,
  type TemplateDbRow,
  TemplatePreview,
  TemplateText,
  TITLE_MAX,
} from '../definitions/template.ts';
import { type RenderReport, renderMessage } from '../pipeline/render.ts';
import { TemplateCatalog } from '../templates/catalog.ts';
import { parseTemplate, TEMPLATE_LIMITS, TemplateDepthError, TemplateError } from '../templates/engine.ts';
import { EventTypeSchema } from '../vocabulary.ts';
import { nowIso, relayIfRunning } from './common.ts';

/** Longest `message` the event log returns, in characters. */
export const MESSAGE_MAX = 200;

const own = new WeakMap<Core, TemplateCatalog>();
/** The catalog the dispatcher renders with (the relay's), or one built the same way while the relay is not running. */
export function catalogOf(core: Core): TemplateCatalog {
  const r = relayIfRunning(core);
  if (r) return r.catalog;
  let c = own.get(core);
  if (!c) {
    c = new TemplateCatalog([...core.plugins.plugins.values()]);
    own.set(core, c);
  }
  return c;
}

type Override = { title: string; body: string };

/**
 * What an event is rendered from: an `event_log` row's columns (the assistant's tools read the
 * same row with its severity as text).
 */
export type RenderableEvent = Pick<EventDbRow, 'id' | 'event_type' | 'provider_kind' | 'occurred_at' | 'payload'> & {
  severity: string;
  provider_name?: string | null;
  extras?: unknown;
};

/** The caller's own templates for these types in a locale, by event type. */
export async function overridesFor(
  db: Queryable,
  userId: string,
  types: string[],
  locale: LocaleT,
): Promise<Map<string, Override>> {
  const uniq = [...new Set(types)];
  if (!uniq.length) return new Map();
  const rows = await db.all<Pick<TemplateDbRow, 'event_type' | 'title' | 'body'>>(
    'SELECT event_type, title, body FROM templates WHERE user_id = ? AND locale = ? AND event_type IN ' +
      `(${uniq.map(() => '?').join(',')})`,
    [userId, locale, ...uniq],
  );
  return new Map(rows.map((r) => [r.event_type, { title: String(r.title), body: String(r.body ?? '') }]));
}

/**
 * An event (an event_log row, with `provider_name` when known) rendered as plain text in a locale.
 * Payload fields named like secrets are redacted first, as everywhere the API shows a payload.
 */
export function renderEvent(
  catalog: TemplateCatalog,
  ev: RenderableEvent,
  locale: LocaleT,
  override: Override | undefined,
  names: { tracker?: string; target?: string } = {},
  report?: RenderReport,
): { title: string; body: string } {
  const input = {
    deliveryId: '',
    eventId: ev.id,
    eventType: ev.event_type,
    severity: severityOf(ev.severity),
    locale,
    payload: redactObject(Db.json<Record<string, unknown>>(ev.payload, {})),
    extras: Db.json<Record<string, string> | null>(ev.extras, null),
    providerName: ev.provider_name ?? undefined,
    providerKind: ev.provider_kind,
    trackerName: names.tracker,
    targetName: names.target ?? '',
    occurredAt: ev.occurred_at,
    formats: ['text' as const],
    override,
  };
  let m: ReturnType<typeof renderMessage>;
  try {
    m = renderMessage(catalog, input, report);
  } catch {
    // A user's own template that does not parse: the default one, as the log must still show something.
    m = renderMessage(catalog, { ...input, override: undefined });
  }
  return { title: m.plainTitle ?? m.title, body: m.plainBody ?? m.body };
}

/** The short message of an event: the rendered title, else the body's first line, bounded. */
export function oneLine(r: { title: string; body: string }): string {
  const text =
    r.title.trim() ||
    r.body
      .split('\n')
      .map((l) => l.trim())
      .find(Boolean) ||
    '';
  const flat = text.replace(/\s+/g, ' ');
  return flat.length > MESSAGE_MAX ? `${flat.slice(0, MESSAGE_MAX - 1)}…` : flat;
}

export { BODY_MAX, TITLE_MAX };

const Text = TemplateText;
const TypeParams = Type.Object({ event_type: EventTypeSchema });
// The locale is checked in the handler, not by the schema: a path that fails its schema is a 404 here, and a locale
// other than en/ru is a 422.
const TypeLocaleParams = Type.Object({
  event_type: EventTypeSchema,
  locale: Type.String({ minLength: 1, maxLength: 20, description: '`en` or `ru`' }),
});
const Saved = SavedTemplate;

/**
 * The parser's complaint as a stable reason and the tag it names, so that a client can phrase it
 * in its own language (the parser's own message is English).
 */
function parseReason(message: string): { reason: string; tag: string } {
  const tag = /\{\{[^}]*\}\}/.exec(message)?.[0] ?? '';
  if (message.startsWith('unknown block')) return { reason: 'unknown_block', tag };
  if (message.startsWith('unexpected')) return { reason: 'unexpected_close', tag };
  if (message.startsWith('unclosed')) return { reason: 'unclosed', tag };
  if (message.includes('outside')) return { reason: 'else_outside_if', tag };
  return { reason: 'other', tag };
}

/** 422 `template_too_costly`: rendering the draft with the latest event reached a step or output limit. */
function tooCostly(limit: 'steps' | 'output'): HttpError {
  const detail =
    limit === 'steps'
      ? `Rendering this template with your latest event takes more than ${TEMPLATE_LIMITS.maxSteps} steps ` +
        '(each item of a {{#each}} counts its whole block again); nest fewer {{#each}} blocks over long ' +
        'lists.'
      : `Rendering this template with your latest event writes more than ${TEMPLATE_LIMITS.maxOutput} ` +
        'characters; shorten the repeated parts.';
  return unprocessable(
    detail,
    [
      {
        path: 'body',
        message:
          limit === 'steps'
            ? `takes more than ${TEMPLATE_LIMITS.maxSteps} steps`
            : `writes more than ${TEMPLATE_LIMITS.maxOutput} characters`,
      },
    ],
    'template_too_costly',
    {
      limit: limit === 'steps' ? 'max_steps' : 'max_output',
      value: limit === 'steps' ? TEMPLATE_LIMITS.maxSteps : TEMPLATE_LIMITS.maxOutput,
    },
  );
}

/**
 * 422 `template_invalid` when the title or the body does not parse (the title is checked first),
 * 422 `template_too_deep` when its blocks nest deeper than the limit.
 */
function checkParses(t: { title: string; body: string }): void {
  for (const field of ['title', 'body'] as const) {
    try {
      parseTemplate(t[field]);
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err;
      if (err instanceof TemplateDepthError) {
        throw unprocessable(
          `The ${field} template nests {{#each}} and {{#if}} blocks more than ${err.limit} levels deep; flatten it.`,
          [{ path: `body/${field}`, message: `nests blocks more than ${err.limit} levels deep` }],
          'template_too_deep',
          { field, limit: 'max_depth', value: err.limit },
        );
      }
      throw unprocessable(
        `The ${field} template does not parse: ${err.message}`,
        [{ path: `body/${field}`, message: err.message }],
        'template_invalid',
        { field, message: err.message, ...parseReason(err.message) },
      );
    }
  }
}

/** The event types the enabled provider kinds declare. */
function declaredTypes(core: Core): Set<string> {
  return new Set(
    [...core.plugins.plugins.values()]
      .filter((p) => p.kind === 'provider')
      .flatMap((p) => Object.keys(p.def.manifest.events ?? {})),
  );
}

function requireLocale(locale: string): LocaleT {
  if (locale === 'en' || locale === 'ru') return locale;
  throw unprocessable(
    `"${locale}" is not a template locale; use en or ru.`,
    [{ path: 'params/locale', message: 'must be en or ru', code: 'enum', params: { allowedValues: ['en', 'ru'] } }],
    'unsupported_locale',
    { locale, supported: ['en', 'ru'] },
  );
}

function requireKnownType(core: Core, type: string): void {
  if (declaredTypes(core).has(type)) return;
  const kinds = [...core.plugins.plugins.values()]
    .filter((p) => p.kind === 'provider' && Object.keys(p.def.manifest.events ?? {}).length)
    .map((p) => p.id);
  throw new HttpError(404, 'unknown_event_type', `No enabled provider kind declares the event type "${type}".`, {
    params: { event_type: type, kind: kinds },
  });
}

/** The newest event of `type` the user owns rendered in `locale` with `override` (or the default), as a preview. */
async function previewOf(
  core: Core,
  userId: string,
  type: string,
  locale: LocaleT,
  override: Override | undefined,
  draft = false,
) {
  const ev = await core.db.get<EventDbRow>(
    `SELECT e.*, p.name AS provider_name FROM event_log e LEFT JOIN providers p ON p.id = e.provider_id
    WHERE e.user_id = ? AND e.event_type = ? ORDER BY e.id DESC LIMIT 1`,
    [userId, type],
  );
  if (!ev) {
    throw new HttpError(404, 'no_event_for_preview', `You have no ${type} event yet to preview its template with.`, {
      params: { event_type: type },
    });
  }
  const first = await core.db.get<{ target_name: string | null; tracker_name: string | null }>(
    `SELECT t.name AS target_name, tr.name AS tracker_name FROM deliveries d
    LEFT JOIN targets t ON t.id = d.target_id LEFT JOIN trackers tr ON tr.id = d.tracker_id WHERE d.event_id = ? ORDER
    BY d.id LIMIT 1`,
    [ev.id],
  );
  const report: RenderReport = {};
  const text = renderEvent(
    catalogOf(core),
    ev,
    locale,
    override,
    { tracker: first?.tracker_name ?? undefined, target: first?.target_name ?? undefined },
    report,
  );
  if (draft && report.exceeded) throw tooCostly(report.exceeded);
  return {
    event_type: type,
    locale,
    event_id: ev.id,
    occurred_at: ev.occurred_at,
    provider_name: ev.provider_name ?? null,
    title: text.title,
    body: text.body,
  };
}

export async function templateRoutes(app: App, core: Core): Promise<void> {
  const auth = requireUser(core);

  app.get(
    '/api/templates',
    {
      schema: {
        tags: ['relay'],
        summary: 'Every event type of the enabled provider kinds with its default template per locale',
        description:
          "Per provider kind and event type: the default template (the plugin's, or the operator's file " +
          'under `locales/<lang>/templates/`) in English and Russian (`fallback` when the locale has none ' +
          "and English is used), and the caller's own template for that type and locale, if saved. Names " +
          "and descriptions are in the caller's language (`?locale=`). `last_event_at`: when the caller's " +
          'newest event of that type occurred (null: none yet, so no preview).',
        querystring: Type.Object({ locale: Type.Optional(Locale) }),
        response: {
          ...ok(
            'Per provider kind and event type: the default templates, your own, and when your last event ' +
              'of the type occurred.',
            TemplateCatalogView,
          ),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const locale = pickLocale({
        query: req.query.locale,
        user: user.locale,
        acceptLanguage: req.headers['accept-language'],
      });
      const catalog = catalogOf(core);
      const kinds = [...core.plugins.plugins.values()].filter(
        (p) => p.kind === 'provider' && Object.keys(p.def.manifest.events ?? {}).length,
      );
      const types = kinds.flatMap((p) => Object.keys(p.def.manifest.events ?? {}));
      const mine = {
        en: await overridesFor(core.db, user.id, types, 'en'),
        ru: await overridesFor(core.db, user.id, types, 'ru'),
      };
      // When the caller last had each type: the client asks for a preview only where there is an event to render.
      const last = new Map(
        (
          await core.db.all<{ event_type: string; last: string }>(
            'SELECT event_type, MAX(occurred_at) AS last FROM event_log WHERE user_id = ? GROUP BY event_type',
            [user.id],
          )
        ).map((r) => [r.event_type, String(r.last)]),
      );
      const templates = kinds.flatMap((p) => {
        const words = localizeManifest(p.def.manifest, locale);
        return Object.entries(p.def.manifest.events ?? {}).map(([type, spec]) => ({
          provider_kind: p.id,
          provider_name: words.display_name,
          event_type: type,
          description: words.events[type] ?? null,
          severity: spec.severity,
          last_event_at: last.get(type) ?? null,
          locales: Object.fromEntries(
            (['en', 'ru'] as const).map((l) => [
              l,
              {
                default: catalog.get(type, l),
                fallback: !catalog.has(type, l),
                override: mine[l].get(type) ?? null,
              },
            ]),
          ) as Record<
            'en' | 'ru',
            { default: { title: string; body: string }; fallback: boolean; override: Override | null }
          >,
        }));
      });
      return { locale, templates };
    },
  );

  app.get(
    '/api/templates/:event_type/preview',
    {
      schema: {
        tags: ['relay'],
        summary: 'Preview a template with your last real event of that type',
        description:
          'Renders the template of `event_type` in `locale` (default: your language) as plain text from ' +
          'the newest event of that type you own, exactly as a delivery would be rendered (your own ' +
          "template wins over the default), with the names of its first delivery's tracker and target. 404 " +
          '`no_event_for_preview` when you have no such event yet.',
        params: Type.Object({ event_type: EventTypeSchema }),
        querystring: Type.Object({ locale: Type.Optional(Locale) }),
        response: {
          ...ok('The template rendered from your newest event of the type.', TemplatePreview),
          ...errors([404, 'You have no event of this type yet (`no_event_for_preview`).']),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const type = req.params.event_type;
      const locale = pickLocale({
        query: req.query.locale,
        user: user.locale,
        acceptLanguage: req.headers['accept-language'],
      });
      const override = (await overridesFor(core.db, user.id, [type], locale)).get(type);
      return { ...(await previewOf(core, user.id, type, locale, override)), own_template: Boolean(override) };
    },
  );

  app.post(
    '/api/templates/:event_type/preview',
    {
      schema: {
        tags: ['relay'],
        summary: 'Preview an unsaved template draft with your last real event of that type',
        description:
          'Renders the draft `title` and `body` in `locale` as plain text from the newest event of ' +
          '`event_type` you own, exactly as `GET /api/templates/{event_type}/preview` renders a saved ' +
          'template. 404 `no_event_for_preview` when you have no such event yet; 422 `template_invalid` ' +
          '(params `field`, `message`, `reason`, `tag`) when the draft does not parse. Nothing is saved.',
        params: TypeParams,
        body: Type.Object(
          { locale: Locale, title: Text.properties.title, body: Text.properties.body },
          { additionalProperties: false },
        ),
        response: {
          ...ok('The draft rendered from your newest event of the type.', TemplatePreview),
          ...errors([404, 'You have no event of this type yet (`no_event_for_preview`).']),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const type = req.params.event_type;
      const b = req.body;
      checkParses(b);
      return {
        ...(await previewOf(core, user.id, type, b.locale, { title: b.title, body: b.body }, true)),
        own_template: false,
        draft: true,
      };
    },
  );

  app.put(
    '/api/templates/:event_type/:locale',
    {
      schema: {
        tags: ['relay'],
        summary: 'Save your own template for an event type and locale',
        description:
          `Creates or replaces your own template for \`event_type\` in \`locale\` (\`en\` or \`ru\`, else ` +
          `422 \`unsupported_locale\`); deliveries to targets in that locale use it instead of the default ` +
          `from then on. Title up to ${TITLE_MAX} and body up to ${BODY_MAX} characters, not both empty (422 ` +
          `\`template_empty\`); each must parse (422 \`template_invalid\` with params \`field\`, ` +
          `\`message\`, \`reason\`, \`tag\`). 404 \`unknown_event_type\` when no enabled provider kind ` +
          'declares the type.',
        params: TypeLocaleParams,
        body: Text,
        response: {
          ...ok('The saved template.', Saved),
          ...errors([404, 'No enabled provider kind declares the event type (`unknown_event_type`).']),
        },
      },
      preHandler: auth,
    },
    async (req) => {
      const user = caller(req);
      const { event_type: type, locale: asked } = req.params;
      const locale = requireLocale(asked);
      const b = req.body;
      requireKnownType(core, type);
      if (!b.title.trim() && !b.body.trim()) {
        throw unprocessable(
          'A template needs a title or a body; to use the default again, delete your template instead.',
          [{ path: 'body/title', message: 'is empty, and so is the body' }],
          'template_empty',
          { event_type: type, locale },
        );
      }
      checkParses(b);
      const now = nowIso(core);
      const row: TemplateDbRow = {
        id: newId(),
        user_id: user.id,
        event_type: type,
        locale,
        title: b.title,
        body: b.body,
        created_at: now,
        updated_at: now,
      };
      // The one the caller already had for this type and locale keeps its id and creation time.
      await upsertRow(core.db, 'templates', row, TEMPLATE_KEY, ['title', 'body', 'updated_at']);
      // Inserted or updated, the row now holds exactly these values.
      return { event_type: type, locale, title: b.title, body: b.body, updated_at: now };
    },
  );

  app.delete(
    '/api/templates/:event_type/:locale',
    {
      schema: {
        tags: ['relay'],
        summary: 'Delete your own template for an event type and locale (the default applies again)',
        description:
          '204 whether or not you had one. Only your own template is removed. 422 `unsupported_locale` for ' +
          'a locale other than `en` or `ru`.',
        params: TypeLocaleParams,
        response: {
          ...noContent('Deleted, or there was none.'),
          ...errors([422, 'The locale is not en or ru (`unsupported_locale`).']),
        },
      },
      preHandler: auth,
    },
    async (req, reply) => {
      const user = caller(req);
      const { event_type: type, locale: asked } = req.params;
      const locale = requireLocale(asked);
      await core.db.run('DELETE FROM templates WHERE user_id = ? AND event_type = ? AND locale = ?', [
        user.id,
        type,
        locale,
      ]);
      return reply.code(204).send();
    },
  );
}
