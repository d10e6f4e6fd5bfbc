import type { MessageFormat } from '../../plugin-api/index.ts';

/**
 * A small logic-less template language:
 * `{{path.to.x}}`, `{{#each list}}…{{/each}}` (item fields by name, `{{.}}` the item, `{{@index}}`),
 * `{{#if path}}…{{else}}…{{/if}}`, `{{count list}}`. Substituted values are escaped for the output
 * format; template text itself is trusted (it comes from the operator or the plugin).
 */
type Node =
  | { t: 'text'; v: string }
  | { t: 'var'; path: string }
  | { t: 'count'; path: string }
  | { t: 'each'; path: string; body: Node[] }
  | { t: 'if'; path: string; then: Node[]; else: Node[] };

export class TemplateError extends Error {}

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
      const node: Node = word === 'each' ? { t: 'each', path: rest!, body: [] } : { t: 'if', path: rest!, then: [], else: [] };
      list.push(node);
      stack.push({ node, list });
      list = node.t === 'each' ? node.body : (node as { then: Node[] }).then;
    } else if (sigil === '/') {
      const top = stack.pop();
      if (!top || (top.node.t !== word)) throw new TemplateError(`unexpected {{/${word}}}`);
      list = top.list;
    } else if (word === 'else') {
      const top = stack[stack.length - 1];
      if (!top || top.node.t !== 'if' || top.inElse) throw new TemplateError('{{else}} outside {{#if}}');
      top.inElse = true;
      list = top.node.else;
    } else if (word === 'count') {
      list.push({ t: 'count', path: rest! });
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
      if (FORBIDDEN.has(s) || v === null || typeof v !== 'object' || !Object.hasOwn(v as object, s)) { found = false; break; }
      v = (v as Record<string, unknown>)[s];
    }
    if (found) return v;
  }
  return undefined;
}

const truthy = (v: unknown) => (Array.isArray(v) ? v.length > 0 : Boolean(v) && v !== '0');

export function escapeFor(format: MessageFormat, s: string): string {
  if (format === 'html') return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
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

export function renderNodes(nodes: Node[], scopes: unknown[], format: MessageFormat, index?: number): string {
  let out = '';
  for (const n of nodes) {
    switch (n.t) {
      case 'text': out += n.v; break;
      case 'var': out += n.path === '@index' ? String(index ?? 0) : escapeFor(format, str(lookup(scopes, n.path))); break;
      case 'count': { const v = lookup(scopes, n.path); out += String(Array.isArray(v) ? v.length : 0); break; }
      case 'if': out += renderNodes(truthy(lookup(scopes, n.path)) ? n.then : n.else, scopes, format, index); break;
      case 'each': {
        const v = lookup(scopes, n.path);
        if (Array.isArray(v)) v.slice(0, 200).forEach((item, i) => { out += renderNodes(n.body, [...scopes, item], format, i); });
        break;
      }
    }
  }
  return out;
}

const cache = new Map<string, Node[]>();
/** Renders a template string against a context, escaping substitutions for `format`. */
export function render(src: string, context: Record<string, unknown>, format: MessageFormat): string {
  let nodes = cache.get(src);
  if (!nodes) {
    nodes = parseTemplate(src);
    if (cache.size > 5000) cache.clear();
    cache.set(src, nodes);
  }
  return renderNodes(nodes, [context], format);
}
