/**
 * The fixed-window limiter on both sides of its limits: the last request allowed and the first
 * refused, the last millisecond of a window and the first of the next, and the wait it answers.
 */
import t from 'tap';
import { WindowLimiter } from './rate-limit.ts';

t.test('60 a minute: the 60th is allowed, the 61st refused, a minute later allowed again', async (t) => {
  const l = new WindowLimiter(60);
  const start = 1_000_000;
  for (let i = 0; i < 60; i++) t.equal(l.take('a', start + i * 100), 0, `request ${i + 1}`);
  t.equal(l.take('a', start + 6_000), 54, 'the 61st waits until the window that began with the first ends (54 s)');
  t.equal(l.take('a', start + 6_200), 54, 'a refusal is not counted as a request, nor does it move the window');
  t.equal(l.take('b', start + 6_200), 0, 'another key has its own window');
  t.equal(l.take('a', start + 60_000 - 1), 1, "the window's last millisecond: still refused, at least 1 s to wait");
  t.equal(l.take('a', start + 60_000), 0, 'a minute after the window began: allowed');
  for (let i = 2; i <= 60; i++) t.equal(l.take('a', start + 60_000), 0, `request ${i} of the new window`);
  t.equal(l.take('a', start + 60_000), 60, 'and the 61st of it refused for the whole minute');
});

t.test('the wait is rounded up to whole seconds', async (t) => {
  const l = new WindowLimiter(1, 10_000);
  t.equal(l.take('k', 0), 0);
  t.equal(l.take('k', 0), 10);
  t.equal(l.take('k', 1), 10, '9.999 s to wait are 10 s');
  t.equal(l.take('k', 1_000), 9);
  t.equal(l.take('k', 9_001), 1);
  t.equal(l.take('k', 10_000), 0);
});

t.test('the default window is one minute; a limit of 1 allows exactly one', async (t) => {
  const l = new WindowLimiter(1);
  t.equal(l.take('k', 500), 0);
  t.equal(l.take('k', 500), 60);
  t.equal(l.take('k', 60_499), 1);
  t.equal(l.take('k', 60_500), 0);
});

t.test('past 100 000 keys, windows that ended are forgotten; live ones are kept', async (t) => {
  const l = new WindowLimiter(1, 1_000);
  const windows = (l as unknown as { windows: Map<string, unknown> }).windows;
  for (let i = 0; i < 99_998; i++) l.take(`old${i}`, 0);
  t.equal(l.take('edge', 1_000), 0);
  t.equal(l.take('open', 1_500), 0, 'the 100 000th key, when most others have ended');
  t.equal(windows.size, 100_000, 'at 100 000 keys nothing is swept yet');
  t.equal(l.take('late', 2_000), 0, 'the 100 001st, exactly when the edge window ends');
  t.same(
    [...windows.keys()],
    ['open', 'late'],
    'past 100 000 the ended windows (the one ending this millisecond too) are forgotten, the open ones kept',
  );
  t.equal(l.take('open', 2_000), 1, 'a kept window still counts');
  t.equal(l.take('old0', 2_000), 0, 'a forgotten key starts afresh');
});
