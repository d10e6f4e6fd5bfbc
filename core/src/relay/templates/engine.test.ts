/**
 * The template language on its own, fast: every construct, escaping per format, what a lookup may
 * reach, every parse error, and each rendering limit on both sides (test/relay/template-limits.test.ts
 * drives the same limits through the API).
 */
import t from 'tap';
import {
  escapeFor,
  parseTemplate,
  render,
  renderBounded,
  renderChecked,
  renderNodes,
  TEMPLATE_LIMITS,
  TemplateDepthError,
  TemplateError,
} from './engine.ts';

t.test('variables, nested paths, text around tags and whitespace inside them', async (t) => {
  t.equal(render('Hi {{name}}!', { name: 'Ann' }, 'text'), 'Hi Ann!');
  t.equal(
    render('{{ user.name }} / {{user.address.city}}', { user: { name: 'Bo', address: { city: 'Oslo' } } }, 'text'),
    'Bo / Oslo',
  );
  t.equal(render('a{{missing}}b{{user.none.deeper}}c', { user: {} }, 'text'), 'abc', 'a missing value renders empty');
  t.equal(render('{{x}}', { x: null }, 'text'), '');
  t.equal(render('{{n}} {{f}} {{b}} {{z}}', { n: 42, f: 1.5, b: false, z: 0 }, 'text'), '42 1.5 false 0');
  t.equal(
    render('{{list}}', { list: ['a', 1, null, ['b', 'c']] }, 'text'),
    'a, 1, , b, c',
    'arrays join with commas, nested too',
  );
  t.equal(render('{{obj}}', { obj: { k: 'v', n: [1] } }, 'text'), '{"k":"v","n":[1]}', 'objects as JSON');
  t.equal(render('plain text only', {}, 'text'), 'plain text only');
  t.equal(render('', {}, 'text'), '');
  t.equal(render('{{a}}{{b}}', { a: '1', b: '2' }, 'text'), '12', 'adjacent tags');
  t.same(parseTemplate('x{{a}}y'), [
    { t: 'text', v: 'x' },
    { t: 'var', path: 'a' },
    { t: 'text', v: 'y' },
  ]);
  t.same(parseTemplate('{{a.b}}'), [{ t: 'var', path: 'a.b' }]);
});

t.test('a lookup reaches own properties only, never the prototype chain', async (t) => {
  const ctx = JSON.parse('{"__proto__": {"polluted": "yes"}, "a": {"b": "ok"}}');
  t.equal(render('{{__proto__.polluted}}', ctx, 'text'), '', '__proto__ is refused');
  t.equal(render('{{a.constructor}}{{a.prototype}}', ctx, 'text'), '');
  t.equal(
    render('{{toString}}{{a.hasOwnProperty}}', { a: {} }, 'text'),
    '',
    'inherited members are not own properties',
  );
  t.equal(render('{{a.b.length}}', ctx, 'text'), '', 'not even on a string');
  t.equal(render('{{a.b}}', ctx, 'text'), 'ok');
});

t.test('each: items by name, the item itself, its index, outer names, and non-lists', async (t) => {
  const ctx = { title: 'T', list: [{ name: 'x' }, { name: 'y', title: 'inner' }] };
  t.equal(
    render('{{#each list}}[{{@index}} {{name}} {{title}}]{{/each}}', ctx, 'text'),
    '[0 x T][1 y inner]',
    "an item's own field wins over the outer one",
  );
  t.equal(render('{{#each tags}}<{{.}}>{{/each}}', { tags: ['a', 'b'] }, 'text'), '<a><b>');
  t.equal(
    render('{{#each nope}}x{{/each}}|{{#each s}}x{{/each}}', { s: 'text' }, 'text'),
    '|',
    'a missing value or a string is no list',
  );
  t.equal(
    render('{{#each l}}{{#each .}}{{.}}{{@index}}{{/each}};{{/each}}', { l: [['a', 'b'], ['c']] }, 'text'),
    'a0b1;c0;',
    'nested: the inner index',
  );
  t.equal(render('{{@index}}', {}, 'text'), '0', 'outside a loop the index is 0');
  t.equal(render('{{count list}} {{count none}} {{count s}}', { list: [1, 2, 3], s: 'abc' }, 'text'), '3 0 0');
});

