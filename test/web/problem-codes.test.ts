/**
 * Every problem code the service can answer with has a text in the web client's locale files,
 * `problem.<code>` in English and Russian, so that the client phrases server errors in the
 * user's language: the server sources (core and plugins) are parsed, every HttpError and
 * problem helper call is read for its code (literals, the defaults of the helpers, and the
 * literals a code variable or code function can hold), and the chat stream's `error` events too.
 */
import fs from 'node:fs';
import path from 'node:path';
import { parseAst } from 'rolldown/parseAst';
import t from 'tap';
import { ROOT } from './sources.ts';

type Node = { type: string; start: number; [k: string]: any };

/** The argument holding the code, and the code when it is left out. */
const HELPERS: Record<string, { arg: number; fallback?: string }> = {
  HttpError: { arg: 1 },
  problem: { arg: 1 },
  invalid: { arg: 0 },
  refuse: { arg: 1 },
  conflict: { arg: 1, fallback: 'conflict' },
  unprocessable: { arg: 2, fallback: 'validation_failed' },
  tooMany: { arg: 2, fallback: 'rate_limited' },
  unavailable: { arg: 1, fallback: 'unavailable' },
  unauthorized: { arg: 99, fallback: 'unauthorized' },
  forbidden: { arg: 99, fallback: 'forbidden' },
  notFound: { arg: 99, fallback: 'not_found' },
  badRequest: { arg: 99, fallback: 'bad_request' },
};
const CODE = /^[a-z][a-z0-9_]*$/;

function walk(n: unknown, visit: (n: Node) => void): void {
  if (!n || typeof n !== 'object') return;
  if (Array.isArray(n)) {
    for (const x of n) walk(x, visit);
    return;
  }
  const node = n as Node;
  if (typeof node.type === 'string') visit(node);
  for (const [k, v] of Object.entries(node)) if (k !== 'type' && v && typeof v === 'object') walk(v, visit);
}

/**
 * The code literals an expression can evaluate to: branches of ?: and ??/||, a function's return values (not its
 * comparisons).
 */
function literals(n: Node | undefined): string[] {
  if (!n) return [];
  switch (n.type) {
    case 'Literal':
      return typeof n.value === 'string' && CODE.test(n.value) ? [n.value] : [];
    case 'ConditionalExpression':
      return [...literals(n.consequent), ...literals(n.alternate)];
    case 'LogicalExpression':
      return [...literals(n.left), ...literals(n.right)];
    case 'ParenthesizedExpression':
    case 'TSNonNullExpression':
    case 'TSAsExpression':
      return literals(n.expression);
    case 'ArrowFunctionExpression':
    case 'FunctionExpression':
      return literals(n.body);
    case 'BlockStatement': {
      const out: string[] = [];
      walk(n, (x) => {
        if (x.type === 'ReturnStatement') out.push(...literals(x.argument));
      });
      return out;
    }
    default:
      return [];
  }
}

/** The codes one source file can produce, and the call sites whose code it cannot read. */
export function codesIn(source: string, file = 'x.ts'): { codes: Set<string>; unread: string[] } {
  const ast = parseAst(source, { lang: 'ts' }, file) as unknown as Node;
  const codes = new Set<string>();
  const unread: string[] = [];
  const line = (pos: number) => source.slice(0, pos).split('\n').length;
  // Names bound in this file (const code = …, function refusalCode() {…}) → the code literals they hold.
  const bound = new Map<string, Node>();
  walk(ast, (n) => {
    if (n.type === 'VariableDeclarator' && n.id?.type === 'Identifier' && n.init) bound.set(n.id.name, n.init);
    if (n.type === 'FunctionDeclaration' && n.id) bound.set(n.id.name, n.body);
  });
  const read = (arg: Node, at: number) => {
    if (arg.type === 'Literal' && typeof arg.value === 'string') {
      codes.add(arg.value);
      return;
    }
    const name =
      arg.type === 'Identifier'
        ? arg.name
        : arg.type === 'CallExpression' && arg.callee.type === 'Identifier'
          ? arg.callee.name
          : undefined;
    const found = name && bound.has(name) ? literals(bound.get(name)) : literals(arg);
    if (found.length) found.forEach((c) => codes.add(c));
    else unread.push(`${file}:${line(at)}`);
  };
  walk(ast, (n) => {
    if (n.type !== 'CallExpression' && n.type !== 'NewExpression') return;
    const callee =
      n.callee.type === 'Identifier'
        ? n.callee.name
        : n.callee.type === 'MemberExpression'
          ? n.callee.property?.name
          : undefined;
    // The chat stream's error event: sse.finish('error', { code: … }).
    if (callee === 'finish' && n.arguments[0]?.value === 'error') {
      const prop = n.arguments[1]?.properties?.find((p: Node) => p.key?.name === 'code');
      if (prop) read(prop.value, n.start);
      return;
    }
    const h = callee ? HELPERS[callee] : undefined;
    if (!h) return;
    const arg = n.arguments[h.arg];
    if (!arg || (arg.type === 'Identifier' && arg.name === 'undefined')) {
      if (h.fallback) codes.add(h.fallback);
      return;
    }
    read(arg, n.start);
  });
  return { codes, unread };
}

