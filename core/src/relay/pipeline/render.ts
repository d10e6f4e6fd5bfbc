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
