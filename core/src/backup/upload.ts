/**
 * Reads an uploaded backup from a multipart `file` part: size limit (413), strict UTF-8, and the
 * JSON guard fed chunk by chunk as the upload streams in, so an oversized or bomb-shaped file is
 * refused before `JSON.parse` runs. The rest of a refused upload is drained, never parsed.
 */
import crypto from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import { HttpError, unprocessable } from '../http/problem.ts';
import { JsonGuard, JsonGuardError } from './json-guard.ts';

/** Largest accepted backup upload; beyond it the answer is 413. */
export const MAX_UPLOAD_BYTES = 20 * 1024 * 1024;

export interface Upload {
  text: string;
  filename: string;
  size_bytes: number;
  sha256: string;
}

function multipartError(err: unknown): Error {
  const code = (err as { code?: string }).code;
  if (code === 'FST_REQ_FILE_TOO_LARGE') return tooLarge();
  if (code === 'FST_FILES_LIMIT' || code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT')
    return unprocessable('Upload one backup per request, in a "file" field.', undefined, 'too_many_parts');
  if (code === 'FST_INVALID_MULTIPART_CONTENT_TYPE')
    return new HttpError(
      415,
      'unsupported_media_type',
      'Upload the backup as multipart/form-data with a "file" field.',
    );
  if (code === 'FST_PROTO_VIOLATION')
    return unprocessable('A multipart field name is not allowed.', undefined, 'forbidden_key');
  return err instanceof Error ? err : new Error(String(err));
}

const tooLarge = () =>
  new HttpError(
    413,
    'backup_too_large',
    `The backup file is larger than the ${MAX_UPLOAD_BYTES / 1024 / 1024} MiB upload limit.`,
    { params: { limit_mib: MAX_UPLOAD_BYTES / 1024 / 1024 } },
  );

/** Reads the `file` part of a multipart request through the guard; throws 413/415/422 problems. */
export async function readBackupUpload(req: FastifyRequest): Promise<Upload> {
  if (!req.isMultipart())
    throw new HttpError(415, 'unsupported_media_type', 'Upload the backup as multipart/form-data with a "file" field.');
  let part;
  try {
    part = await req.file();
  } catch (err) {
    throw multipartError(err);
  }
  if (!part || part.fieldname !== 'file') {
    part?.file.resume();
    throw unprocessable('The upload needs a "file" field carrying the backup.', [
      { path: 'body/file', message: 'is required' },
    ]);
  }
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const guard = new JsonGuard();
  const hash = crypto.createHash('sha256');
  const pieces: string[] = [];
  let size = 0;
  let failure: Error | undefined;
  const feed = (s: string) => {
    guard.write(s);
    pieces.push(s);
  };
  try {
    for await (const chunk of part.file as AsyncIterable<Buffer>) {
      size += chunk.length;
      // Once refused, the rest is only drained so the client still gets the answer.
      if (failure) continue;
      hash.update(chunk);
      try {
        feed(decoder.decode(chunk, { stream: true }));
      } catch (err) {
        failure = err as Error;
        pieces.length = 0;
      }
    }
  } catch (err) {
    throw multipartError(err);
  }
  if (part.file.truncated) throw tooLarge();
  if (!failure) {
    try {
      feed(decoder.decode());
      guard.end();
    } catch (err) {
      failure = err as Error;
    }
  }
  if (failure instanceof JsonGuardError) {
    const code =
      failure.reason === 'syntax'
        ? 'invalid_json'
        : failure.reason === 'forbidden_key'
          ? 'forbidden_key'
          : 'json_limits_exceeded';
    throw unprocessable(`The backup file was refused: ${failure.message}.`, undefined, code);
  }
  if (failure instanceof TypeError)
    throw unprocessable('The backup file is not valid UTF-8 text.', undefined, 'invalid_json');
  if (failure) throw failure;
  const filename = (part.filename || 'backup.json').replace(/[^\w.@ -]/g, '_').slice(0, 200);
  return { text: pieces.join(''), filename, size_bytes: size, sha256: hash.digest('hex') };
}
