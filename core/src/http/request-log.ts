import { type FastifyInstance, type FastifyReply, type FastifyRequest, LogController } from 'fastify';
import type { CredentialPaths } from '../logging/credential-paths.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Path parameters that are credentials (a webhook token, a bot's path id), e.g.
     * `config: { credentialParams: ['token'] }`: their segments are masked in every logged URL.
     */
    credentialParams?: string[];
  }
}

/**
 * Fastify's request lines, rewritten: one line when the response is done, carrying method, URL,
 * status, response time (ms) and request id, where Fastify's own second line had only the status.
 * The `incoming request` line moves to DEBUG (it marks requests that never finish). URLs are
 * masked by the logger's `req` serializer (credential path segments, secret query values).
 */
class RequestLog extends LogController {
  private paths: CredentialPaths;
  private enabled: (level: 'info' | 'error') => boolean;
  constructor(paths: CredentialPaths, enabled: (level: 'info' | 'error') => boolean) {
    super();
    this.paths = paths;
    this.enabled = enabled;
  }

  override incomingRequest(request: FastifyRequest): void {
    request.log.debug({ req: request }, 'incoming request');
  }

  override requestCompleted(error: Error | null | undefined, request: FastifyRequest, reply: FastifyReply): void {
    // Below the level (a relay's WARNING), the line and its masked URL are not worked out for every request.
    if (!this.enabled(error ? 'error' : 'info')) return;
    const ms = Math.round(reply.elapsedTime * 10) / 10;
    // The message repeats the essentials for the text format, where the fields are not shown.
    const line = { req: request, res: reply, responseTime: ms, ...(error ? { err: error } : {}) };
    const msg = `${request.method} ${this.paths.mask(request.url)} ${reply.statusCode} ${ms} ms`;
    if (error) request.log.error(line, msg);
    else request.log.info(line, msg);
  }
}

/** `enabled` answers whether the request logger writes a level (the service's logger: `isLevelEnabled`). */
export const requestLog = (paths: CredentialPaths, enabled: (level: 'info' | 'error') => boolean): LogController =>
  new RequestLog(paths, enabled);

/** Collects the routes' `credentialParams` into `paths` as they are declared (every feature's routes included). */
export function collectCredentialPaths(app: FastifyInstance<any, any, any, any, any>, paths: CredentialPaths): void {
  app.addHook('onRoute', (route) => {
    const params = route.config?.credentialParams;
    if (params?.length) paths.add(route.url ?? route.path, params);
  });
}
