import t from 'tap';
import { ReplyText } from './exchange.ts';

/** The text a ReplyText holds after `deltas`, and what joining them as strings gives. */
function both(deltas: string[]): [string, string] {
  const r = new ReplyText();
  for (const d of deltas) r.add(d);
  return [r.toString(), deltas.join('')];
}

t.test('a reply read before any delta is empty', async (t) => {
  t.equal(new ReplyText().toString(), '');
  t.equal(both(['', '', ''])[0], '');
});

t.test('the text is the deltas joined, in every script, past many growths of the buffer', async (t) => {
  const pieces = ['Hello', ', ', 'мир', '! ', '日本語', ' 😀', '\n', 'a"b\\c', '\u00e9', ''];
  const deltas = Array.from({ length: 5000 }, (_, i) => pieces[i % pieces.length]!);
  const [got, want] = both(deltas);
  t.equal(got.length, want.length);
  t.equal(got, want);
  // One delta larger than the buffer so far.
  const big = 'ж'.repeat(10_000);
  t.equal(both(['x', big, 'y'])[0], `x${big}y`);
});

t.test('a surrogate pair cut across two deltas comes out whole', async (t) => {
  t.equal(both(['smile \ud83d', '\ude00 done'])[0], 'smile 😀 done');
  // The first half alone in a delta, and a pair cut at the very start.
  t.equal(both(['\ud83d', '\ude00'])[0], '😀');
  t.equal(both(['a', '\ud83d', '\ude00', 'b', '\ud83d', '\ude01'])[0], 'a😀b😁');
});

t.test('a first half still waiting is part of the text read meanwhile', async (t) => {
  const r = new ReplyText();
  r.add('so far \ud83d');
  t.equal(r.toString(), 'so far \ud83d', 'read before the second half came');
  r.add('\ude00');
  t.equal(r.toString(), 'so far 😀', 'read again after it came');
});

t.test('a text read and then added to is read again', async (t) => {
  const r = new ReplyText();
  r.add('one');
  t.equal(r.toString(), 'one');
  t.equal(r.toString(), 'one');
  r.add(' two');
  t.equal(r.toString(), 'one two');
});
