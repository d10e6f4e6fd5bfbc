import bcrypt from 'bcrypt';
import { unprocessable } from '../http/problem.ts';

export const MAX_PASSWORD_BYTES = 72;
export const MIN_PASSWORD_CHARS = 8;
const COST = Number(process.env.HERALD_BCRYPT_COST ?? 12);

/** bcrypt reads at most 72 bytes; a longer password is refused rather than silently truncated. */
export function checkPassword(password: string): void {
  const bytes = Buffer.byteLength(password, 'utf8');
  if (bytes > MAX_PASSWORD_BYTES)
    throw unprocessable(
      `The password is ${bytes} bytes long; the limit is ${MAX_PASSWORD_BYTES} bytes (UTF-8). Choose a shorter one.`,
      [{ path: 'body/password', message: `must be at most ${MAX_PASSWORD_BYTES} bytes` }],
      'password_too_long',
      { limit: MAX_PASSWORD_BYTES },
    );
  if ([...password].length < MIN_PASSWORD_CHARS)
    throw unprocessable(
      `The password must be at least ${MIN_PASSWORD_CHARS} characters long.`,
      [{ path: 'body/password', message: `must be at least ${MIN_PASSWORD_CHARS} characters` }],
      'password_too_short',
      { limit: MIN_PASSWORD_CHARS },
    );
}

export async function hashPassword(password: string): Promise<string> {
  checkPassword(password);
  return bcrypt.hash(password, COST);
}

let dummy: Promise<string> | undefined;
/**
 * A hash of nothing anyone types, at the cost real hashes have: checked against when the email is
 * unknown, so that an unknown email costs the same bcrypt work as a wrong password (a cheaper dummy
 * told the two apart by the answer's timing). Made once, on first use.
 */
export function dummyHash(): Promise<string> {
  dummy ??= bcrypt.hash(`timing-equaliser-${Math.random()}`, COST);
  return dummy;
}

/** Compares in the same time whether or not the user exists (an unknown one is checked against {@link dummyHash}). */
export async function verifyPassword(password: string, hash: string | undefined): Promise<boolean> {
  if (Buffer.byteLength(password, 'utf8') > MAX_PASSWORD_BYTES) return false;
  const ok = await bcrypt.compare(password, hash ?? (await dummyHash()));
  return hash !== undefined && ok;
}
