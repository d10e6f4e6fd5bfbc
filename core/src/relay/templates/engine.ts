import type { MessageFormat } from '../../plugin-api/index.ts';

/**
 * A small logic-less template language:
 * `{{path.to.x}}`, `{{#each list}}…{{/each}}` (item fields by name, `{{.}}` the item, `{{@index}}`),
 * `{{#if path}}…{{else}}…{{/if}}`, `{{count list}}`, `{{markdown path}}`. Substituted values are
 * escaped for the output format; template text itself is trusted (it comes from the operator or the
 * plugin). `{{markdown path}}` is a value its sender wrote in Markdown (a Gotify or ntfy message
 * marked as such): a Markdown target gets it as written, other formats escaped like any value.
 */
type Node =
  | { t: 'text'; v: string }
  | { t: 'var'; path: string }
  | { t: 'count'; path: string }
  | { t: 'markdown'; path: string }
  | { t: 'each'; path: string; body: Node[] }
  | { t: 'if'; path: string; then: Node[]; else: Node[] };

export class TemplateError extends Error {}

/**
 * What one template may cost. Blocks nest at most `maxDepth` deep (refused at parse, so at save);
 * one render visits at most `maxSteps` nodes, each item of an `{{#each}}` counting its body again,
 * and writes at most `maxOutput` characters; `{{#each}}` walks at most `maxEachItems` items of a
 * list. A render that reaches a step or output limit stops there and ends with `…`: 10,000 steps
 * cost well under a few milliseconds, whatever the template and the payload (a template nesting
 * `{{#each}}` 24 deep over the same list would otherwise multiply to billions of steps).
 */
export const TEMPLATE_LIMITS = { maxDepth: 4, maxSteps: 10_000, maxOutput: 64 * 1024, maxEachItems: 200 } as const;

/** A template whose blocks nest deeper than {@link TEMPLATE_LIMITS}.maxDepth. */
export class TemplateDepthError extends TemplateError {
  readonly limit = TEMPLATE_LIMITS.maxDepth;
  name = 'TemplateDepthError';
}

