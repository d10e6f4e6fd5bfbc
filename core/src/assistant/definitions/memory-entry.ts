/**
 * The memory entry, defined once: one of a user's health notes, measurements or dated events. Its
 * fields with their limits, the create and change bodies, the entry as the API shows it, and the
 * `memory_entries` row; memory.ts and the web client's types (assistant/api-types.ts) derive from
 * here. A new field: one line in MEMORY_FIELDS, one in `MemoryEntryView` and `publicEntry`, its
 * migration and the form.
 */
import Type, { type Static } from 'typebox';
import { Database as Db } from '../../db/database.ts';
import { optional } from '../../http/optional.ts';

/** What the user writes. */
export const MEMORY_FIELDS = {
  content: Type.String({ minLength: 1, maxLength: 32_000 }),
  category: Type.Union([Type.String({ minLength: 1, maxLength: 100 }), Type.Null()]),
  /** A calendar date (`2025-03-01`) or an instant (`2025-03-01T08:30:00Z`). */
  recorded_at: Type.Union([Type.String({ format: 'date' }), Type.String({ format: 'date-time' }), Type.Null()]),
  /** Entries marked `always_include` go into the personal layer of every reply (see assemble.ts). */
  always_include: Type.Boolean({
    description: 'Send this entry to the assistant with every message, not only when a search finds it.',
  }),
};

export const MemoryEntryView = Type.Object({
  id: Type.String(),
  content: Type.String(),
  category: Type.Union([Type.String(), Type.Null()]),
  recorded_at: Type.Union([Type.String(), Type.Null()], {
    description: 'A calendar date, or an instant in UTC; null when the entry has no date',
  }),
  always_include: Type.Boolean(),
  created_at: Type.String(),
  updated_at: Type.String(),
});
export type MemoryEntry = Static<typeof MemoryEntryView>;
export const MemoryEntryList = Type.Object({ entries: Type.Array(MemoryEntryView) });

/** The create body: the content; the rest may be left out (null, or false). */
export const MemoryCreateBody = Type.Object(
  { ...optional(MEMORY_FIELDS), content: MEMORY_FIELDS.content },
  { additionalProperties: false },
);
/** The change body: what is left out keeps its value. */
export const MemoryPatchBody = Type.Object(optional(MEMORY_FIELDS), { additionalProperties: false });

/** A `memory_entries` row. */
export interface MemoryEntryRow {
  id: string;
  user_id: string;
  content: string;
  category: string | null;
  recorded_at: string | null;
  /** As the backend stores a boolean. */
  always_include: unknown;
  /** Content and category in lower case, for `?q=`. */
  search_text: string;
  created_at: string;
  updated_at: string;
}

export const publicEntry = (r: MemoryEntryRow): MemoryEntry => ({
  id: r.id,
  content: r.content,
  category: r.category,
  recorded_at: r.recorded_at,
  always_include: Db.bool(r.always_include),
  created_at: r.created_at,
  updated_at: r.updated_at,
});
