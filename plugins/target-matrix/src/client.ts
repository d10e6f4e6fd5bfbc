/**
 * The client-server API calls the target makes itself (whoami, the room's encryption state, the
 * send, its device's published keys), and what their errors mean.
 * Matrix errors are JSON `{errcode, error}`; rate limits add `retry_after_ms`.
 */

import type { OutboundHttp, OutboundResponse } from '@herald/plugin-api';
import {
  AuthFailedError,
  ConfigError,
  errorCode,
  NotReadyError,
  OUTBOUND_REFUSED,
  PermanentSendError,
  RateLimitedError,
  RetryableSendError,
} from '@herald/plugin-api';

/** Delay used when a 429 names none. */
export const DEFAULT_RETRY_AFTER_MS = 5_000;

export interface MatrixError {
  status: number;
  errcode?: string;
  error: string;
  retryAfterMs?: number;
}

export function parseError(res: OutboundResponse): MatrixError {
  let body: { errcode?: unknown; error?: unknown; retry_after_ms?: unknown } | undefined;
  try {
    body = res.json();
  } catch {
    body = undefined;
  }
  const errcode = typeof body?.errcode === 'string' ? body.errcode : undefined;
  const error =
    typeof body?.error === 'string'
      ? body.error
      : res.text().replace(/\s+/g, ' ').trim().slice(0, 200) || `HTTP ${res.status}`;
  let retryAfterMs = typeof body?.retry_after_ms === 'number' ? body.retry_after_ms : undefined;
  // Newer homeservers also send Retry-After (seconds); the body field wins when both are there.
  const header = Number(res.headers['retry-after']);
  if (retryAfterMs === undefined && Number.isFinite(header) && header >= 0) retryAfterMs = header * 1000;
  return { status: res.status, errcode, error, retryAfterMs };
}

const describe = (e: MatrixError) => `homeserver answered ${e.status}${e.errcode ? ` ${e.errcode}` : ''}: ${e.error}`;
const isAuthError = (e: MatrixError) =>
  e.status === 401 || e.errcode === 'M_UNKNOWN_TOKEN' || e.errcode === 'M_MISSING_TOKEN';
/** The token was refused; the HTTP status goes along so the failure metric records it. */
const tokenRejected = (e: MatrixError) =>
  new AuthFailedError(`${describe(e)}; the access token was rejected (logged out or revoked)`, {
    statusCode: e.status,
  });

/** The error to throw for a failed send. */
export function sendFailure(e: MatrixError): Error {
  if (e.status === 429 || e.errcode === 'M_LIMIT_EXCEEDED') {
    return new RateLimitedError(describe(e), Math.ceil(e.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS), 429);
  }
  if (isAuthError(e)) return tokenRejected(e);
  if (e.status >= 500 || e.status === 408) return new RetryableSendError(describe(e), e.status);
  if (e.errcode === 'M_FORBIDDEN')
    return new PermanentSendError(`${describe(e)}; invite the account to the room and join it`, e.status);
  return new PermanentSendError(describe(e), e.status);
}

/** The error to throw when the homeserver gave no HTTP answer. */
export function transportFailure(err: unknown): Error {
  const message = err instanceof Error ? err.message : String(err);
  if (errorCode(err) === OUTBOUND_REFUSED)
    return new PermanentSendError(`Matrix homeserver: ${message}`, 0, { cause: err });
  return new RetryableSendError(`Matrix homeserver unreachable: ${message}`, 0, { cause: err });
}

export interface Whoami {
  userId: string;
  deviceId?: string;
}

export interface MatrixClient {
  /** `GET /account/whoami`: the user (and device) the token belongs to. Throws lifecycle errors (start semantics). */
  whoami(signal?: AbortSignal): Promise<Whoami>;
  /**
   * `GET /rooms/{roomId}/state/m.room.encryption`: the room's encryption algorithm, or undefined
   * for a room without encryption (404). Throws send errors (403 when the account is not in the room).
   */
  roomEncryption(roomId: string, signal: AbortSignal): Promise<string | undefined>;
  /**
   * `PUT /rooms/{roomId}/send/{type}/{txnId}` (type `m.room.message` unless given): the event id. Throws send errors.
   */
  sendMessage(roomId: string, txnId: string, content: object, signal: AbortSignal, type?: string): Promise<string>;
  /**
   * `POST /keys/query` for one device: its published keys (`keys` of the device keys object), or undefined when it has
   * none. Throws lifecycle errors.
   */
  deviceKeys(userId: string, deviceId: string, signal?: AbortSignal): Promise<Record<string, string> | undefined>;
}

