/**
 * The two client-server API calls this target needs, and what their errors mean.
 * Matrix errors are JSON `{errcode, error}`; rate limits add `retry_after_ms`.
 */
import {
  OUTBOUND_REFUSED, AuthFailedError, ConfigError, NotReadyError, PermanentSendError, RateLimitedError, RetryableSendError, errorCode,
} from '@herald/plugin-api';
import type { OutboundHttp, OutboundResponse } from '@herald/plugin-api';
import type { NoticeContent } from './content.ts';

/** Delay used when a 429 names none. */
export const DEFAULT_RETRY_AFTER_MS = 5_000;

export interface MatrixError { status: number; errcode?: string; error: string; retryAfterMs?: number }

export function parseError(res: OutboundResponse): MatrixError {
  let body: { errcode?: unknown; error?: unknown; retry_after_ms?: unknown } | undefined;
  try { body = res.json(); } catch { body = undefined; }
  const errcode = typeof body?.errcode === 'string' ? body.errcode : undefined;
  const error = typeof body?.error === 'string' ? body.error : res.text().replace(/\s+/g, ' ').trim().slice(0, 200) || `HTTP ${res.status}`;
  let retryAfterMs = typeof body?.retry_after_ms === 'number' ? body.retry_after_ms : undefined;
  // Newer homeservers also send Retry-After (seconds); the body field wins when both are there.
  const header = Number(res.headers['retry-after']);
  if (retryAfterMs === undefined && Number.isFinite(header) && header >= 0) retryAfterMs = header * 1000;
  return { status: res.status, errcode, error, retryAfterMs };
}

const describe = (e: MatrixError) => `homeserver answered ${e.status}${e.errcode ? ` ${e.errcode}` : ''}: ${e.error}`;
const isAuthError = (e: MatrixError) => e.status === 401 || e.errcode === 'M_UNKNOWN_TOKEN' || e.errcode === 'M_MISSING_TOKEN';
/** The token was refused; the HTTP status goes along so the failure metric records it. */
const tokenRejected = (e: MatrixError) =>
  new AuthFailedError(`${describe(e)}; the access token was rejected (logged out or revoked)`, { statusCode: e.status });

/** The error to throw for a failed send. */
export function sendFailure(e: MatrixError): Error {
  if (e.status === 429 || e.errcode === 'M_LIMIT_EXCEEDED') {
    return new RateLimitedError(describe(e), Math.ceil(e.retryAfterMs ?? DEFAULT_RETRY_AFTER_MS), 429);
  }
  if (isAuthError(e)) return tokenRejected(e);
  if (e.status >= 500 || e.status === 408) return new RetryableSendError(describe(e), e.status);
  if (e.errcode === 'M_FORBIDDEN') return new PermanentSendError(`${describe(e)}; invite the account to the room and join it`, e.status);
  return new PermanentSendError(describe(e), e.status);
}

/** The error to throw when the homeserver gave no HTTP answer. */
export function transportFailure(err: unknown): Error {
  const message = err instanceof Error ? err.message : String(err);
  if (errorCode(err) === OUTBOUND_REFUSED) return new PermanentSendError(`Matrix homeserver: ${message}`, 0, { cause: err });
  return new RetryableSendError(`Matrix homeserver unreachable: ${message}`, 0, { cause: err });
}

export interface MatrixClient {
  /** `GET /account/whoami`: the user id the token belongs to. Throws lifecycle errors (start semantics). */
  whoami(signal?: AbortSignal): Promise<string>;
  /** `PUT /rooms/{roomId}/send/m.room.message/{txnId}`: the event id. Throws send errors. */
  sendMessage(roomId: string, txnId: string, content: NoticeContent, signal: AbortSignal): Promise<string>;
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
        if (errorCode(err) === OUTBOUND_REFUSED) throw new ConfigError(`homeserver_url: ${(err as Error).message}`, { cause: err });
        throw new NotReadyError(`Matrix homeserver unreachable: ${(err as Error).message}`, { cause: err });
      }
      if (res.status === 200) {
        const userId = (() => { try { return res.json<{ user_id?: unknown }>().user_id; } catch { return undefined; } })();
        if (typeof userId === 'string') return userId;
        throw new ConfigError('homeserver_url answered whoami without a user_id; is it a Matrix homeserver?');
      }
      const e = parseError(res);
      if (isAuthError(e)) throw tokenRejected(e);
      if (e.status >= 500 || e.status === 429 || e.status === 408) throw new NotReadyError(describe(e));
      throw new ConfigError(`${describe(e)}; check homeserver_url (the client-server API base, e.g. https://matrix.example.org)`);
    },
    async sendMessage(roomId, txnId, content, signal) {
      const url = `${base}/rooms/${encodeURIComponent(roomId)}/send/m.room.message/${encodeURIComponent(txnId)}`;
      let res: OutboundResponse;
      try {
        res = await http.request(url, { method: 'PUT', headers, json: content, signal, maxRedirects: 0, maxResponseBytes: 64 * 1024 });
      } catch (err) {
        throw transportFailure(err);
      }
      if (res.status !== 200) throw sendFailure(parseError(res));
      const eventId = (() => { try { return res.json<{ event_id?: unknown }>().event_id; } catch { return undefined; } })();
      // A 200 means the event exists even if a proxy mangled the body; report it delivered without an id.
      return typeof eventId === 'string' ? eventId : '';
    },
  };
}
