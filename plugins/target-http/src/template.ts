/**
 * The body template of the HTTP target: literal text with `{{field}}` placeholders, nothing else
 * (no loops, no conditions, no paths into objects). Each placeholder names one of {@link FIELDS};
 * its value is escaped for the request's content type — JSON-escaped string content for `json`
 * (so `"title": "{{title}}"` stays valid whatever the title holds), percent-encoded for `form`,
 * as it is for `text`. The output is bounded: a template has at most {@link MAX_PLACEHOLDERS}
 * placeholders and a rendering stops past {@link MAX_OUTPUT} characters.
 */

/** The values a template can use, and what they hold. */
export const FIELDS = [
  'title', // the notification's title, plain text
  'text', // its body, plain text
  'severity', // info, warning or critical
  'event_type', // e.g. ups_on_battery
  'url', // the event's link, or empty
  'locale', // en or ru
  'delivery_id', // stable across retries of one delivery (also sent as Idempotency-Key)
  'event_id',
  'test', // true for a test message from the API, else false (a JSON boolean when unquoted)
  'in_reply_to', // for a message that updates an earlier one: that delivery's id; else empty
  'previous_title', // for such a message: the earlier message's title; else empty
] as const;

export type Field = (typeof FIELDS)[number];
export type Values = { [F in Field]: F extends 'test' ? boolean : string };
export type ContentType = 'json' | 'form' | 'text';

export const MAX_PLACEHOLDERS = 200;
export const MAX_OUTPUT = 1_000_000;

type Piece = { literal: string } | { field: Field };
export interface Template {
  pieces: Piece[];
}

const PLACEHOLDER = /\{\{([^{}]*)\}\}/g;
const KNOWN = new Set<string>(FIELDS);

/** Parses `src`; `problems` says what is wrong (an unknown placeholder, a stray `{{`, too many placeholders). */
export function compile(src: string): { template: Template; problems: string[] } {
  const pieces: Piece[] = [];
  const problems: string[] = [];
  const unknown = new Set<string>();
  let last = 0;
  let count = 0;
  for (const m of src.matchAll(PLACEHOLDER)) {
    const name = m[1]!.trim();
    if (m.index > last) pieces.push({ literal: src.slice(last, m.index) });
    last = m.index + m[0].length;
    count++;
    if (KNOWN.has(name)) pieces.push({ field: name as Field });
    else unknown.add(name);
  }
  if (last < src.length) pieces.push({ literal: src.slice(last) });
  if (unknown.size)
    problems.push(
      `uses unknown placeholders ${[...unknown].map((n) => `{{${n}}}`).join(', ')}; known: ` +
        `${FIELDS.map((f) => `{{${f}}}`).join(', ')}`,
    );
  if (pieces.some((p) => 'literal' in p && p.literal.includes('{{')))
    problems.push('has a {{ that does not open a placeholder such as {{title}}');
  if (count > MAX_PLACEHOLDERS) problems.push(`has ${count} placeholders; at most ${MAX_PLACEHOLDERS} are allowed`);
  return { template: { pieces }, problems };
}

/** A value as the content type needs it. */
export function escapeValue(type: ContentType, value: string | boolean): string {
  if (typeof value === 'boolean') return String(value);
  if (type === 'json') return JSON.stringify(value).slice(1, -1);
  if (type === 'form') return encodeURIComponent(value);
  return value;
}

/** The template filled in, or undefined when the output would pass {@link MAX_OUTPUT} characters. */
export function render(t: Template, values: Values, type: ContentType): string | undefined {
  const out: string[] = [];
  let size = 0;
  for (const p of t.pieces) {
    const s = 'literal' in p ? p.literal : escapeValue(type, values[p.field]);
    size += s.length;
    if (size > MAX_OUTPUT) return undefined;
    out.push(s);
  }
  return out.join('');
}

/** Values with quotes, backslashes, line breaks and non-ASCII text, to prove a JSON template at save. */
export function sampleValues(test: boolean): Values {
  const s = (name: string) => `Sample ${name}: "quoted" \\ back\\slash\nline «ёлка» </script>`;
  return {
    title: s('title'),
    text: s('text'),
    severity: 'warning',
    event_type: 'sample_event',
    url: 'https://example.net/a?b="c"',
    locale: 'ru',
    delivery_id: 'del-1',
    event_id: 'evt-1',
    test,
    in_reply_to: s('id'),
    previous_title: s('previous'),
  };
}

/**
 * Why `src` cannot be a JSON body template, or undefined when it can: it must render to valid JSON
 * with any values, which is the case when it does with the samples (string values can only stand
 * inside JSON strings, where escaping keeps them valid; `{{test}}` is valid as a bare boolean too).
 */
export function jsonTemplateProblem(t: Template): string | undefined {
  for (const test of [true, false]) {
    const out = render(t, sampleValues(test), 'json');
    if (out === undefined) return 'produces too large a body';
    try {
      JSON.parse(out);
    } catch (err) {
      return (
        `does not produce valid JSON after substitution (${(err as Error).message}); put string placeholders inside ` +
        'quotes, e.g. {"title": "{{title}}"}'
      );
    }
  }
  return undefined;
}
