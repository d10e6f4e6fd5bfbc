import { redactObject, redactText } from '../../logging/redact.ts';
import type { Locale, MessageFormat, OutboundMessage, Severity } from '../../plugin-api/index.ts';
import type { TemplateCatalog } from '../templates/catalog.ts';
import { type Rendered, renderChecked, TemplateError } from '../templates/engine.ts';

export interface RenderInput {
  deliveryId: string;
  eventId: string;
  eventType: string;
  severity: Severity;
  locale: Locale;
  payload: Record<string, unknown>;
  extras?: Record<string, string> | null;
  providerName?: string;
  providerKind: string;
  trackerName?: string;
  targetName: string;
  occurredAt: string;
  formats: MessageFormat[];
  /** A user's own template for this type and locale, when they saved one. */
  override?: { title: string; body: string };
  /** A test event raised by an operator: the title starts with a test marker in the target's language. */
  test?: boolean;
}

/** The marker a test event's title starts with, per locale. */
export const TEST_PREFIX: Record<Locale, string> = { en: '[Test] ', ru: '[Тест] ' };

/** Filled by {@link renderMessage} when a render stopped at one of the template limits. */
export interface RenderReport {
  exceeded?: NonNullable<Rendered['exceeded']>;
}

/**
 * Renders one delivery: the target's preferred format plus a plain-text version. A user's own
 * template that no longer parses (saved before a limit it now passes) gives way to the default.
 *
 * Most targets read neither the plain-text version nor the payload, so `plainTitle`, `plainBody`
 * and `payload` are enumerable getters that compute on first read, once (a spread, `JSON.stringify`
 * or structured clone reads them like any property). They read `r.payload` then: the caller hands it
 * over and does not change it. With a `report`, the plain text is rendered before this returns, so
 * the report is complete when the caller looks at it.
 */
export function renderMessage(catalog: TemplateCatalog, r: RenderInput, report?: RenderReport): OutboundMessage {
  if (r.override) {
    try {
      return renderWith(r.override, r, report);
    } catch (err) {
      if (!(err instanceof TemplateError)) throw err;
    }
  }
  return renderWith(catalog.get(r.eventType, r.locale), r, report);
}

/** A lazy property not computed (nor set) yet: undefined is a value a plugin may set. */
const UNSET: unique symbol = Symbol('unset');

/** What a message's lazy properties are computed from, and their values once computed (or set). */
interface Pending {
  tpl: { title: string; body: string };
  ctx: Record<string, unknown>;
  mark: string;
  source: Record<string, unknown>;
  plainTitle: string | typeof UNSET;
  plainBody: string | typeof UNSET;
  payload: Record<string, unknown> | undefined | typeof UNSET;
}

/** Returns the object it is given, so that {@link Lazy}'s constructor can stamp a private field onto a plain object. */
class Stamped {
  constructor(o: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the point of the class (see Lazy).
    return o;
  }
}

/**
 * A message's pending state, kept in a private field stamped onto the plain message object: unlike a
 * property, it is not copied by a spread, JSON or a structured clone, and unlike a WeakMap, it costs
 * a map transition, not a hash-table entry (~0.05 µs against ~0.5 µs).
 */
class Lazy extends Stamped {
  #pending: Pending;
  constructor(o: object, pending: Pending) {
    super(o);
    this.#pending = pending;
  }
  /** The state of `o`, or of the message `o` inherits from (a getter's receiver may be `Object.create(msg)`). */
  static of(o: object): Pending | undefined {
    for (let p: object | null = o; p; p = Object.getPrototypeOf(p)) if (#pending in p) return (p as Lazy).#pending;
    return undefined;
  }
}

/**
 * One accessor per lazy property, shared by every message (a getter made per message would give
 * each message a map of its own: ~1 µs to create it, and megamorphic reads in the plugins).
 */
function lazy<K extends 'plainTitle' | 'plainBody' | 'payload'>(
  key: K,
  compute: (p: Pending) => Exclude<Pending[K], typeof UNSET>,
): PropertyDescriptor {
  return {
    enumerable: true,
    configurable: true,
    get(this: object) {
      const p = Lazy.of(this);
      if (!p) return undefined;
      if (p[key] === UNSET) p[key] = compute(p);
      return p[key];
    },
    set(this: object, v: Exclude<Pending[K], typeof UNSET>) {
      const p = Object.hasOwn(this, key) ? Lazy.of(this) : undefined;
      // As for a data property: assigning through an object that inherits the message gives that object its own.
      if (p) p[key] = v;
      else Object.defineProperty(this, key, { value: v, writable: true, enumerable: true, configurable: true });
    },
  };
}

const PLAIN_TITLE = lazy('plainTitle', (p) => p.mark + renderChecked(p.tpl.title, p.ctx, 'text').text);
const PLAIN_BODY = lazy('plainBody', (p) => renderChecked(p.tpl.body, p.ctx, 'text').text);
const PAYLOAD = lazy('payload', (p) => redactObject(p.source));

function renderWith(tpl: { title: string; body: string }, r: RenderInput, report?: RenderReport): OutboundMessage {
  const render = (src: string, ctx: Record<string, unknown>, format: MessageFormat): string => {
    const out = renderChecked(src, ctx, format);
    if (out.exceeded && report) report.exceeded ??= out.exceeded;
    return out.text;
  };
  const extras = r.extras
    ? Object.fromEntries(Object.entries(redactObject(r.extras)).map(([k, v]) => [k, redactText(String(v))]))
    : {};
  // Payload fields win over the context's own names (a self-monitoring event names the failing target).
  const ctx: Record<string, unknown> = {
    event_type: r.eventType,
    severity: r.severity,
    provider_name: r.providerName ?? r.providerKind,
    provider_kind: r.providerKind,
    tracker_name: r.trackerName ?? '',
    target_name: r.targetName,
    occurred_at: r.occurredAt,
    ...r.payload,
    extras,
  };
  const format = r.formats[0] ?? 'text';
  const mark = r.test ? (TEST_PREFIX[r.locale] ?? TEST_PREFIX.en) : '';
  const title = mark + render(tpl.title, ctx, format);
  const body = render(tpl.body, ctx, format);
  const text = format === 'text';
  // With a report, the plain text is rendered now, in today's order (title, body, plain title, plain body), so the
  // report is complete when this returns and names the first limit reached.
  const plainTitle = text ? title : report ? mark + render(tpl.title, ctx, 'text') : UNSET;
  const plainBody = text ? body : report ? render(tpl.body, ctx, 'text') : UNSET;
  const msg = {
    deliveryId: r.deliveryId,
    eventId: r.eventId,
    eventType: r.eventType,
    severity: r.severity,
    locale: r.locale,
    format,
    title,
    body,
  } as OutboundMessage;
  // The same keys in the same order as a plain object literal would have them (JSON and spreads keep the order).
  Object.defineProperty(msg, 'plainTitle', PLAIN_TITLE);
  Object.defineProperty(msg, 'plainBody', PLAIN_BODY);
  msg.url = typeof r.payload.url === 'string' ? r.payload.url : undefined;
  msg.provider = { kind: r.providerKind, name: r.providerName ?? r.providerKind };
  msg.occurredAt = r.occurredAt;
  Object.defineProperty(msg, 'payload', PAYLOAD);
  if (r.test) msg.test = true;
  new Lazy(msg, { tpl, ctx, mark, source: r.payload, plainTitle, plainBody, payload: UNSET });
  return msg;
}
