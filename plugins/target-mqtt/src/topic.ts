/**
 * The topic a message is published to: a template with `{{event_type}}` and `{{severity}}`.
 * A publish topic is a topic name, not a filter: no `+` or `#` (MQTT 3.1.1 §4.7.3), no NUL, 1 to
 * 65,535 bytes, and Herald does not publish into the broker's own `$` topics.
 */
import type { ConfigProblem, OutboundMessage } from '@herald/plugin-api';

/** The placeholders a topic may use, and where each value comes from. */
export const PLACEHOLDERS: Record<string, (m: OutboundMessage) => string> = {
  event_type: (m) => m.eventType,
  severity: (m) => m.severity,
};

/**
 * Placeholders of the brief's design that the core does not hand to targets: an `OutboundMessage`
 * carries no provider. Refused when saved, with the reason, rather than published as an empty level.
 */
const UNAVAILABLE: Record<string, string> = {
  provider_kind: 'Herald does not pass the provider to targets yet; use {{event_type}} (event types start with their provider\'s name, e.g. mqtt_message)',
};

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Why a topic template cannot be published to (empty when it can). */
export function topicTemplateProblems(template: string): Omit<ConfigProblem, 'path'>[] {
  const problems: Omit<ConfigProblem, 'path'>[] = [];
  const literal = template.replace(PLACEHOLDER, '');
  for (const [, name] of template.matchAll(PLACEHOLDER)) {
    if (name! in PLACEHOLDERS) continue;
    if (name! in UNAVAILABLE) {
      problems.push({ message: `uses {{${name}}}, which is not available to targets`, code: 'placeholder_unavailable', detail: `{{${name}}}: ${UNAVAILABLE[name!]}.` });
    } else {
      problems.push({
        message: `uses the unknown placeholder {{${name}}}`, code: 'unknown_placeholder',
        detail: `A topic may use ${Object.keys(PLACEHOLDERS).map((p) => `{{${p}}}`).join(' and ')}; {{${name}}} is not one of them.`,
      });
    }
  }
  if (literal.includes('{{') || literal.includes('}}')) problems.push({ message: 'has an unclosed {{ or a stray }}', code: 'invalid_topic' });
  if (/[+#]/.test(literal)) {
    problems.push({ message: 'contains + or #, which are wildcards for subscribing, not part of a topic to publish to', code: 'invalid_topic', detail: 'Publish to a plain topic such as herald/alerts or herald/{{event_type}}.' });
  }
  if (literal.includes('\u0000')) problems.push({ message: 'contains a NUL character', code: 'invalid_topic' });
  if (template.trim() === '') problems.push({ message: 'is empty', code: 'minLength', params: { limit: 1 } });
  if (template.startsWith('$')) problems.push({ message: 'starts with $, which brokers keep for their own topics', code: 'invalid_topic' });
  return problems;
}

/** The topic of one message. Values cannot add wildcards or levels: `+`, `#`, `/` and NUL in them become `_`. */
export function renderTopic(template: string, message: OutboundMessage): string {
  return template.replace(PLACEHOLDER, (_, name: string) => (PLACEHOLDERS[name]?.(message) ?? '').replace(/[+#/]/g, '_').replaceAll('\u0000', '_'));
}
