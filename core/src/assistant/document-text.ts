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
  return (await documentContent(kind, data)).text;
}

/** The text of an upload and, for a PDF, the text of each page (page 1 first). */
export async function documentContent(kind: DocumentKind, data: Buffer): Promise<{ text: string; pages: string[] | null }> {
  if (kind === 'application/pdf') {
    if (data.subarray(0, 5).toString('latin1') !== '%PDF-') throw unreadable('The file is named or typed as a PDF but is not one.');
    try {
      // unpdf may detach the buffer it is given; hand it a copy.
      const pdf = await getDocumentProxy(new Uint8Array(data));
      const { text } = await extractText(pdf, { mergePages: false });
      const pages = (Array.isArray(text) ? text : [String(text)]).map((p) => String(p).trim());
      return { text: pages.filter(Boolean).join('\n\n').trim(), pages };
    } catch {
      throw unreadable('The PDF could not be read; it may be damaged or encrypted.');
    }
  }
  let text: string;
  try { text = new TextDecoder('utf-8', { fatal: true }).decode(data); } catch {
    throw new HttpError(415, 'unsupported_media_type', 'Text and Markdown documents must be UTF-8 text.');
  }
  if (text.includes('\u0000')) throw new HttpError(415, 'unsupported_media_type', 'The file looks binary, not text; upload text, Markdown or PDF.');
  return { text: text.replace(/^\uFEFF/, '').trim(), pages: null };
}

/** Longest chunk a document is split into, in characters. */
export const CHUNK_CHARS = 1200;

/**
 * Splits a document into search chunks: each page of a PDF on its own (with its number), other
 * text as one run; a run longer than CHUNK_CHARS is cut at paragraph, line or sentence ends
 * (at a space, or hard, when there are none).
 */
export function chunkDocument(text: string, pages: string[] | null): { page: number | null; content: string }[] {
  const out: { page: number | null; content: string }[] = [];
  const runs = pages ? pages.map((p, i) => ({ page: i + 1, text: p })) : [{ page: null, text }];
  for (const run of runs) {
    let rest = run.text.trim();
    while (rest) {
      if (rest.length <= CHUNK_CHARS) { out.push({ page: run.page, content: rest }); break; }
      const window = rest.slice(0, CHUNK_CHARS);
      let cut = -1;
      for (const sep of ['\n\n', '\n', '. ', ' ']) {
        const at = window.lastIndexOf(sep);
        if (at > CHUNK_CHARS / 2) { cut = at + sep.length; break; }
      }
      if (cut < 0) cut = CHUNK_CHARS;
      out.push({ page: run.page, content: rest.slice(0, cut).trim() });
      rest = rest.slice(cut).trim();
    }
  }
  return out;
}
