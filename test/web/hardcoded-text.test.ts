/**
 * No visible text is written into the components: JSX text, visible attributes (placeholder,
 * title, aria-label, alt) and strings rendered from JSX expressions must come from the locale
 * files through t(). A heuristic over the parsed TSX: anything with a letter in it is flagged.
 */

import { parseAst } from 'rolldown/parseAst';
import t from 'tap';
import { sourceFiles } from './sources.ts';

/** Attributes and props whose value is shown or read out (props of the app's own components included). */
const VISIBLE_ATTRS = new Set([
  'placeholder',
  'title',
  'aria-label',
  'alt',
  'label',
  'aria-description',
  'aria-valuetext',
  'subtitle',
  'confirmLabel',
  'hints',
]);
const LETTER = /\p{L}/u;

type Node = { type: string; start: number; [k: string]: any };

/**
 * Strings in `expr` that end up rendered: literals, template text, branches of ?: && ||. Call arguments (t keys) are
 * not.
 */
function renderedStrings(expr: Node | null | undefined, out: Node[]): void {
  if (!expr) return;
  switch (expr.type) {
    case 'Literal':
      if (typeof expr.value === 'string') out.push(expr);
      break;
    case 'TemplateLiteral':
      for (const q of expr.quasis) if (LETTER.test(q.value.cooked ?? '')) out.push(q);
      for (const e of expr.expressions) renderedStrings(e, out);
      break;
    case 'ConditionalExpression':
      renderedStrings(expr.consequent, out);
      renderedStrings(expr.alternate, out);
      break;
    case 'LogicalExpression':
      renderedStrings(expr.right, out);
      break;
    case 'ParenthesizedExpression':
      renderedStrings(expr.expression, out);
      break;
    case 'ArrayExpression':
      for (const e of expr.elements) renderedStrings(e, out);
      break;
    case 'ObjectExpression':
      for (const p of expr.properties) if (p.key?.name === 'text') renderedStrings(p.value, out);
      break;
    case 'JSXElement':
    case 'JSXFragment':
      break; // visited by the walk
    default:
      break;
  }
}

/** Every hard-coded visible string in one TSX source, as "line: text". */
export function hardcoded(source: string, file = 'x.tsx'): string[] {
  const ast = parseAst(source, { lang: 'tsx' }, file) as unknown as Node;
  const lineOf = (pos: number) => source.slice(0, pos).split('\n').length;
  const found: string[] = [];
  const flag = (n: Node, text: string) => {
    if (LETTER.test(text)) found.push(`${lineOf(n.start)}: ${text.trim()}`);
  };
  const rendered = (expr: Node) => {
    const s: Node[] = [];
    renderedStrings(expr, s);
    s.forEach((x) => flag(x, x.type === 'Literal' ? x.value : x.value.cooked));
  };
  const walk = (n: unknown): void => {
    if (!n || typeof n !== 'object') return;
    if (Array.isArray(n)) {
      n.forEach(walk);
      return;
    }
    const node = n as Node;
    if (node.type === 'JSXElement' || node.type === 'JSXFragment') {
      for (const c of node.children) {
        if (c.type === 'JSXText') flag(c, c.value);
        else if (c.type === 'JSXExpressionContainer' && c.expression) rendered(c.expression);
      }
    }
    if (node.type === 'JSXAttribute' && node.name?.type === 'JSXIdentifier' && VISIBLE_ATTRS.has(node.name.name)) {
      const v = node.value;
      if (v?.type === 'Literal') flag(v, String(v.value));
      if (v?.type === 'JSXExpressionContainer') rendered(v.expression);
    }
    for (const [k, v] of Object.entries(node)) if (k !== 'type' && v && typeof v === 'object') walk(v);
  };
  walk(ast);
  return [...new Set(found)];
}

t.test('the check catches hard-coded text', async (t) => {
  t.same(hardcoded('const a = <p>Hello</p>;'), ['1: Hello']);
  t.same(hardcoded('const a = <input placeholder="Search" />;'), ['1: Search']);
  t.same(hardcoded('const a = <p>{busy ? "Saving" : t("x")}</p>;'), ['1: Saving']);
  t.same(hardcoded('const a = <p title={`Open ${n}`}>{t("k")} · {n}</p>;'), ['1: Open']);
  t.same(hardcoded('const a = <Field label="Name" hints={[ok && "Careful", { text: "Danger" }]}><input /></Field>;'), [
    '1: Name',
    '1: Careful',
    '1: Danger',
  ]);
  t.same(
    hardcoded('const a = <p class="card" data-testid="row">{t("a.b")}{x && <b>{t("c")}</b>} — {`${a}–${b}`}</p>;'),
    [],
    'keys, classes, test ids and punctuation pass',
  );
});

t.test('no hard-coded visible text in the web client', async (t) => {
  const files = sourceFiles(/\.tsx$/);
  t.ok(files.length > 20, 'the components were found');
  for (const { file, text } of files) t.same(hardcoded(text, file), [], file);
});
