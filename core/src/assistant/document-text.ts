import path from 'node:path';
import { extractText, getDocumentProxy } from 'unpdf';
import { HttpError } from '../http/problem.ts';

export type DocumentKind = 'text/plain' | 'text/markdown' | 'application/pdf';

/** Accepted kinds, by declared media type or by file extension (browsers often send .md as octet-stream). */
export function documentKind(filename: string, mimetype: string): DocumentKind | undefined {
  const ext = path.extname(filename).toLowerCase();
  const mime = mimetype.split(';')[0]!.trim().toLowerCase();
  if (mime === 'application/pdf' || ext === '.pdf') return 'application/pdf';
  if (mime === 'text/markdown' || mime === 'text/x-markdown' || ext === '.md' || ext === '.markdown') return 'text/markdown';
  if (mime === 'text/plain' || ext === '.txt' || ext === '.text') return 'text/plain';
  return undefined;
}

const unreadable = (detail: string) => new HttpError(422, 'unreadable_document', detail);

/** The searchable text of an upload: UTF-8 for text and Markdown, the text layer of a PDF (via unpdf). */
export async function documentText(kind: DocumentKind, data: Buffer): Promise<string> {
  if (kind === 'application/pdf') {
    if (data.subarray(0, 5).toString('latin1') !== '%PDF-') throw unreadable('The file is named or typed as a PDF but is not one.');
    try {
      // unpdf may detach the buffer it is given; hand it a copy.
      const pdf = await getDocumentProxy(new Uint8Array(data));
      const { text } = await extractText(pdf, { mergePages: true });
      return String(text).trim();
    } catch {
      throw unreadable('The PDF could not be read; it may be damaged or encrypted.');
    }
  }
  let text: string;
  try { text = new TextDecoder('utf-8', { fatal: true }).decode(data); } catch {
    throw new HttpError(415, 'unsupported_media_type', 'Text and Markdown documents must be UTF-8 text.');
  }
  if (text.includes('\u0000')) throw new HttpError(415, 'unsupported_media_type', 'The file looks binary, not text; upload text, Markdown or PDF.');
  return text.replace(/^\uFEFF/, '').trim();
}
