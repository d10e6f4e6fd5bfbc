import path from 'node:path';
import { HttpError } from '../http/problem.ts';
import type { PdfWorkerResult } from './pdf-worker.ts';
import { gate, runWorker } from './worker-job.ts';

export type DocumentKind = 'text/plain' | 'text/markdown' | 'application/pdf';

/** Accepted kinds, by declared media type or by file extension (browsers often send .md as octet-stream). */
export function documentKind(filename: string, mimetype: string): DocumentKind | undefined {
  const ext = path.extname(filename).toLowerCase();
  const mime = mimetype.split(';')[0]!.trim().toLowerCase();
  if (mime === 'application/pdf' || ext === '.pdf') return 'application/pdf';
  if (mime === 'text/markdown' || mime === 'text/x-markdown' || ext === '.md' || ext === '.markdown')
    return 'text/markdown';
  if (mime === 'text/plain' || ext === '.txt' || ext === '.text') return 'text/plain';
  return undefined;
}

const unreadable = (detail: string) => new HttpError(422, 'unreadable_document', detail);

/**
 * What reading one document may cost. A PDF is read in a worker thread of its own with a bounded
 * heap and a time limit, at most two at a time; its text is counted as it streams, so a small file
 * that expands to tens of megabytes of text is refused at the character limit instead of being read.
 * Text and Markdown uploads are bounded by their size (MAX_DOCUMENT_BYTES) alone: they cost no extraction.
 */
export const DOCUMENT_LIMITS = {
  maxPdfPages: 1000,
  maxChars: 1_000_000,
  pdfSeconds: 20,
  pdfHeapMb: 256,
  pdfWorkers: 2,
} as const;

const tooMuchText = () =>
  new HttpError(
    422,
    'document_too_much_text',
    `The PDF has more than ${DOCUMENT_LIMITS.maxChars} characters of text; split it into smaller documents.`,
    { params: { limit: DOCUMENT_LIMITS.maxChars } },
  );

/** PDFs being read now, at most DOCUMENT_LIMITS.pdfWorkers; the others wait for a turn. */
const readingTurn = gate(() => DOCUMENT_LIMITS.pdfWorkers);

const damaged = () => unreadable('The PDF could not be read; it may be damaged or encrypted.');

/**
 * The pages of a PDF's text layer, read in a worker thread within DOCUMENT_LIMITS; throws the 422 to answer otherwise.
 */
function readPdf(data: Buffer): Promise<string[]> {
  return readingTurn(() =>
    runWorker<PdfWorkerResult, string[]>({
      url: new URL('./pdf-worker.ts', import.meta.url),
      workerData: {
        data: new Uint8Array(data),
        maxPages: DOCUMENT_LIMITS.maxPdfPages,
        maxChars: DOCUMENT_LIMITS.maxChars,
      },
      seconds: DOCUMENT_LIMITS.pdfSeconds,
      heapMb: DOCUMENT_LIMITS.pdfHeapMb,
      read: (r) => {
        if (r.ok) return r.pages;
        if (r.reason === 'too_much_text') return tooMuchText();
        if (r.reason === 'too_many_pages') {
          return new HttpError(
            422,
            'document_too_many_pages',
            `The PDF has ${r.pages} pages; at most ${DOCUMENT_LIMITS.maxPdfPages} are read.`,
            { params: { pages: r.pages, limit: DOCUMENT_LIMITS.maxPdfPages } },
          );
        }
        return damaged();
      },
      costly: () =>
        new HttpError(
          422,
          'document_too_costly',
          `Reading the PDF took more than ${DOCUMENT_LIMITS.pdfSeconds} seconds or ` +
            `${DOCUMENT_LIMITS.pdfHeapMb} MB of memory; it may be damaged or built to be expensive to read.`,
          { params: { seconds: DOCUMENT_LIMITS.pdfSeconds, memory_mb: DOCUMENT_LIMITS.pdfHeapMb } },
        ),
      // An out-of-memory end of the thread is `costly`; any other crash, or an end without an answer:
      crashed: damaged,
    }),
  );
}

/**
 * The searchable text of an upload: UTF-8 for text and Markdown, the text layer of a PDF (via unpdf, in a worker
 * thread).
 */
export async function documentText(kind: DocumentKind, data: Buffer): Promise<string> {
  return (await documentContent(kind, data)).text;
}

/** The text of an upload and, for a PDF, the text of each page (page 1 first). */
export async function documentContent(
  kind: DocumentKind,
  data: Buffer,
): Promise<{ text: string; pages: string[] | null }> {
  if (kind === 'application/pdf') {
    if (data.subarray(0, 5).toString('latin1') !== '%PDF-')
      throw unreadable('The file is named or typed as a PDF but is not one.');
    const pages = await readPdf(data);
    return { text: pages.filter(Boolean).join('\n\n').trim(), pages };
  }
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(data);
  } catch {
    throw new HttpError(415, 'unsupported_media_type', 'Text and Markdown documents must be UTF-8 text.');
  }
  if (text.includes('\u0000'))
    throw new HttpError(
      415,
      'unsupported_media_type',
      'The file looks binary, not text; upload text, Markdown or PDF.',
    );
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
      if (rest.length <= CHUNK_CHARS) {
        out.push({ page: run.page, content: rest });
        break;
      }
      const window = rest.slice(0, CHUNK_CHARS);
      let cut = -1;
      for (const sep of ['\n\n', '\n', '. ', ' ']) {
        const at = window.lastIndexOf(sep);
        if (at > CHUNK_CHARS / 2) {
          cut = at + sep.length;
          break;
        }
      }
      if (cut < 0) cut = CHUNK_CHARS;
      out.push({ page: run.page, content: rest.slice(0, cut).trim() });
      rest = rest.slice(cut).trim();
    }
  }
  return out;
}
