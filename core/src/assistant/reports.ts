import fs from 'node:fs';
import path from 'node:path';
import Type from 'typebox';
import { caller, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import { insertRow } from '../db/rows.ts';
import { newId } from '../http/ids.ts';
import { HttpError, notFound } from '../http/problem.ts';
import { created, errors, file, ListQuery, noContent, ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import type { PublicUser } from '../users/users.ts';
import { type Report, ReportCreateBody, ReportList, type ReportRow, ReportView } from './definitions/report.ts';
import { collection, int } from './paths.ts';
import { gatherReportData } from './report-data.ts';
import { type RenderInput, ReportFontMissingError, type ReportLocale, reportString } from './report-pdf.ts';
import type { ReportWorkerResult } from './report-worker.ts';
import { checkRoomLeft, reserveStorage } from './storage.ts';
import { gate, runWorker } from './worker-job.ts';

/** The API shape; the storage path is never part of it. */
export const publicReport = (r: ReportRow): Report => ({
  id: r.id,
  title: r.title,
  locale: r.locale,
  created_at: r.created_at,
  size_bytes: int(r.size_bytes),
});

/** What drawing one report may cost: its worker thread's time and heap; reports drawn at a time per process. */
export const REPORT_LIMITS = { seconds: 120, heapMb: 512, workers: 1 };

const drawingTurn = gate(() => REPORT_LIMITS.workers);

/**
 * The PDF, drawn in a worker thread (report-worker.ts) within REPORT_LIMITS, one at a time: the
 * event loop keeps serving while a report is drawn. Throws ReportFontMissingError, or the 422
 * `report_too_costly` when the thread runs out of time or memory.
 */
export function drawReport(input: RenderInput): Promise<Buffer> {
  return drawingTurn(() =>
    runWorker<ReportWorkerResult, Buffer>({
      url: new URL('./report-worker.ts', import.meta.url),
      workerData: { ...input, generatedAt: input.generatedAt.toISOString() },
      seconds: REPORT_LIMITS.seconds,
      heapMb: REPORT_LIMITS.heapMb,
      read: (r) => {
        if (r.ok) return Buffer.from(r.pdf.buffer, r.pdf.byteOffset, r.pdf.byteLength);
        if (r.reason === 'font_missing') return new ReportFontMissingError('the report font is missing');
        return new Error('the report could not be drawn');
      },
      costly: () =>
        new HttpError(
          422,
          'report_too_costly',
          `Drawing the report took more than ${REPORT_LIMITS.seconds} seconds or ${REPORT_LIMITS.heapMb} ` +
            'MB of memory; shorten or delete the longest memory entries and documents, then try again.',
          { params: { seconds: REPORT_LIMITS.seconds, memory_mb: REPORT_LIMITS.heapMb } },
        ),
      crashed: (err) => err ?? new Error('the report worker ended without an answer'),
    }),
  );
}

/** Health-compilation PDFs, stored as `<dataDir>/reports/<user_id>/<id>.pdf`. */
export class Reports {
  private core: Core;
  constructor(core: Core) {
    this.core = core;
  }

  private dir(userId: string): string {
    return path.join(this.core.config.dataDir, 'reports', userId);
  }
  private file(r: Pick<ReportRow, 'id' | 'user_id'>): string {
    return path.join(this.dir(r.user_id), `${r.id}.pdf`);
  }

  /** Builds, stores and records one report. A missing font becomes a 503 that names the package to install. */
  async generate(user: PublicUser, opts: { title?: string; locale?: ReportLocale }): Promise<Report> {
    const locale: ReportLocale = opts.locale ?? (user.locale === 'ru' ? 'ru' : 'en');
    const title = opts.title?.trim() || reportString(locale, 'default_title');
    const now = this.core.clock.now();
    // A user with no room left is told so before the report is rendered.
    await checkRoomLeft(this.core, user, 'report');
    const data = await gatherReportData(this.core.db, user.id, title);
    let pdf: Buffer;
    try {
      pdf = await drawReport({ title, locale, email: user.email, generatedAt: now, data });
    } catch (err) {
      if (err instanceof ReportFontMissingError) {
        this.core.logs.get('assistant').error({ err: err.message }, 'report font missing');
        throw new HttpError(
          503,
          'report_font_missing',
          'PDF reports are unavailable: the server lacks the DejaVu Sans font (install the fonts-dejavu-core package).',
        );
      }
      throw err;
    }
    const row: ReportRow = {
      id: newId(),
      user_id: user.id,
      title,
      locale,
      size_bytes: pdf.length,
      created_at: now.toISOString(),
    };
    fs.mkdirSync(this.dir(user.id), { recursive: true });
    // Written under a temporary name and renamed, so a listed report always has a whole file.
    const tmp = `${this.file(row)}.tmp`;
    await fs.promises.writeFile(tmp, pdf);
    await fs.promises.rename(tmp, this.file(row));
    // The PDF counts against the user's storage (storage.ts): 422 when it does not fit, and the file goes.
    try {
      await this.core.db.tx(async (q) => {
        await reserveStorage(this.core, q, user, row.size_bytes, 'report');
        await insertRow(q, 'reports', { ...row });
      });
    } catch (err) {
      await fs.promises.rm(this.file(row), { force: true });
      throw err;
    }
    return publicReport(row);
  }

  async own(userId: string, id: string): Promise<ReportRow> {
    const row = await this.core.db.get<ReportRow>('SELECT * FROM reports WHERE id = ? AND user_id = ?', [id, userId]);
    if (!row) throw notFound('Report');
    return row;
  }

  async remove(row: ReportRow): Promise<void> {
    await this.core.db.run('DELETE FROM reports WHERE id = ?', [row.id]);
    await fs.promises.rm(this.file(row), { force: true });
  }

  /** Deletes a user's report files (their rows go with the user by cascade). */
  async removeUserFiles(userId: string): Promise<void> {
    await fs.promises.rm(this.dir(userId), { recursive: true, force: true });
  }

  async routes(app: App): Promise<void> {
    const core = this.core;
    const opts = { preHandler: requireUser(core) };
    const tags = ['assistant'];
    const Params = Type.Object({ report_id: Type.String({ format: 'uuid' }) });
    const id = (req: { params: { report_id: string } }) => req.params.report_id;

    collection(
      app,
      'POST',
      '/api/v1/reports',
      {
        ...opts,
        schema: {
          tags,
          body: ReportCreateBody,
          response: {
            ...created('The report, generated and stored as a PDF.', ReportView),
            ...errors(
              [
                422,
                'The request does not pass validation, or the report does not fit your storage limit ' +
                  '(`storage_quota_exceeded`).',
              ],
              [503, 'The server lacks the font PDF reports need (`report_font_missing`).'],
            ),
          },
        },
      },
      async (req, reply) => {
        const b = req.body ?? {};
        const report = await this.generate(caller(req), b);
        reply.code(201);
        return report;
      },
    );
    collection(
      app,
      'GET',
      '/api/v1/reports',
      {
        ...opts,
        schema: {
          tags,
          querystring: ListQuery,
          response: { ...ok('Your reports (`reports`), newest first.', ReportList) },
        },
      },
      async (req) => {
        const q = req.query;
        const rows = await core.db.all<ReportRow>(
          `SELECT * FROM reports WHERE user_id = ?${q.before ? ' AND id < ?' : ''} ORDER BY id DESC LIMIT ?`,
          q.before ? [caller(req).id, q.before, q.limit ?? 50] : [caller(req).id, q.limit ?? 50],
        );
        return { reports: rows.map(publicReport) };
      },
    );
    app.get(
      '/api/v1/reports/:report_id',
      { ...opts, schema: { tags, params: Params, response: { ...ok('The report.', ReportView) } } },
      async (req) => publicReport(await this.own(caller(req).id, id(req))),
    );
    app.get(
      '/api/v1/reports/:report_id/download',
      {
        ...opts,
        schema: {
          tags,
          params: Params,
          response: {
            ...file('The report as a PDF attachment.', 'application/pdf'),
            ...errors([404, 'No such report of yours, or its file is gone (`report_file_missing`).']),
          },
        },
      },
      async (req, reply) => {
        const row = await this.own(caller(req).id, id(req));
        const file = this.file(row);
        if (!fs.existsSync(file))
          throw new HttpError(
            404,
            'report_file_missing',
            'The report is recorded but its file is gone; generate it again.',
          );
        const ascii = row.title.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '_') || 'report';
        reply
          .type('application/pdf')
          .header(
            'content-disposition',
            `attachment; filename="${ascii}.pdf"; filename*=UTF-8''${encodeURIComponent(row.title)}.pdf`,
          )
          .header('cache-control', 'private, no-store');
        return reply.send(fs.createReadStream(file));
      },
    );
    app.delete(
      '/api/v1/reports/:report_id',
      { ...opts, schema: { tags, params: Params, response: { ...noContent('Deleted, with its file.') } } },
      async (req, reply) => {
        await this.remove(await this.own(caller(req).id, id(req)));
        return reply.code(204).send();
      },
    );
  }
}
