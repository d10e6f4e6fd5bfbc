import path from 'node:path';
import multipart from '@fastify/multipart';
import Type from 'typebox';
import { caller, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import { insertRow } from '../db/rows.ts';
import { newId } from '../http/ids.ts';
import { HttpError, notFound, unprocessable } from '../http/problem.ts';
import { created, errors, noContent, ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import {
  type DocumentInfo,
  DocumentList,
  type DocumentRow,
  DocumentView,
  DocumentWithText,
} from './definitions/document.ts';
import { chunkDocument, documentContent, documentKind } from './document-text.ts';
import { collection, int, likePattern, searchable } from './paths.ts';
import { storeChunks } from './search.ts';
import { checkRoomLeft, reserveStorage, storageRoutes, storedBytes } from './storage.ts';

/** Largest accepted upload; beyond it the answer is 413. */
export const MAX_DOCUMENT_BYTES = 10 * 1024 * 1024;

const publicDoc = (r: DocumentRow, q?: string): DocumentInfo => ({
  id: r.id,
  filename: r.filename,
  media_type: r.media_type,
  size_bytes: int(r.size_bytes),
  text_chars: r.content.length,
  created_at: r.created_at,
  ...(q ? { excerpt: excerpt(r.content, q) } : {}),
});

/** A window of text around the first match, for search results. */
function excerpt(text: string, q: string): string {
  const at = text.toLowerCase().indexOf(q.toLowerCase());
  const start = Math.max(0, at - 120);
  const s = text
    .slice(start, Math.max(at, 0) + q.length + 120)
    .replace(/\s+/g, ' ')
    .trim();
  return `${start > 0 ? '…' : ''}${s}${start + 240 + q.length < text.length ? '…' : ''}`;
}

const Params = Type.Object({ id: Type.String({ format: 'uuid' }) });
const ListQuery = Type.Object({
  q: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 200, default: 50 })),
  before: Type.Optional(Type.String({ format: 'uuid' })),
});

/**
 * Documents: multipart upload (`file` field) of text, Markdown or PDF up to 10 MiB (413 beyond,
 * 415 for other types); the extracted text is stored and searchable with `?q=`. Owner-only. An
 * upload past the user's storage limit is refused with 413 `storage_quota_exceeded`; the limit and
 * its usage are at `GET /api/v1/storage` (storage.ts).
 */
