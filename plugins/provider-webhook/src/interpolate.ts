/**
 * `{{expression}} text` interpolation for mapped titles and bodies, built on the path evaluator.
 * Each `{{…}}` holds one path expression (fallbacks included); everything else is kept as written.
 */

import type { PathExpression } from './path-expr.ts';
import { evaluate, PathExpressionError, parsePathExpression, stringify } from './path-expr.ts';

export type TemplatePart = { kind: 'text'; text: string } | { kind: 'expr'; expr: PathExpression };

const MAX_PARTS = 64;

/** True when a mapping value is an interpolation template rather than a bare path expression. */
export function isTemplate(source: string): boolean {
  return source.includes('{{');
}

/** Splits a template into literal text and parsed expressions; throws PathExpressionError. */
export function parseTemplate(source: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let pos = 0;
  while (pos < source.length) {
    const open = source.indexOf('{{', pos);
    if (open < 0) {
      parts.push({ kind: 'text', text: source.slice(pos) });
      break;
    }
    if (open > pos) parts.push({ kind: 'text', text: source.slice(pos, open) });
    const close = source.indexOf('}}', open + 2);
    if (close < 0) throw new PathExpressionError(`unclosed "{{" at position ${open + 1} of "${source}"`);
    parts.push({ kind: 'expr', expr: parsePathExpression(source.slice(open + 2, close).trim()) });
    pos = close + 2;
    if (parts.length > MAX_PARTS) throw new PathExpressionError(`template has more than ${MAX_PARTS} parts`);
  }
  return parts;
}

/** Renders a parsed template against parsed JSON; missing values render as nothing. */
export function renderTemplate(parts: TemplatePart[], data: unknown): string {
  return parts.map((p) => (p.kind === 'text' ? p.text : stringify(evaluate(p.expr, data)))).join('');
}
