/**
 * Secrets at rest. Bot tokens and the values of plugins' `Secret()` fields are stored sealed with
 * AES-256-GCM under a key derived from SERVICE_SECRET_KEY by HKDF (an info label of its own, so it
 * is never the key that signs access tokens). A sealed value is one string,
 * `enc:v1:<base64url(iv | ciphertext | tag)>`, stored where the clear value was: inside the
 * record's JSON config, or in `bots.token`. The records keep their shape, so masking in API answers
 * and the backup's secret paths work on them unchanged.
 *
 * The database holds sealed values; the clear value exists only in memory, opened where a plugin,
 * a driver or a validator needs it. During a key rotation SERVICE_SECRET_KEY_PREVIOUS opens what
 * the old key sealed, and the boot step (`seal-stored.ts`) seals those values again with the new key.
 */
import crypto from 'node:crypto';
import { deleteAt, getAt, setAt, setSecretPointers } from '../backup/secret-paths.ts';

export const SEALED_PREFIX = 'enc:v1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
/** HKDF salt and info: fixed, and part of the format (`v1`). */
const SALT = 'herald';
const INFO = 'secrets-at-rest/aes-256-gcm/v1';

/** Whether a stored value is sealed (by its prefix; whether a key opens it is another matter). */
export const isSealed = (v: unknown): v is string => typeof v === 'string' && v.startsWith(SEALED_PREFIX);

/**
 * A sealed value that no configured key opens: sealed under another SERVICE_SECRET_KEY, or damaged.
 * Its code is the one of a configuration error, which is what it is to the pipeline: permanent
 * until the record's secret (or the key) changes, so sends fail at once instead of retrying.
 */
export class SecretUnreadableError extends Error {
  readonly code = 'CONFIG';
  override readonly name = 'SecretUnreadableError';
  constructor(what = 'a stored secret') {
    super(
      `${what} cannot be decrypted with SERVICE_SECRET_KEY: it was sealed with another key or is damaged. ` +
        'Start with the key it was sealed with (during a rotation, as SERVICE_SECRET_KEY_PREVIOUS), or enter ' +
        'the secret again',
    );
  }
}

/** How a stored value stands: not sealed yet, sealed with the current or the previous key, or unreadable. */
export type SealState = 'clear' | 'current' | 'previous' | 'unreadable';

/**
 * The AES key derived from a secret key, as a KeyObject: a cipher given raw key bytes makes a KeyObject of them on
 * every call (~20 µs here, five times the decryption of a short secret), which a start with a thousand instances to
 * open paid a thousand times over.
 */
const deriveKey = (secretKey: string): crypto.KeyObject =>
  crypto.createSecretKey(Buffer.from(crypto.hkdfSync('sha256', secretKey, SALT, INFO, 32)));

export class SecretsAtRest {
  private readonly current: crypto.KeyObject;
  private readonly previous?: crypto.KeyObject;

  constructor(secretKey: string, previousKey?: string) {
    this.current = deriveKey(secretKey);
    if (previousKey && previousKey !== secretKey) this.previous = deriveKey(previousKey);
  }

  /** Seals a clear value with the current key. Every call gives a different string (random IV). */
  seal(plain: string): string {
    const iv = crypto.randomBytes(IV_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', this.current, iv);
    const body = Buffer.concat([iv, cipher.update(plain, 'utf8'), cipher.final(), cipher.getAuthTag()]);
    return SEALED_PREFIX + body.toString('base64url');
  }

  /**
   * The clear value of a stored one. A value that is not sealed (written before sealing began; the
   * boot step seals it) is returned as it is. Throws SecretUnreadableError, naming `what`.
   */
  open(stored: string, what?: string): string {
    if (!isSealed(stored)) return stored;
    const opened = this.tryOpen(stored);
    if (!opened) throw new SecretUnreadableError(what);
    return opened.plain;
  }

  state(stored: string): SealState {
    if (!isSealed(stored)) return 'clear';
    return this.tryOpen(stored)?.key ?? 'unreadable';
  }

  /** The value sealed with the current key: as it is when it already is, else opened and sealed again. */
  reseal(stored: string, what?: string): string {
    const state = this.state(stored);
    if (state === 'current') return stored;
    return this.seal(this.open(stored, what));
  }

  /**
   * `config` with every string at the secret `paths` sealed (`Secret()` patterns such as `a.b`,
   * `items[].token`): a copy, or `config` itself when it holds no secret. Always seals, even a value
   * that looks sealed: what a user typed is never taken for a stored value.
   */
  sealConfig(config: Record<string, unknown>, paths: string[]): Record<string, unknown> {
    return mapSecrets(config, paths, (v) => this.seal(v));
  }

  /**
   * `config` with every sealed string at the secret `paths` opened (a copy, as above). Throws SecretUnreadableError.
   */
  openConfig(config: Record<string, unknown>, paths: string[], what?: string): Record<string, unknown> {
    return mapSecrets(config, paths, (v) => this.open(v, what));
  }

  /**
   * `config` with its sealed secrets opened, and any that no key opens left out, as if nothing were
   * stored there: an edit through the API then asks for the value again instead of failing.
   */
  openConfigLenient(config: Record<string, unknown>, paths: string[]): Record<string, unknown> {
    const copy = structuredClone(config);
    for (const p of setSecretPointers(copy, paths)) {
      const v = getAt(copy, p);
      if (!isSealed(v)) continue;
      const opened = this.tryOpen(v);
      if (opened) setAt(copy, p, opened.plain);
      else deleteAt(copy, p);
    }
    return copy;
  }

  /** The clear value, or '' when no key opens it (as if none were stored). */
  openLenient(stored: string): string {
    return isSealed(stored) ? (this.tryOpen(stored)?.plain ?? '') : stored;
  }

  private tryOpen(sealed: string): { plain: string; key: 'current' | 'previous' } | undefined {
    const body = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64url');
    if (body.length < IV_BYTES + TAG_BYTES) return undefined;
    const iv = body.subarray(0, IV_BYTES);
    const data = body.subarray(IV_BYTES, body.length - TAG_BYTES);
    const tag = body.subarray(body.length - TAG_BYTES);
    for (const [key, which] of [
      [this.current, 'current'],
      [this.previous, 'previous'],
    ] as const) {
      if (!key) continue;
      try {
        const decipher = crypto.createDecipheriv('aes-256-gcm', key, iv);
        decipher.setAuthTag(tag);
        return { plain: Buffer.concat([decipher.update(data), decipher.final()]).toString('utf8'), key: which };
      } catch {
        /* not this key (the tag does not verify) */
      }
    }
    return undefined;
  }
}

/** `config` with `fn` applied to each string at the secret paths: a copy, or `config` itself when none is set. */
export function mapSecrets(
  config: Record<string, unknown>,
  paths: string[],
  fn: (v: string) => string,
): Record<string, unknown> {
  const pointers = setSecretPointers(config, paths);
  if (!pointers.length) return config;
  const copy = structuredClone(config);
  for (const p of pointers) {
    const v = getAt(copy, p);
    if (typeof v === 'string') setAt(copy, p, fn(v));
  }
  return copy;
}
