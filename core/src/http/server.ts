import cookie from '@fastify/cookie';
import cors from '@fastify/cors';
import swagger from '@fastify/swagger';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import { guardsFirst } from '../auth/guard.ts';
import type { Config } from '../config/config.ts';
import type { CredentialPaths } from '../logging/credential-paths.ts';
import type { Logger } from '../logging/logger.ts';
import { inList, parseCidrList } from '../net/cidr.ts';
import { jsonTooDeep, MAX_JSON_DEPTH } from '../plugin-api/index.ts';
import { buildSerializer, documentErrors } from './openapi.ts';
import { fieldSentences, HttpError, problem } from './problem.ts';
import { collectCredentialPaths, requestLog } from './request-log.ts';
import { Problem } from './schemas.ts';
import { registerSecurityHeaders } from './security-headers.ts';
import { schemaFieldErrors, validatorCompiler } from './validation.ts';

export type App = FastifyInstance<any, any, any, Logger, TypeBoxTypeProvider>;

/**
 * Builds the Fastify instance: problem details, CORS, security headers, cookies, OpenAPI, trusted
 * proxies, and one log line per request, with the routes' `credentialParams` joining `credentialPaths`.
 */
export async function createServer(
  config: Config,
  log: Logger,
  version: string,
  credentialPaths: CredentialPaths,
): Promise<App> {
  const trusted = config.forwardedAllowIps.includes('*') ? undefined : parseCidrList(config.forwardedAllowIps);
  const app = Fastify({
    loggerInstance: log,
    bodyLimit: 1024 * 1024,
    // Forwarded-for/proto are honoured only when the direct peer is a configured proxy.
    trustProxy: (address: string) => (trusted ? inList(trusted, address) : true),
    ajv: undefined,
    return503OnClosing: true,
    forceCloseConnections: false,
    logController: requestLog(credentialPaths, (level) => log.isLevelEnabled(level)),
    schemaController: { compilersFactory: { buildSerializer } },
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  app.setValidatorCompiler(validatorCompiler);
  collectCredentialPaths(app, credentialPaths);
  // Every route authenticates and authorizes before its body is parsed and validated.
  app.addHook('onRoute', guardsFirst);
  // Every route's OpenAPI answers list the errors its shape and guards can give (problem details).
  app.addHook('onRoute', documentErrors);
  app.addSchema(Problem);

  app.addContentTypeParser('application/json', { parseAs: 'buffer' }, (_req, body: Buffer, done) => {
    if (body.length === 0) return done(null, undefined);
    // Bounded before parsed: what walks a parsed body (validation, redaction, logging) recurses.
    if (jsonTooDeep(body))
      return done(
        new HttpError(400, 'json_too_deep', `The JSON body is nested deeper than ${MAX_JSON_DEPTH} levels.`, {
          params: { limit: MAX_JSON_DEPTH },
        }),
        undefined,
      );
    try {
      done(null, JSON.parse(body.toString('utf8')));
    } catch {
      done(new HttpError(400, 'malformed_json', 'The request body is not valid JSON.'), undefined);
    }
  });

  app.setErrorHandler((err: FastifyError & { validation?: any[]; validationContext?: string }, req, reply) => {
    if (err instanceof HttpError) {
      if (err.headers) reply.headers(err.headers);
      return reply
        .code(err.status)
        .type('application/problem+json')
        .send(problem(err.status, err.code, err.message, err.errors, err.params));
    }
    if (err.validation) {
      // Each field's problem keeps its keyword and params (a client words them itself); the detail says them in
      // sentences.
      const errors = schemaFieldErrors(err.validation, err.validationContext ?? 'body');
      const where =
        err.validationContext === 'querystring'
          ? 'query string'
          : err.validationContext === 'params'
            ? 'path'
            : 'request body';
      const status = err.validationContext === 'params' ? 404 : 422;
      if (status === 404)
        return reply
          .code(404)
          .type('application/problem+json')
          .send(problem(404, 'not_found', 'Resource was not found.'));
      return reply
        .code(422)
        .type('application/problem+json')
        .send(problem(422, 'validation_failed', `The ${where} is invalid. ${fieldSentences(errors)}`, errors));
    }
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 600 ? err.statusCode : 500;
    const byCode: Record<string, [number, string, string]> = {
      FST_ERR_CTP_BODY_TOO_LARGE: [413, 'body_too_large', 'The request body is larger than this endpoint accepts.'],
      FST_ERR_CTP_INVALID_MEDIA_TYPE: [
        415,
        'unsupported_media_type',
        'This content type is not accepted here; send JSON.',
      ],
      FST_ERR_CTP_EMPTY_JSON_BODY: [400, 'empty_body', 'The JSON body is empty.'],
      FST_ERR_CTP_INVALID_JSON_BODY: [400, 'malformed_json', 'The request body is not valid JSON.'],
      FST_ERR_RATE_LIMIT: [429, 'rate_limited', 'Too many requests.'],
    };
    const mapped = byCode[err.code];
    if (mapped)
      return reply
        .code(mapped[0])
        .type('application/problem+json')
        .send(problem(mapped[0], mapped[1], mapped[2]));
    if (status >= 500) {
      req.log.error({ err }, 'request failed');
      return reply
        .code(500)
        .type('application/problem+json')
        .send(problem(500, 'internal', 'Something went wrong on our side; the error was logged.'));
    }
    return reply
      .code(status)
      .type('application/problem+json')
      .send(problem(status, (err.code ?? 'error').toLowerCase(), err.message));
  });

  app.setNotFoundHandler((req, reply) => {
    reply
      .code(404)
      .type('application/problem+json')
      .send(problem(404, 'not_found', `No route for ${req.method} ${req.url.split('?')[0]}.`));
  });

  registerSecurityHeaders(app, {
    contentSecurityPolicy: {
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'", "'unsafe-inline'"],
        imgSrc: ["'self'", 'data:'],
        connectSrc: ["'self'"],
        objectSrc: ["'none'"],
        frameAncestors: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
      },
    },
    crossOriginEmbedderPolicy: false,
  });
  await app.register(cors, {
    origin: config.corsOrigins,
    credentials: true,
    methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'],
    allowedHeaders: ['Content-Type', 'Authorization'],
    exposedHeaders: ['Retry-After'],
  });
  await app.register(cookie);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Herald API',
        version,
        description: 'Notification relay and AI assistant. Errors are RFC 9457 problem details.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } } },
      security: [{ bearer: [] }],
    },
    // Shared schemas keep their own name: every error answer points at #/components/schemas/Problem.
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (typeof json.$id === 'string' ? json.$id : `def-${i}`),
    },
  });
  app.get('/api/docs/json', { schema: { hide: true } }, async () => app.swagger());
  return app;
}
