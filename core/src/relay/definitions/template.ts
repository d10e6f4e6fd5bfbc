/**
 * The user's own templates, defined once: their limits, the text a request sends, the template as
 * saved, the catalog `GET /api/templates` answers, a preview, and the backup record's text.
 */
import Type, { type Static } from 'typebox';
import { Uuid } from '../../http/schemas.ts';
import { EventTypeSchema, LocaleSchema } from '../vocabulary.ts';
import { Nullable, Time } from './common.ts';

/** Longest own template title and body the API accepts, in characters. */
export const TITLE_MAX = 500;
export const BODY_MAX = 10_000;
/**
 * Longest title and body a backup may carry. Wider than the API's on purpose: the backup format fixed
 * 1000 and 20,000 before own templates could be edited through the API (which then bounded them at
 * 500 and 10,000), so a backup written earlier, of rows put in the `templates` table another way,
 * can hold longer texts and must still restore.
 */
export const BACKUP_TITLE_MAX = 1000;
export const BACKUP_BODY_MAX = 20_000;

/** A template's text as a request sends it. */
export const TemplateText = Type.Object(
  {
    title: Type.String({
      maxLength: TITLE_MAX,
      description: 'The title template (may be empty when the body is not).',
    }),
    body: Type.String({ maxLength: BODY_MAX, description: 'The body template (may be empty when the title is not).' }),
  },
  { additionalProperties: false },
);

/** A backup record's text (see BACKUP_TITLE_MAX). */
export const TEMPLATE_BACKUP_TEXT = {
  title: Type.String({ maxLength: BACKUP_TITLE_MAX }),
  body: Type.String({ maxLength: BACKUP_BODY_MAX }),
};

/** `PUT /api/templates/{event_type}/{locale}`: the template as saved. */
export const SavedTemplate = Type.Object({
  event_type: Type.String(),
  locale: LocaleSchema,
  title: Type.String(),
  body: Type.String(),
  updated_at: Type.String(),
});

/** A `templates` row as stored: a user's own template of an event type in a locale. */
export type TemplateDbRow = Static<typeof SavedTemplate> & { id: string; user_id: string; created_at: string };
/** The columns that name one template: a user has at most one per event type and locale. */
export const TEMPLATE_KEY = ['user_id', 'event_type', 'locale'] as const;

const Text = Type.Object({ title: Type.String(), body: Type.String() });
/** One language of an event type: the default template, whether it falls back to English, and the user's own. */
export const TemplateLocaleView = Type.Object({
  default: Text,
  fallback: Type.Boolean(),
  override: Nullable(Text),
});
/** An event type a provider kind emits, with its templates in both languages. */
export const TemplateCatalogEntry = Type.Object({
  provider_kind: Type.String(),
  provider_name: Type.String(),
  event_type: EventTypeSchema,
  description: Nullable(Type.String()),
  severity: Type.String(),
  /** When the caller's last event of the type occurred (a preview needs one). */
  last_event_at: Nullable(Type.String()),
  locales: Type.Object({ en: TemplateLocaleView, ru: TemplateLocaleView }),
});
export const TemplateCatalog = Type.Object({ locale: LocaleSchema, templates: Type.Array(TemplateCatalogEntry) });

/** A template rendered as plain text from the caller's newest event of its type. */
export const TemplatePreview = Type.Object({
  event_type: Type.String(),
  locale: LocaleSchema,
  event_id: Uuid,
  occurred_at: Time,
  provider_name: Nullable(Type.String()),
  title: Type.String(),
  body: Type.String(),
  /** The caller's own template was rendered (not the default). */
  own_template: Type.Boolean(),
  /** A draft (`POST`) was rendered. */
  draft: Type.Optional(Type.Boolean()),
});