const TAG = /\{\{\s*([#/]?)(\w+|\.|@index)?\s*([^}]*?)\s*\}\}/g;

export function parseTemplate(src: string): Node[] {
  const root: Node[] = [];
  const stack: { node: Node; list: Node[]; inElse?: boolean }[] = [];
  let list = root;
  let last = 0;
  for (const m of src.matchAll(TAG)) {
    if (m.index! > last) list.push({ t: 'text', v: src.slice(last, m.index) });
    last = m.index! + m[0].length;
    const [, sigil, word = '', rest] = m;
    if (sigil === '#') {
      if (word !== 'each' && word !== 'if') throw new TemplateError(`unknown block {{#${word}}}`);
      const node: Node =
        word === 'each' ? { t: 'each', path: rest!, body: [] } : { t: 'if', path: rest!, then: [], else: [] };
      if (stack.length >= TEMPLATE_LIMITS.maxDepth) {
        throw new TemplateDepthError(`blocks nest deeper than ${TEMPLATE_LIMITS.maxDepth} levels at {{#${word}}}`);
      }
      list.push(node);
      stack.push({ node, list });
      list = node.t === 'each' ? node.body : (node as { then: Node[] }).then;
    } else if (sigil === '/') {
      const top = stack.pop();
      if (!top || top.node.t !== word) throw new TemplateError(`unexpected {{/${word}}}`);
      list = top.list;
    } else if (word === 'else') {
      const top = stack[stack.length - 1];
      if (!top || top.node.t !== 'if' || top.inElse) throw new TemplateError('{{else}} outside {{#if}}');
      top.inElse = true;
      list = top.node.else;
    } else if (word === 'count') {
      list.push({ t: 'count', path: rest! });
    } else if (word === 'markdown' && rest && !rest.startsWith('.')) {
      list.push({ t: 'markdown', path: rest });
    } else {
      list.push({ t: 'var', path: rest ? `${word}${rest}` : word });
    }
  }
  if (stack.length) throw new TemplateError(`unclosed {{#${stack[stack.length - 1]!.node.t}}}`);
  if (last < src.length) list.push({ t: 'text', v: src.slice(last) });
  return root;
}

const FORBIDDEN = new Set(['__proto__', 'prototype', 'constructor']);

function lookup(scopes: unknown[], path: string): unknown {
  if (path === '.') return scopes[scopes.length - 1];
  const segs = path.split('.');
  for (let i = scopes.length - 1; i >= 0; i--) {
    let v: unknown = scopes[i];
    let found = true;
    for (const s of segs) {
      if (FORBIDDEN.has(s) || v === null || typeof v !== 'object' || !Object.hasOwn(v as object, s)) {
        found = false;
        break;
      }
      v = (v as Record<string, unknown>)[s];
    }
    if (found) return v;
  }
  return undefined;
}

const truthy = (v: unknown) => (Array.isArray(v) ? v.length > 0 : Boolean(v) && v !== '0');

export function escapeFor(format: MessageFormat, s: string): string {
  if (format === 'html')
    return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
  if (format === 'markdown') return s.replace(/([\\`*_{}[\]()#+\-.!|>~<])/g, '\\$1');
  return s;
}

function str(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  if (Array.isArray(v)) return v.map(str).join(', ');
  return JSON.stringify(v);
}

/** What a render has left to spend; `exceeded` names the limit it reached, if any. */
interface Budget {
  steps: number;
  exceeded?: 'steps' | 'output';
}

/** Renders `nodes` onto `out` (an array of pieces, joined once) within `budget`; false once a limit stops it. */
function renderInto(
  nodes: Node[],
  scopes: unknown[],
  format: MessageFormat,
  index: number | undefined,
  out: { parts: string[]; length: number },
  budget: Budget,
): boolean {
  for (const n of nodes) {
    if (--budget.steps < 0) {
      budget.exceeded = 'steps';
      return false;
    }
    let piece = '';
    switch (n.t) {
      case 'text':
        piece = n.v;
        break;
      case 'var':
        piece = n.path === '@index' ? String(index ?? 0) : escapeFor(format, str(lookup(scopes, n.path)));
        break;
      case 'count': {
        const v = lookup(scopes, n.path);
        piece = String(Array.isArray(v) ? v.length : 0);
        break;
      }
      case 'markdown': {
        const v = str(lookup(scopes, n.path));
        piece = format === 'markdown' ? v : escapeFor(format, v);
        break;
      }
      case 'if':
        if (!renderInto(truthy(lookup(scopes, n.path)) ? n.then : n.else, scopes, format, index, out, budget))
          return false;
        continue;
      case 'each': {
        const v = lookup(scopes, n.path);
        if (!Array.isArray(v)) continue;
        const items = Math.min(v.length, TEMPLATE_LIMITS.maxEachItems);
        for (let i = 0; i < items; i++)
          if (!renderInto(n.body, [...scopes, v[i]], format, i, out, budget)) return false;
        continue;
      }
    }
    const room = TEMPLATE_LIMITS.maxOutput - out.length;
    if (piece.length > room) {
      out.parts.push(piece.slice(0, room));
      out.length += room;
      budget.exceeded = 'output';
      return false;
    }
    out.parts.push(piece);
    out.length += piece.length;
  }
  return true;
}

/** The result of a bounded render: the text, and the limit that stopped it early (it then ends with `…`). */
export interface Rendered {
  text: string;
  exceeded?: 'steps' | 'output';
}

export function renderBounded(nodes: Node[], scopes: unknown[], format: MessageFormat): Rendered {
  const out = { parts: [] as string[], length: 0 };
  const budget: Budget = { steps: TEMPLATE_LIMITS.maxSteps };
  if (renderInto(nodes, scopes, format, undefined, out, budget)) return { text: out.parts.join('') };
  return { text: `${out.parts.join('')}…`, exceeded: budget.exceeded };
}

export function renderNodes(nodes: Node[], scopes: unknown[], format: MessageFormat): string {
  return renderBounded(nodes, scopes, format).text;
}

const cache = new Map<string, Node[]>();

function parsed(src: string): Node[] {
  let nodes = cache.get(src);
  if (!nodes) {
    nodes = parseTemplate(src);
    if (cache.size > 5000) cache.clear();
    cache.set(src, nodes);
  }
  return nodes;
}

/** Renders a template string against a context, escaping substitutions for `format`, within {@link TEMPLATE_LIMITS}. */
export function render(src: string, context: Record<string, unknown>, format: MessageFormat): string {
  return renderBounded(parsed(src), [context], format).text;
}

/** {@link render}, saying which limit stopped it early, if one did. */
export function renderChecked(src: string, context: Record<string, unknown>, format: MessageFormat): Rendered {
  return renderBounded(parsed(src), [context], format);
}
