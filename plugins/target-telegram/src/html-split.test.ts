import t from 'tap';
import { parseTelegramHtml } from '../test/fakes/telegram-html.ts';
import { splitHtml, visibleLength } from './html-split.ts';

t.test('visibleLength counts text without tags, entities as one character', async (t) => {
  // The emoji is outside the BMP: two UTF-16 units, the way Telegram measures entity offsets (never an under-count).
  t.equal(visibleLength('<b>a&amp;b</b> &lt;c&gt; &#128512;'), 10);
  t.equal(visibleLength('<a href="https://x.test/?a=1&amp;b=2">link</a>'), 4);
});

t.test('short text is one untouched part', async (t) => {
  const html = '<b>Title</b>\nBody &amp; more';
  t.same(splitHtml(html, 4096), [html]);
});

t.test('long text with nested tags splits into balanced, valid parts of at most the limit', async (t) => {
  const unit = '<b>bold <i>it&amp;alic</i></b> plain &lt;x&gt; <a href="https://e.test/?q=1&amp;r=2">link text</a>\n';
  const html = `<blockquote>${unit.repeat(200)}</blockquote>`;
  const parts = splitHtml(html, 500);
  t.ok(parts.length > 1);
  let text = '';
  for (const p of parts) {
    const parsed = parseTelegramHtml(p); // throws on unbalanced tags or a broken entity
    t.ok(parsed.text.length <= 500, `part of ${parsed.text.length} chars`);
    t.ok(p.startsWith('<blockquote>'), 'the open blockquote is reopened');
    text += parsed.text;
  }
  t.equal(text, parseTelegramHtml(html).text, 'no character is lost or duplicated');
});

t.test('cuts never land inside an entity', async (t) => {
  const html = '&amp;'.repeat(30);
  const parts = splitHtml(html, 7);
  t.same(
    parts.map((p) => p.length),
    [35, 35, 35, 35, 10],
  );
  for (const p of parts) t.match(p, /^(&amp;)+$/);
});

t.test('prefers a line break, then a space, as the cut', async (t) => {
  const parts = splitHtml('aaaa bbbb\ncccc dddd eeee', 17);
  t.same(parts, ['aaaa bbbb\n', 'cccc dddd eeee']);
  const words = splitHtml('aaaa bbbb cccc dddd', 12);
  t.same(words, ['aaaa bbbb ', 'cccc dddd']);
});

t.test('a tag opened just before the cut moves to the next part', async (t) => {
  const parts = splitHtml('abcdefghij<b>klmnop</b>', 10);
  t.same(parts, ['abcdefghij', '<b>klmnop</b>']);
});

t.test('surrogate pairs stay whole', async (t) => {
  const parts = splitHtml('😀😀😀', 3);
  t.same(parts, ['😀', '😀', '😀']);
});

t.test('whitespace-only leftovers are not sent as a part', async (t) => {
  t.same(splitHtml('<b>x</b>   ', 1), ['<b>x</b>']);
});