function serverFiles(): string[] {
  const out: string[] = [];
  const scan = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'node_modules' && e.name !== 'web') scan(p);
      } else if (/\.ts$/.test(e.name) && !/\.(test|d)\.ts$/.test(e.name)) out.push(p);
    }
  };
  scan(path.join(ROOT, 'core/src'));
  for (const p of fs.readdirSync(path.join(ROOT, 'plugins')))
    if (fs.existsSync(path.join(ROOT, 'plugins', p, 'src'))) scan(path.join(ROOT, 'plugins', p, 'src'));
  return out;
}

type Tree = { [k: string]: string | Tree };
function problemTexts(lang: string): Record<string, string> {
  const dir = path.join(ROOT, 'locales', lang);
  const files = [
    path.join(dir, 'web.json'),
    ...fs
      .readdirSync(path.join(dir, 'web'))
      .filter((f) => f.endsWith('.json'))
      .map((f) => path.join(dir, 'web', f)),
  ];
  const out: Record<string, string> = {};
  for (const f of files) {
    const problem = (JSON.parse(fs.readFileSync(f, 'utf8')) as Tree).problem;
    if (problem && typeof problem === 'object')
      for (const [k, v] of Object.entries(problem))
        if (typeof v === 'string') out[k.replace(/_(one|few|many|other)$/, '')] = v;
  }
  return out;
}

t.test('the scan reads codes from the helpers, variables and functions', async (t) => {
  const src = `
    const a = () => { throw conflict('x', 'email_taken'); };
    const b = () => notFound('Chat');
    function refusal(s) { return s === 401 ? 'unauthorized' : 'replayed'; }
    const c = (s) => new HttpError(s, refusal(s), 'x');
    const code = ok ? 'invalid_json' : 'forbidden_key';
    const d = () => unprocessable('x', undefined, code);
    const e = () => unprocessable('x');
    const f = (k) => new HttpError(400, k.code, 'x');
    sse.finish('error', { detail: 'x', code: 'internal' });`;
  const { codes, unread } = codesIn(src);
  t.same([...codes].sort(), [
    'email_taken',
    'forbidden_key',
    'internal',
    'invalid_json',
    'not_found',
    'replayed',
    'unauthorized',
    'validation_failed',
  ]);
  t.same(unread, ['x.ts:9'], 'a code the scan cannot read is reported');
});

t.test('every problem code has a text in English and Russian', async (t) => {
  const all = new Set<string>();
  const unread: string[] = [];
  for (const file of serverFiles()) {
    const r = codesIn(fs.readFileSync(file, 'utf8'), path.relative(ROOT, file));
    r.codes.forEach((c) => all.add(c));
    unread.push(...r.unread);
  }
  // Sites that pass on a code made elsewhere, each read here from where it is made: the helpers
  // themselves; the error handler (an HttpError's own code, or its table of framework errors);
  // the chat stream (the model's errors); scheduled actions (checkSchedule's codes).
  const PASSED_ON: Record<string, () => string[]> = {
    'core/src/http/problem.ts': () => [],
    'core/src/http/server.ts': () =>
      [...fs.readFileSync(path.join(ROOT, 'core/src/http/server.ts'), 'utf8').matchAll(/\[\d{3}, '([a-z_]+)'/g)].map(
        (m) => m[1],
      ),
    'core/src/assistant/send.ts': () => [],
    'core/src/relay/inbound/webhooks.ts': () => [],
    'core/src/relay/routes/actions.ts': () =>
      [
        ...fs.readFileSync(path.join(ROOT, 'core/src/relay/routes/schedule.ts'), 'utf8').matchAll(/code: '([a-z_]+)'/g),
      ].map((m) => m[1]),
  };
  for (const u of unread) for (const c of PASSED_ON[u.split(':')[0]]?.() ?? []) all.add(c);
  t.same(
    unread.filter((u) => !(u.split(':')[0] in PASSED_ON)),
    [],
    'every code is readable from the source',
  );
  t.ok(all.size > 40, `${all.size} codes found`);
  for (const lang of ['en', 'ru']) {
    const texts = problemTexts(lang);
    t.same([...all].filter((c) => !(c in texts)).sort(), [], `${lang}: problem.<code> exists for every code`);
  }
});