export function createMatrixClient(http: OutboundHttp, homeserverUrl: string, accessToken: string): MatrixClient {
  const base = `${homeserverUrl.replace(/\/+$/, '')}/_matrix/client/v3`;
  // The token goes in the header only (never the query string, where proxies log it).
  const headers = { authorization: `Bearer ${accessToken}`, accept: 'application/json' };
  return {
    async whoami(signal) {
      let res: OutboundResponse;
      try {
        res = await http.request(`${base}/account/whoami`, { headers, signal, maxResponseBytes: 64 * 1024 });
      } catch (err) {
        if (errorCode(err) === OUTBOUND_REFUSED)
          throw new ConfigError(`homeserver_url: ${(err as Error).message}`, { cause: err });
        throw new NotReadyError(`Matrix homeserver unreachable: ${(err as Error).message}`, { cause: err });
      }
      if (res.status === 200) {
        const body = (() => {
          try {
            return res.json<{ user_id?: unknown; device_id?: unknown }>();
          } catch {
            return undefined;
          }
        })();
        if (typeof body?.user_id === 'string')
          return {
            userId: body.user_id,
            deviceId: typeof body.device_id === 'string' && body.device_id ? body.device_id : undefined,
          };
        throw new ConfigError('homeserver_url answered whoami without a user_id; is it a Matrix homeserver?');
      }
      const e = parseError(res);
      if (isAuthError(e)) throw tokenRejected(e);
      if (e.status >= 500 || e.status === 429 || e.status === 408) throw new NotReadyError(describe(e));
      throw new ConfigError(
        `${describe(e)}; check homeserver_url (the client-server API base, e.g. https://matrix.example.org)`,
      );
    },
    async roomEncryption(roomId, signal) {
      let res: OutboundResponse;
      try {
        res = await http.request(`${base}/rooms/${encodeURIComponent(roomId)}/state/m.room.encryption`, {
          headers,
          signal,
          maxRedirects: 0,
          maxResponseBytes: 64 * 1024,
        });
      } catch (err) {
        throw transportFailure(err);
      }
      if (res.status === 404) {
        const e = parseError(res);
        // M_NOT_FOUND: no such state event. Anything else (M_UNRECOGNIZED from a proxy) is not an answer.
        if (e.errcode === 'M_NOT_FOUND') return undefined;
        throw sendFailure(e);
      }
      if (res.status !== 200) throw sendFailure(parseError(res));
      const algorithm = (() => {
        try {
          return res.json<{ algorithm?: unknown }>().algorithm;
        } catch {
          return undefined;
        }
      })();
      // A state event without an algorithm (redacted) still marks the room encrypted for clients.
      return typeof algorithm === 'string' ? algorithm : '';
    },
    async sendMessage(roomId, txnId, content, signal, type = 'm.room.message') {
      const url =
        `${base}/rooms/${encodeURIComponent(roomId)}` +
        `/send/${encodeURIComponent(type)}/${encodeURIComponent(txnId)}`;
      let res: OutboundResponse;
      try {
        res = await http.request(url, {
          method: 'PUT',
          headers,
          json: content,
          signal,
          maxRedirects: 0,
          maxResponseBytes: 64 * 1024,
        });
      } catch (err) {
        throw transportFailure(err);
      }
      if (res.status !== 200) throw sendFailure(parseError(res));
      const eventId = (() => {
        try {
          return res.json<{ event_id?: unknown }>().event_id;
        } catch {
          return undefined;
        }
      })();
      // A 200 means the event exists even if a proxy mangled the body; report it delivered without an id.
      return typeof eventId === 'string' ? eventId : '';
    },
    async deviceKeys(userId, deviceId, signal) {
      let res: OutboundResponse;
      try {
        res = await http.request(`${base}/keys/query`, {
          method: 'POST',
          headers,
          json: { device_keys: { [userId]: [deviceId] } },
          signal,
          maxRedirects: 0,
          maxResponseBytes: 1024 * 1024,
        });
      } catch (err) {
        throw new NotReadyError(`Matrix homeserver unreachable: ${(err as Error).message}`, { cause: err });
      }
      if (res.status !== 200) {
        const e = parseError(res);
        if (isAuthError(e)) throw tokenRejected(e);
        throw new NotReadyError(`${describe(e)} (asking for the device's keys)`);
      }
      const keys = (() => {
        try {
          return res.json<{ device_keys?: Record<string, Record<string, { keys?: unknown }>> }>().device_keys?.[
            userId
          ]?.[deviceId]?.keys;
        } catch {
          return undefined;
        }
      })();
      return keys && typeof keys === 'object' ? (keys as Record<string, string>) : undefined;
    },
  };
}