export async function documentRoutes(app: App, core: Core): Promise<void> {
  const opts = { preHandler: requireUser(core) };
  const tags = ['assistant'];

  // Multipart parsing exists only inside this scope, for the upload route.
  await app.register(async (scope: App) => {
    await scope.register(multipart, {
      limits: { fileSize: MAX_DOCUMENT_BYTES, files: 1, fields: 10, parts: 12, fieldSize: 1024 },
    });
    collection(
      scope,
      'POST',
      '/api/v1/documents',
      {
        ...opts,
        schema: {
          tags,
          consumes: ['multipart/form-data'],
          response: {
            ...created('The document as stored (without its text).', DocumentView),
            ...errors(
              [
                413,
                'The file is over the upload limit (`document_too_large`), or past your storage limit ' +
                  '(`storage_quota_exceeded`).',
              ],
              [415, 'Not a multipart upload, or not a text, Markdown or PDF file.'],
              [
                422,
                'No `file` field, or the document has no text to read or too much (`unreadable_document`, ' +
                  '`document_too_much_text`, `document_too_many_pages`, `document_too_costly`).',
              ],
            ),
          },
        },
      },
      async (req, reply) => {
        if (!req.isMultipart())
          throw new HttpError(
            415,
            'unsupported_media_type',
            'Upload the document as multipart/form-data with a "file" field.',
          );
        let part;
        try {
          part = await req.file();
        } catch (err) {
          throw uploadError(err);
        }
        if (!part || part.fieldname !== 'file')
          throw unprocessable('The upload needs a "file" field carrying the document.', [
            { path: 'body/file', message: 'is required' },
          ]);
        const filename = path.basename(part.filename || 'document').slice(0, 255);
        const kind = documentKind(filename, part.mimetype);
        if (!kind) {
          part.file.resume();
          throw new HttpError(
            415,
            'unsupported_media_type',
            `"${filename}" (${part.mimetype}) is not a supported document; upload text (.txt), Markdown ` +
              '(.md) or PDF (.pdf).',
          );
        }
        let data: Buffer;
        try {
          data = await part.toBuffer();
        } catch (err) {
          throw uploadError(err);
        }
        // toBuffer() can miss a limit hit on the very last chunk; the stream's own flag does not.
        if (part.file.truncated)
          throw uploadError(Object.assign(new Error('too large'), { code: 'FST_REQ_FILE_TOO_LARGE' }));
        // A user with no room left is told so before a PDF is read.
        await checkRoomLeft(core, caller(req), 'document');
        const { text, pages } = await documentContent(kind, data);
        if (!text)
          throw new HttpError(
            422,
            'unreadable_document',
            kind === 'application/pdf'
              ? 'The PDF has no text layer to extract (a scanned image?).'
              : 'The document is empty.',
          );
        const row: DocumentRow = {
          id: newId(),
          user_id: caller(req).id,
          filename,
          media_type: kind,
          size_bytes: data.length,
          content: text,
          created_at: core.clock.now().toISOString(),
        };
        const chunks = chunkDocument(text, pages);
        // The document and its search chunks (by page for PDFs) are stored together, if they fit the user's storage
        // (storage.ts).
        await core.db.tx(async (q) => {
          await reserveStorage(
            core,
            q,
            caller(req),
            storedBytes(q.dialect, row.filename, row.content, ...chunks.map((c) => c.content)),
            'document',
          );
          await insertRow(q, 'documents', { ...row, search_text: searchable(row.filename, row.content) });
          await storeChunks(q, row, pages);
        });
        reply.code(201);
        return publicDoc(row);
      },
    );
  });

  await storageRoutes(app, core);

  collection(
    app,
    'GET',
    '/api/v1/documents',
    {
      ...opts,
      schema: {
        tags,
        querystring: ListQuery,
        response: { ...ok('Your documents (`documents`), newest first; with `q`, those that match.', DocumentList) },
      },
    },
    async (req) => {
      const q = req.query;
      const where = ['user_id = ?'];
      const params: (string | number)[] = [caller(req).id];
      if (q.q) {
        where.push(`search_text LIKE ? ESCAPE '\\'`);
        params.push(likePattern(q.q));
      }
      if (q.before) {
        where.push('id < ?');
        params.push(q.before);
      }
      params.push(q.limit ?? 50);
      const rows = await core.db.all<DocumentRow>(
        `SELECT * FROM documents WHERE ${where.join(' AND ')} ORDER BY id DESC LIMIT ?`,
        params,
      );
      return { documents: rows.map((r) => publicDoc(r, q.q)) };
    },
  );

  const own = async (userId: string, id: string) => {
    const row = await core.db.get<DocumentRow>('SELECT * FROM documents WHERE id = ? AND user_id = ?', [id, userId]);
    if (!row) throw notFound('Document');
    return row;
  };
  app.get(
    '/api/v1/documents/:id',
    {
      ...opts,
      schema: {
        tags,
        params: Params,
        response: { ...ok('The document with its extracted text (`content`).', DocumentWithText) },
      },
    },
    async (req) => {
      const row = await own(caller(req).id, req.params.id);
      return { ...publicDoc(row), content: row.content };
    },
  );
  app.delete(
    '/api/v1/documents/:id',
    { ...opts, schema: { tags, params: Params, response: { ...noContent('Deleted.') } } },
    async (req, reply) => {
      const row = await own(caller(req).id, req.params.id);
      await core.db.run('DELETE FROM documents WHERE id = ?', [row.id]);
      return reply.code(204).send();
    },
  );
}

function uploadError(err: unknown): Error {
  const code = (err as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE')
    return new HttpError(
      413,
      'document_too_large',
      `The document is larger than the ${MAX_DOCUMENT_BYTES / 1024 / 1024} MiB upload limit.`,
      { params: { limit_mib: MAX_DOCUMENT_BYTES / 1024 / 1024 } },
    );
  if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
    return new HttpError(422, 'too_many_parts', 'Upload one document per request, in a "file" field.');
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE')
    return new HttpError(
      415,
      'unsupported_media_type',
      'Upload the document as multipart/form-data with a "file" field.',
    );
  return err instanceof Error ? err : new Error(String(err));
}