t.test('if/else: what counts as true', async (t) => {
  const tpl = '{{#if v}}yes{{else}}no{{/if}}';
  for (const [v, want] of [
    [true, 'yes'],
    ['x', 'yes'],
    [1, 'yes'],
    [[0], 'yes'],
    [{}, 'yes'],
    [false, 'no'],
    ['', 'no'],
    ['0', 'no'],
    [0, 'no'],
    [[], 'no'],
    [null, 'no'],
    [undefined, 'no'],
  ] as const) {
    t.equal(render(tpl, { v }, 'text'), want, `${JSON.stringify(v)} → ${want}`);
  }
  t.equal(render('{{#if v}}only{{/if}}', { v: false }, 'text'), '', 'no else: nothing');
  t.equal(render('{{#if a}}{{#if b}}ab{{else}}a{{/if}}{{else}}-{{/if}}', { a: 1, b: 0 }, 'text'), 'a');
});

t.test('escaping per format; template text is never escaped', async (t) => {
  const v = `<a href="x">&</a> *b* _c_ [d](e) #f +g -h .i !j |k >l ~m \`n\` \\o {p}`;
  t.equal(
    escapeFor('html', v),
    '&lt;a href=&quot;x&quot;&gt;&amp;&lt;/a&gt; *b* _c_ [d](e) #f +g -h .i !j |k &gt;l ~m `n` \\o {p}',
  );
  t.equal(
    escapeFor('markdown', v),
    '\\<a href="x"\\>&\\</a\\> \\*b\\* \\_c\\_ \\[d\\]\\(e\\) \\#f \\+g \\-h \\.i \\!j \\|k \\>l \\~m ' +
      '\\`n\\` \\\\o \\{p\\}',
  );
  t.equal(escapeFor('text', v), v);
  t.equal(render('<b>{{v}}</b>', { v: '<i>' }, 'html'), '<b>&lt;i&gt;</b>', "the template's own markup stays");
  t.equal(render('*{{v}}*', { v: '*' }, 'markdown'), '*\\**');
  t.equal(render('{{#each l}}{{.}}{{/each}}', { l: ['<', '>'] }, 'html'), '&lt;&gt;', 'items are escaped too');
});

t.test("{{markdown path}} passes a sender's Markdown to Markdown targets only", async (t) => {
  const ctx = { msg: '**bold** <x>' };
  t.equal(render('{{markdown msg}}', ctx, 'markdown'), '**bold** <x>', 'as written');
  t.equal(render('{{markdown msg}}', ctx, 'html'), '**bold** &lt;x&gt;', 'escaped for HTML');
  t.equal(render('{{markdown msg}}', ctx, 'text'), '**bold** <x>');
  t.equal(render('{{ markdown  msg }}', ctx, 'markdown'), '**bold** <x>', 'spaces inside the tag');
  t.same(parseTemplate('{{markdown msg}}'), [{ t: 'markdown', path: 'msg' }]);
  t.same(parseTemplate('{{markdown}}'), [{ t: 'var', path: 'markdown' }], 'a field named markdown');
  t.same(parseTemplate('{{markdown.x}}'), [{ t: 'var', path: 'markdown.x' }], 'a path under it');
  t.equal(render('{{markdown}}', { markdown: '*' }, 'markdown'), '\\*', 'escaped as any value');
  t.equal(render('{{markdown missing}}', {}, 'markdown'), '');
});

