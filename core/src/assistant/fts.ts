/**
 * Full-text search, one behaviour on both databases. SQLite uses FTS5 tables (unicode61 tokens,
 * ranked by bm25); PostgreSQL uses GIN indexes over `to_tsvector('simple', …)` (ranked by
 * ts_rank). Neither stems, so English and Russian are treated alike: a query is cut into words
 * (letters and digits only, so no character of it can reach the query syntax), each word longer
 * than four letters loses its last one or two (a crude stem: "allergy" and "allergic" both
 * become "aller…", "аллергия" and "аллергии" both "аллерг…"), and words match as prefixes.
 */
import type { Queryable } from '../db/database.ts';

/** Words taken from one query at most. */
const MAX_TERMS = 8;

/** The search words of a query, lower-cased and stemmed; empty when it has no letters or digits. */
export function ftsTerms(query: string): string[] {
  const words =
    query
      .normalize('NFC')
      .toLowerCase()
      .match(/[\p{L}\p{N}]+/gu) ?? [];
  const out: string[] = [];
  for (const w of words) {
    const chars = [...w];
    const cut = chars.length >= 7 ? 2 : chars.length >= 5 ? 1 : 0;
    const stem = chars.slice(0, chars.length - cut).join('');
    if (!out.includes(stem)) out.push(stem);
    if (out.length >= MAX_TERMS) break;
  }
  return out;
}

/** `all`: every word must occur (search boxes); `any`: at least one, more ranking higher (the model's tools). */
export type Mode = 'all' | 'any';

/** The text of the MATCH (SQLite) or to_tsquery (PostgreSQL) argument. Terms are letters and digits only. */
export function ftsQuery(dialect: Queryable['dialect'], terms: string[], mode: Mode): string {
  if (dialect === 'sqlite') return terms.map((t) => `"${t}"*`).join(mode === 'all' ? ' AND ' : ' OR ');
  return terms.map((t) => `${t}:*`).join(mode === 'all' ? ' & ' : ' | ');
}

/**
 * A window of `text` of at most `max` characters around the first place a term occurs (the
 * start when none does), whitespace folded, with an ellipsis where it was cut.
 */
export function excerpt(text: string, terms: string[], max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  if (flat.length <= max) return flat;
  const lower = flat.toLowerCase();
  let at = -1;
  for (const t of terms) {
    const i = lower.indexOf(t);
    if (i >= 0 && (at < 0 || i < at)) at = i;
  }
  const start = at < 0 ? 0 : Math.max(0, Math.min(at - Math.floor(max / 3), flat.length - max));
  const body = flat.slice(start, start + max - 2);
  return `${start > 0 ? '…' : ''}${body}${start + max - 2 < flat.length ? '…' : ''}`;
}
