/**
 * Backup routes (administrators only): `POST, GET /api/backup/files`, `GET, DELETE /api/backup/files/{filename}`,
 * `GET /api/backup/export`, `GET, PUT /api/backup/scheduled`. The restore routes are in `routes-restore.ts`.
 */
import fs from 'node:fs';
import Type, { type Static } from 'typebox';
import { requireAdmin } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import { notFound, unprocessable } from '../http/problem.ts';
import { created, file, noContent, ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import { exportEnvelope, listBackups, stamp, storedBackupPath, writeBackup } from './files.ts';
import { backupSettings } from './scheduled.ts';
import { SecretsMode, type SecretsModeT } from './schema.ts';
import { BACKUP_SETTING_KEYS, settingProblem } from './settings-rules.ts';
import { BackupFileList, BackupWritten, Schedule } from './views.ts';

const tags = ['backup'];
const ModeQuery = Type.Object({ secrets_mode: Type.Optional(SecretsMode) });
const ScheduleBody = Type.Object(
  Object.fromEntries(BACKUP_SETTING_KEYS.map((k) => [k, Type.Optional(Type.String({ maxLength: 20 }))])),
  { additionalProperties: false, minProperties: 1 },
);

export async function backupRoutes(app: App, core: Core): Promise<void> {
  const onRequest = requireAdmin(core);
  const mode = (q: Static<typeof ModeQuery>): SecretsModeT => q.secrets_mode ?? 'exclude';

  app.post(
    '/api/backup/files',
    {
      schema: {
        tags,
        querystring: ModeQuery,
        response: {
          ...created('The backup file written to the backup folder.', BackupWritten),
        },
      },
      onRequest,
    },
    async (req, reply) => {
      const file = await writeBackup(core, mode(req.query), 'manual');
      req.log.info({ file: file.filename, secrets_mode: file.secrets_mode }, 'backup written');
      reply.code(201);
      return file;
    },
  );

  app.get(
    '/api/backup/files',
    {
      schema: {
        tags,
        response: {
          ...ok('The stored backup files (`files`), newest first.', BackupFileList),
        },
      },
      onRequest,
    },
    async () => ({ files: listBackups(core) }),
  );

  app.get(
    '/api/backup/files/:filename',
    {
      schema: {
        tags,
        params: Type.Object({ filename: Type.String({ maxLength: 200 }) }),
        response: { ...file('The backup file, as an attachment.', 'application/json') },
      },
      onRequest,
    },
    async (req, reply) => {
      const name = req.params.filename;
      const file = storedBackupPath(core, name);
      if (!file) throw notFound('Backup file');
      return reply
        .type('application/json')
        .header('content-disposition', `attachment; filename="${name}"`)
        .header('cache-control', 'no-store')
        .send(fs.createReadStream(file));
    },
  );

  app.delete(
    '/api/backup/files/:filename',
    {
      schema: {
        tags,
        summary: 'Delete a stored backup file',
        description: 'Only a name from the listing (`backup-<stamp>.json`) is ever removed; any other name is a 404.',
        params: Type.Object({ filename: Type.String({ maxLength: 200 }) }),
        response: { ...noContent('Deleted.') },
      },
      onRequest,
    },
    async (req, reply) => {
      const name = req.params.filename;
      // storedBackupPath accepts only the exact backup name shape found in the listing: no path can escape the
      // directory.
      const file = storedBackupPath(core, name);
      if (!file) throw notFound('Backup file');
      try {
        fs.rmSync(file);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw notFound('Backup file');
        throw err;
      }
      req.log.info({ file: name }, 'backup deleted');
      return reply.code(204).send();
    },
  );

  app.get(
    '/api/backup/export',
    {
      schema: {
        tags,
        querystring: ModeQuery,
        response: { ...file('A backup made now, as an attachment (nothing is stored).', 'application/json') },
      },
      onRequest,
    },
    async (req, reply) => {
      const at = core.clock.now();
      const envelope = await exportEnvelope(core, mode(req.query), 'manual', at);
      return reply
        .type('application/json')
        .header('content-disposition', `attachment; filename="backup-${stamp(at)}.json"`)
        .header('cache-control', 'no-store')
        .send(`${JSON.stringify(envelope, null, 2)}\n`);
    },
  );

  app.get(
    '/api/backup/scheduled',
    { schema: { tags, response: { ...ok('The scheduled backup settings.', Schedule) } }, onRequest },
    async () => backupSettings(core),
  );

  app.put(
    '/api/backup/scheduled',
    {
      schema: { tags, body: ScheduleBody, response: { ...ok('The scheduled backup settings as changed.', Schedule) } },
      onRequest,
    },
    async (req) => {
      const body = req.body;
      const errors = Object.entries(body).flatMap(([k, v]) => {
        const p = settingProblem(k, v);
        return p ? [{ path: `body/${k}`, message: p }] : [];
      });
      if (errors.length)
        throw unprocessable(
          `The backup schedule is invalid: ${errors.map((e) => `${e.path.slice(5)} ${e.message}`).join('; ')}.`,
          errors,
        );
      await core.settings.set(body);
      return backupSettings(core);
    },
  );
}
