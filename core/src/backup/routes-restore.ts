/**
 * Staged restore routes (administrators only): `POST /api/backup/prepare-restore` (multipart
 * `file`, query `conflict_mode`), `GET, DELETE /api/backup/pending-restore`,
 * `POST /api/backup/apply-restart` (same-origin only; needs a supervisor).
 */

import multipart from '@fastify/multipart';
import Type from 'typebox';
import { caller, requireAdmin } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import { conflict, forbidden, notFound } from '../http/problem.ts';
import { accepted, created, errors, noContent, ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import { checkParsed } from './envelope.ts';
import { sameOriginProblem } from './origin.ts';
import { CONFLICT_MODES, type ConflictMode } from './planner.ts';
import { planRestore } from './restore.ts';
import { cancelPending, type PendingRestore, pendingView, readPending, writePending } from './staged.ts';
import { MAX_UPLOAD_BYTES, readBackupUpload } from './upload.ts';
import { RestartingView, StagedRestoreView } from './views.ts';

const tags = ['backup'];
const PrepareQuery = Type.Object({
  conflict_mode: Type.Optional(Type.Union(CONFLICT_MODES.map((m) => Type.Literal(m)))),
});

export async function restoreRoutes(app: App, core: Core): Promise<void> {
  const onRequest = requireAdmin(core);
  const log = core.logs.get('backup');

  // Multipart parsing exists only inside this scope, for the upload route.
  await app.register(async (scope: App) => {
    await scope.register(multipart, {
      limits: { fileSize: MAX_UPLOAD_BYTES, files: 1, fields: 4, parts: 5, fieldSize: 1024 },
    });
    scope.post(
      '/api/backup/prepare-restore',
      {
        schema: {
          tags,
          querystring: PrepareQuery,
          consumes: ['multipart/form-data'],
          response: {
            ...created('The restore is staged: its plan summary; it is applied at the next start.', StagedRestoreView),
            ...errors(
              [
                409,
                'A restore is staged already, or the backup conflicts with the data here ' +
                  '(`restore_conflict`, `no_admin_left`).',
              ],
              [413, 'The file is over the upload limit (`backup_too_large`).'],
              [415, 'Not a multipart/form-data upload with a `file` field.'],
              [422, 'The file is not a backup this service can read, or the query is invalid.'],
            ),
          },
        },
        onRequest,
      },
      async (req, reply) => {
        const mode: ConflictMode = req.query.conflict_mode ?? 'fail';
        const upload = await readBackupUpload(req);
        const { envelope, migratedFrom } = checkParsed(JSON.parse(upload.text), core.version);
        if (readPending(core))
          throw conflict(
            'A restore is already staged; cancel it (DELETE /api/backup/pending-restore) before staging another.',
            'restore_already_staged',
          );
        // Planned now against the running configuration: a refusal (422, 409) comes before anything is staged.
        const plan = await planRestore(core, envelope, mode);
        const pending: PendingRestore = {
          state: 'staged',
          staged_at: core.clock.now().toISOString(),
          staged_by: caller(req).id,
          conflict_mode: mode,
          source: { filename: upload.filename, size_bytes: upload.size_bytes, sha256: upload.sha256 },
          backup: {
            format_version: envelope.format_version,
            service_version: envelope.service_version,
            created_at: envelope.created_at,
            secrets_mode: envelope.secrets_mode,
            ...(migratedFrom ? { migrated_from: migratedFrom } : {}),
          },
          summary: plan.summary,
          envelope,
        };
        writePending(core, pending);
        log.info({ conflict_mode: mode, source: pending.source, backup: pending.backup }, 'restore staged');
        reply.code(201);
        return pendingView(pending);
      },
    );
  });

  // Nothing staged is a normal state, not an error: 204 with no body (earlier versions answered 404).
  app.get(
    '/api/backup/pending-restore',
    {
      schema: {
        tags,
        summary: 'Show the staged restore',
        description: 'The staged restore with its plan summary; 204 (no body) when nothing is staged.',
        response: {
          ...ok('The staged restore with its plan summary.', StagedRestoreView),
          ...noContent('Nothing is staged.'),
        },
      },
      onRequest,
    },
    async (_req, reply) => {
      const p = readPending(core);
      if (!p) return reply.code(204).send();
      return pendingView(p);
    },
  );

  app.delete(
    '/api/backup/pending-restore',
    {
      schema: {
        tags,
        response: { ...noContent('The staged restore is cancelled.'), ...errors([404, 'Nothing is staged.']) },
      },
      onRequest,
    },
    async (req, reply) => {
      if (!cancelPending(core)) throw notFound('Staged restore');
      log.info({ by: caller(req).id }, 'staged restore cancelled');
      return reply.code(204).send();
    },
  );

  let restarting = false;
  app.post(
    '/api/backup/apply-restart',
    {
      schema: {
        tags,
        response: {
          ...accepted('Restarting to apply the staged restore (`state: restarting`).', RestartingView),
          ...errors(
            [403, 'Not an administrator, or not a same-origin request.'],
            [404, 'Nothing is staged.'],
            [409, 'The service is not supervised, so it will not restart itself (`not_supervised`).'],
          ),
        },
      },
      onRequest,
    },
    async (req, reply) => {
      const problem = sameOriginProblem(req, {
        publicUrl: core.config.publicUrl,
        corsOrigins: core.config.corsOrigins,
        host: core.config.host,
        port: () => {
          const a = app.server.address();
          return a && typeof a === 'object' ? a.port : core.config.port;
        },
      });
      if (problem) throw forbidden(`${problem} apply-restart accepts only same-origin requests.`);
      if (!readPending(core)) throw notFound('Staged restore');
      const restart = core.services.get('requestRestart');
      if (!core.supervised || typeof restart !== 'function') {
        throw conflict(
          'Herald is not running under a supervisor that would start it again, so it will not restart ' +
            'itself; the restore stays staged. Restart the service yourself (it applies the restore at ' +
            'boot), or run it supervised.',
          'not_supervised',
        );
      }
      if (!restarting) {
        restarting = true;
        log.info({ by: caller(req).id }, 'restarting to apply the staged restore');
        // Only once the answer is on its way: the restart closes the server.
        reply.raw.once('finish', () => setImmediate(() => (restart as () => void)()));
      }
      reply.code(202);
      return { state: 'restarting' as const };
    },
  );
}
