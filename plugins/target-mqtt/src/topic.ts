/**
 * The topic a message is published to: a template with `{{event_type}}`, `{{severity}}` and
 * `{{provider_kind}}` (`digest` for a quiet-hours digest, which has no provider of its own).
 * A publish topic is a topic name, not a filter: no `+` or `#` (MQTT 3.1.1 §4.7.3), no NUL, 1 to
 * 65,535 bytes, and Herald does not publish into the broker's own `$` topics.
 */
import type { ConfigProblem, OutboundMessage } from '@herald/plugin-api';

/** The placeholders a topic may use, and where each value comes from. */
export const PLACEHOLDERS: Record<string, (m: OutboundMessage) => string> = {
  event_type: (m) => m.eventType,
  severity: (m) => m.severity,
  provider_kind: (m) => m.provider?.kind ?? 'digest',
};

const PLACEHOLDER = /\{\{\s*([^{}]*?)\s*\}\}/g;

/** Why a topic template cannot be published to (empty when it can). */
export function topicTemplateProblems(template: string): Omit<ConfigProblem, 'path'>[] {
  const problems: Omit<ConfigProblem, 'path'>[] = [];
  const literal = template.replace(PLACEHOLDER, '');
  for (const [, name] of template.matchAll(PLACEHOLDER)) {
    if (name! in PLACEHOLDERS) continue;
    problems.push({
      message: `uses the unknown placeholder {{${name}}}`,
      code: 'unknown_placeholder',
      detail: `A topic may use ${Object.keys(PLACEHOLDERS)
        .map((p) => `{{${p}}}`)
        .join(', ')}; {{${name}}} is not one of them.`,
    });
  }
  if (literal.includes('{{') || literal.includes('}}'))
    problems.push({ message: 'has an unclosed {{ or a stray }}', code: 'invalid_topic' });
  if (/[+#]/.test(literal)) {
    problems.push({
      message: 'contains + or #, which are wildcards for subscribing, not part of a topic to publish to',
      code: 'invalid_topic',
      detail: 'Publish to a plain topic such as herald/alerts or herald/{{event_type}}.',
    });
  }
  if (literal.includes('\u0000')) problems.push({ message: 'contains a NUL character', code: 'invalid_topic' });
  if (template.trim() === '') problems.push({ message: 'is empty', code: 'minLength', params: { limit: 1 } });
  if (template.startsWith('$'))
    problems.push({ message: 'starts with $, which brokers keep for their own topics', code: 'invalid_topic' });
  return problems;
}

/** The topic of one message. Values cannot add wildcards or levels: `+`, `#`, `/` and NUL in them become `_`. */
export function renderTopic(template: string, message: OutboundMessage): string {
  return template.replace(PLACEHOLDER, (_, name: string) =>
    (PLACEHOLDERS[name]?.(message) ?? '').replace(/[+#/]/g, '_').replaceAll('\u0000', '_'),
  );
}
