import crypto from 'node:crypto';

const HEX = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, '0'));
/** Random bytes drawn in blocks: one system call per ~600 ids instead of one per id. */
const POOL = Buffer.alloc(4096);
let poolAt = POOL.length;
function random(n: number): number {
  if (poolAt + n > POOL.length) {
    crypto.randomFillSync(POOL);
    poolAt = 0;
  }
  const at = poolAt;
  poolAt += n;
  return at;
}

let lastMs = -1;
let seq = 0;

/**
 * Time-ordered UUIDv7 (RFC 9562), so `before` cursors work on ids and rows sort by creation. The 48-bit
 * millisecond timestamp is followed by a 32-bit counter (method 1 of the RFC, section 6.2) that
 * starts at a random value each millisecond and counts up within it, so ids made in one process are
 * strictly increasing even within a millisecond or when the clock steps back; 42 random bits follow.
 */
export function newId(): string {
  let ms = Date.now();
  if (ms > lastMs) {
    const at = random(4);
    // The top bit left clear: the counter has 2^31 steps of room before it carries into the next millisecond.
    seq = POOL.readUInt32BE(at) >>> 1;
    lastMs = ms;
  } else {
    seq = (seq + 1) >>> 0;
    if (seq === 0) lastMs++;
    ms = lastMs;
  }
  const r = random(6);
  const hi = Math.floor(ms / 0x1000000);
  const lo = ms % 0x1000000;
  return (
    HEX[(hi >>> 16) & 0xff]! +
    HEX[(hi >>> 8) & 0xff]! +
    HEX[hi & 0xff]! +
    HEX[(lo >>> 16) & 0xff]! +
    '-' +
    HEX[(lo >>> 8) & 0xff]! +
    HEX[lo & 0xff]! +
    '-' +
    HEX[0x70 | ((seq >>> 28) & 0x0f)]! +
    HEX[(seq >>> 20) & 0xff]! +
    '-' +
    HEX[0x80 | ((seq >>> 14) & 0x3f)]! +
    HEX[(seq >>> 6) & 0xff]! +
    '-' +
    HEX[((seq & 0x3f) << 2) | (POOL[r]! & 0x03)]! +
    HEX[POOL[r + 1]!]! +
    HEX[POOL[r + 2]!]! +
    HEX[POOL[r + 3]!]! +
    HEX[POOL[r + 4]!]! +
    HEX[POOL[r + 5]!]!
  );
}

/** 32 bytes of randomness, URL-safe: for webhook tokens and path ids. */
export const randomToken = (bytes = 32): string => crypto.randomBytes(bytes).toString('base64url');
export const nowIso = (): string => new Date().toISOString();
