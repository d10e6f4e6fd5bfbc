/**
 * Secret keys that must never run a real service: placeholders from docs and examples, and values
 * printed in this project's README. Matching is case-insensitive on the trimmed value.
 */
export const KNOWN_DEV_SECRET_KEYS: readonly string[] = [
  'changeme',
  'change-me',
  'change_me',
  'secret',
  'password',
  'your-secret-key',
  'your_secret_key',
  'please-change-me-to-a-long-random-string',
  'replace-me-with-32-random-bytes-of-hex',
  'development-secret-key-do-not-use-in-production',
  'dev-secret-key-for-local-development-only',
  'herald-development-secret-key-not-for-production',
  '<service_secret_key>',
  '<secret_key>',
  '<32 random bytes>',
  'xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx',
  '00000000000000000000000000000000',
  '0000000000000000000000000000000000000000000000000000000000000000',
  'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  '12345678901234567890123456789012',
];

const PLACEHOLDER_PATTERNS: RegExp[] = [
  /^<.*>$/,
  /^\$\{.*\}$/,
  /change.?me/i,
  /replace.?me/i,
  /placeholder/i,
  /your.?secret/i,
  /do.?not.?use/i,
  /example/i,
  /^(.)\1+$/,
  /not.?for.?production/i,
];

/** Why this key is refused, or undefined when acceptable. */
export function weakSecretKeyReason(key: string): string | undefined {
  const trimmed = key.trim();
  if (Buffer.byteLength(trimmed, 'utf8') < 32)
    return 'SERVICE_SECRET_KEY must be at least 32 bytes (generate one with: openssl rand -hex 32)';
  if (KNOWN_DEV_SECRET_KEYS.includes(trimmed.toLowerCase()))
    return 'SERVICE_SECRET_KEY is a known development value; generate a random one (openssl rand -hex 32)';
  if (PLACEHOLDER_PATTERNS.some((p) => p.test(trimmed)))
    return 'SERVICE_SECRET_KEY looks like a placeholder; generate a random one (openssl rand -hex 32)';
  if (new Set(trimmed).size < 8)
    return 'SERVICE_SECRET_KEY has too little variety to be random; generate one with: openssl rand -hex 32';
  return undefined;
}
