/**
 * The target's own Olm device identity, kept in the instance store, and the libolm account pickle
 * the Rust crypto imports it from at every start.
 *
 * matrix-js-sdk's Rust crypto keeps its state in IndexedDB or in memory; Node has no IndexedDB, so
 * it runs in memory and the identity is carried across restarts here: the two identity keys
 * (Ed25519 for signing, Curve25519 for Olm) and the next one-time key id. At start they become a
 * libolm account pickle (the format libolm's `olm_pickle_account` writes, version 4) that the
 * sdk's documented migration path (a legacy crypto store holding the pickle) turns into the Rust
 * machine's account, so the device keeps the keys other members' clients already know.
 *
 * Pickle layout (big-endian integers): u32 version = 4; Ed25519 public key (32) and libolm's
 * expanded private key (64: SHA-512 of the seed); Curve25519 public (32) and private (32) key;
 * u32 count of one-time keys (0); u8 count of fallback keys (0); u32 next one-time key id. It is
 * encrypted as libolm does: HKDF-SHA-256 (salt one zero byte, info "Pickle") expands the pickle key
 * into an AES-256 key, an HMAC key and an IV; AES-256-CBC with PKCS#7 padding, then the first 8
 * bytes of HMAC-SHA-256 over the ciphertext; unpadded base64.
 */
import {
  createCipheriv,
  createHash,
  createHmac,
  createPrivateKey,
  createPublicKey,
  generateKeyPairSync,
  hkdfSync,
  randomBytes,
} from 'node:crypto';

/** What the instance store keeps about the device (key {@link IDENTITY_KEY}). */
export interface DeviceIdentity {
  userId: string;
  deviceId: string;
  /** Ed25519 seed (32 bytes), unpadded base64. */
  ed25519Seed: string;
  /** Curve25519 private key (32 bytes), unpadded base64. */
  curve25519Secret: string;
  /** The next one-time key id the account may use: ids already published stay taken on the homeserver. */
  nextKeyId: number;
}

export const IDENTITY_KEY = 'e2ee.device';
/** How the identity is stored: its private keys sealed at rest with the service's secret key. */
export const SEALED = { sealed: true } as const;

const b64 = (b: Uint8Array) => Buffer.from(b).toString('base64').replace(/=+$/, '');
const unb64 = (s: string) => Buffer.from(s, 'base64');

// DER prefixes of PKCS#8 private keys for a raw 32-byte Ed25519 seed / X25519 scalar (RFC 8410).
const ED25519_PKCS8 = Buffer.from('302e020100300506032b657004220420', 'hex');
const X25519_PKCS8 = Buffer.from('302e020100300506032b656e04220420', 'hex');

function publicRaw(prefix: Buffer, secret: Buffer): Buffer {
  const key = createPrivateKey({ key: Buffer.concat([prefix, secret]), format: 'der', type: 'pkcs8' });
  return Buffer.from(createPublicKey(key).export({ format: 'jwk' }).x as string, 'base64url');
}

/** A new identity for `deviceId`: fresh Ed25519 and Curve25519 key pairs. */
export function newIdentity(userId: string, deviceId: string): DeviceIdentity {
  const seed = (k: ReturnType<typeof generateKeyPairSync>['privateKey']) =>
    Buffer.from(k.export({ format: 'jwk' }).d as string, 'base64url');
  return {
    userId,
    deviceId,
    ed25519Seed: b64(seed(generateKeyPairSync('ed25519').privateKey)),
    curve25519Secret: b64(seed(generateKeyPairSync('x25519').privateKey)),
    nextKeyId: 0,
  };
}

/** The public identity keys, as the device publishes them (unpadded base64). */
export function publicKeys(id: DeviceIdentity): { ed25519: string; curve25519: string } {
  return {
    ed25519: b64(publicRaw(ED25519_PKCS8, unb64(id.ed25519Seed))),
    curve25519: b64(publicRaw(X25519_PKCS8, unb64(id.curve25519Secret))),
  };
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

/** The libolm account pickle of `id`, encrypted with `pickleKey` (see the module comment). */
export function libolmAccountPickle(id: DeviceIdentity, pickleKey: Uint8Array): string {
  const seed = unb64(id.ed25519Seed);
  const curveSecret = unb64(id.curve25519Secret);
  if (seed.length !== 32 || curveSecret.length !== 32) throw new Error('stored device keys are damaged');
  const plain = Buffer.concat([
    u32(4),
    publicRaw(ED25519_PKCS8, seed),
    createHash('sha512').update(seed).digest(),
    publicRaw(X25519_PKCS8, curveSecret),
    curveSecret,
    u32(0),
    Buffer.from([0]),
    u32(id.nextKeyId),
  ]);
  const keys = Buffer.from(hkdfSync('sha256', pickleKey, Buffer.from([0]), 'Pickle', 80));
  const cipher = createCipheriv('aes-256-cbc', keys.subarray(0, 32), keys.subarray(64, 80));
  const encrypted = Buffer.concat([cipher.update(plain), cipher.final()]);
  const mac = createHmac('sha256', keys.subarray(32, 64)).update(encrypted).digest().subarray(0, 8);
  plain.fill(0);
  keys.fill(0);
  return b64(Buffer.concat([encrypted, mac]));
}

/** A random pickle key for one start (the pickle lives only until the Rust crypto has imported it). */
export const randomPickleKey = () => randomBytes(32).toString('base64');

/**
 * The one-time key ids in a `/keys/upload` body, as numbers (vodozemac writes a key id as the
 * unpadded base64 of its 64-bit big-endian counter). Fallback keys count apart and replace each other.
 */
export function uploadedKeyIds(body: unknown): number[] {
  const ids: number[] = [];
  for (const name of Object.keys((body as { one_time_keys?: Record<string, unknown> } | null)?.one_time_keys ?? {})) {
    const raw = unb64(name.slice(name.indexOf(':') + 1));
    if (raw.length === 0 || raw.length > 8) continue;
    let n = 0;
    for (const byte of raw) n = n * 256 + byte;
    if (Number.isSafeInteger(n)) ids.push(n);
  }
  return ids;
}