t.test('every parse error says what is wrong', async (t) => {
  t.throws(() => parseTemplate('{{#with x}}{{/with}}'), { message: 'unknown block {{#with}}' });
  t.throws(() => parseTemplate('{{/each}}'), { message: 'unexpected {{/each}}' });
  t.throws(() => parseTemplate('{{#if a}}x{{/each}}'), { message: 'unexpected {{/each}}' });
  t.throws(() => parseTemplate('{{#each a}}x{{/if}}'), { message: 'unexpected {{/if}}' });
  t.throws(() => parseTemplate('{{else}}'), { message: '{{else}} outside {{#if}}' });
  t.throws(() => parseTemplate('{{#each a}}{{else}}{{/each}}'), { message: '{{else}} outside {{#if}}' });
  t.throws(
    () => parseTemplate('{{#if a}}1{{else}}2{{else}}3{{/if}}'),
    { message: '{{else}} outside {{#if}}' },
    'one else per if',
  );
  t.throws(
    () => parseTemplate('{{#if a}}{{#each b}}'),
    { message: 'unclosed {{#each}}' },
    'the innermost open block is named',
  );
  t.throws(() => parseTemplate('{{#if a}}'), { message: 'unclosed {{#if}}' });
  const e = (() => {
    try {
      parseTemplate('{{#if a}}');
    } catch (err) {
      return err;
    }
  })();
  t.ok(e instanceof TemplateError, 'a TemplateError');
  t.doesNotThrow(() => parseTemplate('{{#if a}}{{else}}{{/if}}{{#each b}}{{/each}}'));
  t.same(parseTemplate('{{#if a}}1{{else}}2{{/if}}'), [
    { t: 'if', path: 'a', then: [{ t: 'text', v: '1' }], else: [{ t: 'text', v: '2' }] },
  ]);
});

const nest = (levels: number, inner = '{{.}}') => '{{#each list}}'.repeat(levels) + inner + '{{/each}}'.repeat(levels);

t.test('depth: exactly maxDepth nested blocks parse, one more is refused', async (t) => {
  const max = TEMPLATE_LIMITS.maxDepth;
  t.equal(max, 4);
  t.doesNotThrow(() => parseTemplate(nest(max)));
  const e = (() => {
    try {
      parseTemplate(`{{#if a}}${nest(max)}{{/if}}`);
    } catch (err) {
      return err as TemplateDepthError;
    }
  })();
  t.ok(e instanceof TemplateDepthError);
  t.match(e, { name: 'TemplateDepthError', limit: 4, message: 'blocks nest deeper than 4 levels at {{#each}}' });
  t.throws(() => parseTemplate(`${nest(max - 1, '{{#if a}}{{#if b}}x{{/if}}{{/if}}')}`), {
    message: 'blocks nest deeper than 4 levels at {{#if}}',
  });
  t.doesNotThrow(() => parseTemplate(nest(max) + nest(max)), 'siblings do not add up');
});

t.test('each walks at most maxEachItems items', async (t) => {
  const max = TEMPLATE_LIMITS.maxEachItems;
  t.equal(max, 200);
  const list = (n: number) => Array.from({ length: n }, () => 'x');
  t.equal(render('{{#each l}}{{.}}{{/each}}', { l: list(max) }, 'text'), 'x'.repeat(max), `${max} items: all`);
  t.equal(
    render('{{#each l}}{{.}}{{/each}}', { l: list(max + 1) }, 'text'),
    'x'.repeat(max),
    `${max + 1} items: the first ${max}`,
  );
  t.equal(render('{{count l}}', { l: list(max + 1) }, 'text'), String(max + 1), 'count tells the whole length');
});

t.test('steps: exactly maxSteps node visits render whole, one more stops with an ellipsis', async (t) => {
  const steps = TEMPLATE_LIMITS.maxSteps;
  t.equal(steps, 10_000);
  const exact = '{{a}}'.repeat(steps);
  const whole = renderChecked(exact, { a: 'z' }, 'text');
  t.same(whole, { text: 'z'.repeat(steps) });
  const over = renderChecked(`${exact}{{a}}`, { a: 'z' }, 'text');
  t.same(over, { text: `${'z'.repeat(steps)}…`, exceeded: 'steps' });
  // A block costs one step, each item of an each its body again; an if one step plus its branch.
  const list = Array.from({ length: 99 }, () => 1);
  t.same(
    renderChecked(
      `{{#each list}}{{#if .}}y{{/if}}{{/each}}${'{{a}}'.repeat(steps - 1 - 99 * 2)}`,
      { list, a: 'z' },
      'text',
    ).exceeded,
    undefined,
    'each 1 + 99 × (if 1 + text 1)',
  );
  t.equal(
    renderChecked(`{{#each list}}{{#if .}}y{{/if}}{{/each}}${'{{a}}'.repeat(steps - 99 * 2)}`, { list, a: 'z' }, 'text')
      .exceeded,
    'steps',
    'one more',
  );
  t.equal(
    renderChecked(`{{#if a}}${'{{a}}'.repeat(steps)}{{/if}}`, { a: 'z' }, 'text').exceeded,
    'steps',
    'a branch stops the render as a whole',
  );
  t.equal(
    renderChecked(`${'{{#each list}}x{{/each}}'}${'{{a}}'.repeat(steps - 100)}`, { list, a: 'z' }, 'text').exceeded,
    undefined,
  );
});

