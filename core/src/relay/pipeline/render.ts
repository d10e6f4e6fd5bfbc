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
  const plainTitle = format === 'text' ? title : mark + render(tpl.title, ctx, 'text');
  const plainBody = format === 'text' ? body : render(tpl.body, ctx, 'text');
  const url = typeof r.payload.url === 'string' ? r.payload.url : undefined;
  return {
    deliveryId: r.deliveryId,
    eventId: r.eventId,
    eventType: r.eventType,
    severity: r.severity,
    locale: r.locale,
    format,
    title,
    body,
    plainTitle,
    plainBody,
    url,
    provider: { kind: r.providerKind, name: r.providerName ?? r.providerKind },
    occurredAt: r.occurredAt,
    payload: redactObject(r.payload),
    ...(r.test ? { test: true } : {}),
  };
}

/** What one delivery adds to its event's facts: the target's side of a render. */
export type TargetSide = Pick<
  RenderInput,
  'deliveryId' | 'locale' | 'formats' | 'override' | 'trackerName' | 'targetName'
>;

/**
 * The renders of one event shared by its deliveries (a fan-out to N targets renders once per way of rendering it, not
 * N times). Two deliveries render alike when their targets' locale and formats, the template (a user's own or the
 * default), the tracker and, only when a template names it, the target's name are the same: nothing else of the
 * target reaches a template. `facts` (the event's side, its payload parsed) is computed on first use.
 */
export class SharedRenders {
  private facts?: Omit<RenderInput, keyof TargetSide>;
  private made = new Map<string, OutboundMessage>();
  private readonly catalog: TemplateCatalog;
  private readonly event: () => Omit<RenderInput, keyof TargetSide>;

  constructor(catalog: TemplateCatalog, event: () => Omit<RenderInput, keyof TargetSide>) {
    this.catalog = catalog;
    this.event = event;
  }

  /** The message for one delivery: a copy of a render already made for a target alike, or a new render. */
  render(t: TargetSide): OutboundMessage {
    const facts = (this.facts ??= this.event());
    const tpl = this.catalog.get(facts.eventType, t.locale);
    const named = (s?: { title: string; body: string }) =>
      !!s && (s.title.includes('target_name') || s.body.includes('target_name'));
    const key = JSON.stringify([
      t.locale,
      t.formats,
      t.override ?? null,
      t.trackerName ?? null,
      named(t.override) || named(tpl) ? t.targetName : null,
    ]);
    const made = this.made.get(key);
    if (made) return { ...made, deliveryId: t.deliveryId };
    const msg = renderMessage(this.catalog, { ...facts, ...t });
    this.made.set(key, { ...msg });
    return msg;
  }
}
