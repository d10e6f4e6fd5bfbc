import { v7 } from 'uuid';
import crypto from 'node:crypto';

/** Time-ordered UUIDv7, so `before` cursors work on ids. */
export const newId = (): string => v7();
/** 32 bytes of randomness, URL-safe: for webhook tokens and path ids. */
export const randomToken = (bytes = 32): string => crypto.randomBytes(bytes).toString('base64url');
export const nowIso = (): string => new Date().toISOString();
