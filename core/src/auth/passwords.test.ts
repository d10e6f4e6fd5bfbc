/**
 * The password rules on both sides of each limit: at most 72 bytes of UTF-8 (what bcrypt reads; a
 * longer one is refused, never silently cut), at least 8 characters (code points, not bytes or
 * UTF-16 units), and a login never compares more than 72 bytes.
 */
process.env.HERALD_BCRYPT_COST ??= '4';
const t = (await import('tap')).default;
const { checkPassword, dummyHash, hashPassword, verifyPassword, MAX_PASSWORD_BYTES, MIN_PASSWORD_CHARS } = await import(
  './passwords.ts'
);

const refusal = (pw: string) => {
  try {
    checkPassword(pw);
    return undefined;
  } catch (err) {
    return err as { status: number; code: string; message: string; params?: unknown; errors?: unknown };
  }
};

t.test('72 bytes are accepted, 73 are refused, counted in UTF-8', async (t) => {
  t.equal(MAX_PASSWORD_BYTES, 72);
  t.equal(refusal('a'.repeat(72)), undefined, '72 ASCII bytes');
  t.equal(refusal('é'.repeat(36)), undefined, '36 two-byte characters are 72 bytes');
  t.equal(refusal(`${'é'.repeat(35)}ab`), undefined, '70 + 2 bytes');
  for (const [pw, what] of [
    ['a'.repeat(73), '73 ASCII bytes'],
    [`${'é'.repeat(36)}a`, '72 + 1 bytes'],
    ['é'.repeat(37), '74 bytes in 37 characters'],
    ['😀'.repeat(19), '76 bytes in 19 characters'],
  ] as const) {
    const e = refusal(pw);
    const bytes = Buffer.byteLength(pw);
    t.match(
      e,
      {
        status: 422,
        code: 'password_too_long',
        params: { limit: 72 },
        errors: [{ path: 'body/password', message: 'must be at most 72 bytes' }],
      },
      what,
    );
    t.equal(
      e?.message,
      `The password is ${bytes} bytes long; the limit is 72 bytes (UTF-8). Choose a shorter one.`,
      `${what}: says how long it is`,
    );
  }
});

t.test('8 characters are accepted, 7 are refused, counted in code points', async (t) => {
  t.equal(MIN_PASSWORD_CHARS, 8);
  t.equal(refusal('abcdefgh'), undefined, '8 ASCII characters');
  t.equal(refusal('ééééééé\u00e9'), undefined, '8 two-byte characters');
  t.equal(refusal('😀'.repeat(8)), undefined, '8 emoji (16 UTF-16 units)');
  for (const [pw, what] of [
    ['abcdefg', '7 ASCII characters'],
    ['ééééééé', '7 characters in 14 bytes'],
    ['😀'.repeat(7), '7 emoji, although 14 UTF-16 units'],
    ['', 'empty'],
  ] as const) {
    t.match(
      refusal(pw),
      {
        status: 422,
        code: 'password_too_short',
        params: { limit: 8 },
        errors: [{ path: 'body/password', message: 'must be at least 8 characters' }],
        message: 'The password must be at least 8 characters long.',
      },
      what,
    );
  }
  t.match(refusal('é'.repeat(37)), { code: 'password_too_long' }, 'too long is checked first');
});

t.test('hashing refuses what the rules refuse; a 72-byte password verifies, one byte more never does', async (t) => {
  const at72 = `${'x'.repeat(70)}é`;
  t.equal(Buffer.byteLength(at72), 72);
  const hash = await hashPassword(at72);
  t.match(hash, /^\$2[aby]\$04\$/, 'bcrypt at the configured cost');
  t.equal(await verifyPassword(at72, hash), true, 'the 72-byte password signs in');
  t.equal(
    await verifyPassword(`${at72}!`, hash),
    false,
    'a 73rd byte is refused, although bcrypt would read only the first 72 and match',
  );
  t.equal(await verifyPassword(`${'x'.repeat(70)}e`, hash), false, 'a wrong password');
  await t.rejects(hashPassword(`${at72}!`), { code: 'password_too_long' }, '73 bytes are not hashed');
  await t.rejects(hashPassword('short'), { code: 'password_too_short' });
});

t.test('an unknown account costs a comparison and never succeeds', async (t) => {
  // The dummy's text is random; fixed here (it is made on first use) so the test can type it.
  const random = Math.random;
  Math.random = () => 0.25;
  const dummy = await dummyHash();
  Math.random = random;
  const bcrypt = (await import('bcrypt')).default;
  t.equal(await bcrypt.compare('timing-equaliser-0.25', dummy), true, 'the dummy hashes a text nobody types');
  t.equal(
    await verifyPassword('timing-equaliser-0.25', undefined),
    false,
    'not even that text signs in to an unknown account',
  );
  t.equal(await dummyHash(), dummy, 'the dummy hash is made once');
  t.match(dummy, /^\$2[aby]\$04\$/, 'at the cost real hashes have');
  t.equal(await verifyPassword('whatever password', undefined), false);
});