t.test('output: exactly maxOutput characters render whole, one more is cut with an ellipsis', async (t) => {
  const max = TEMPLATE_LIMITS.maxOutput;
  t.equal(max, 65_536);
  t.same(renderChecked('{{v}}', { v: 'a'.repeat(max) }, 'text'), { text: 'a'.repeat(max) });
  t.same(
    renderChecked('{{v}}!', { v: 'a'.repeat(max) }, 'text'),
    { text: `${'a'.repeat(max)}…`, exceeded: 'output' },
    'the text after the limit is cut',
  );
  t.same(
    renderChecked('{{v}}', { v: 'a'.repeat(max + 1) }, 'text'),
    { text: `${'a'.repeat(max)}…`, exceeded: 'output' },
    'one value over the limit is cut at it',
  );
  t.same(
    renderChecked('x{{v}}', { v: 'a'.repeat(max - 1) }, 'text'),
    { text: `x${'a'.repeat(max - 1)}` },
    'pieces add up to exactly the limit',
  );
  t.equal(
    renderChecked('{{#each l}}{{.}}{{/each}}', { l: ['a'.repeat(max), 'b'] }, 'text').exceeded,
    'output',
    'inside a loop too',
  );
  t.equal(
    renderChecked('{{#if a}}{{v}}b{{/if}}', { a: 1, v: 'a'.repeat(max) }, 'text').exceeded,
    'output',
    'inside an if too',
  );
  t.equal(renderChecked('{{v}}', { v: '<'.repeat(max / 4 + 1) }, 'html').exceeded, 'output', 'escaped length counts');
  t.equal(renderChecked('{{v}}', { v: '<'.repeat(max / 4) }, 'html').exceeded, undefined);
});

t.test('renderNodes, renderBounded and render agree; a parsed template is reused', async (t) => {
  const nodes = parseTemplate('{{a}}-{{#each l}}{{.}}{{/each}}');
  t.equal(renderNodes(nodes, [{ a: 1, l: [2, 3] }], 'text'), '1-23');
  t.same(renderBounded(nodes, [{ a: 1, l: [] }], 'text'), { text: '1-' });
  t.equal(renderNodes(nodes, [{ l: [2] }, { a: 'inner' }], 'text'), 'inner-2', 'the innermost scope that has the name');
  t.equal(render('{{a}}', { a: 'first' }, 'text'), 'first');
  t.equal(render('{{a}}', { a: 'second' }, 'text'), 'second', 'the same source renders against each context');
  for (let i = 0; i < 5005; i++) render(`{{a}}${i}`, { a: '' }, 'text');
  t.equal(render('{{a}}', { a: 'after many' }, 'text'), 'after many', 'still right after the cache was cleared');
});

t.test('corners mutation testing found untested', async (t) => {
  t.equal(render('a{{}}b{{ }}c', {}, 'text'), 'abc', 'an empty tag renders nothing');
  t.throws(() => parseTemplate('{{#}}'), { message: 'unknown block {{#}}' }, 'a block without a name');
  t.equal(
    render('{{user-name}}', { 'user-name': 'hyphen' }, 'markdown'),
    'hyphen',
    'a name with a hyphen is one path, not a Markdown tag',
  );
  const ctx = JSON.parse('{"constructor": "c", "prototype": "p", "a": {"constructor": "ac"}}');
  t.equal(
    render('[{{constructor}}{{prototype}}{{a.constructor}}]', ctx, 'text'),
    '[]',
    'own properties named constructor or prototype are refused too',
  );
  t.equal(render('[{{a.b}}{{a.b.c}}]', { a: null }, 'text'), '[]', 'a path through null renders empty');
  t.equal(
    render('{{n}} {{i}} {{m}}', { n: Number.NaN, i: Number.POSITIVE_INFINITY, m: -0 }, 'text'),
    'NaN Infinity 0',
    'numbers as String() writes them, not as JSON',
  );
});
