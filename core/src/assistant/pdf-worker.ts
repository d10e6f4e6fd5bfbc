/**
 * Reads the text layer of one PDF in a worker thread, so that a hostile file (a "PDF bomb": a small
 * compressed content stream that expands to tens of megabytes of text) costs this thread's bounded
 * heap and time instead of the service's event loop. Text is streamed page by page and counted as it
 * arrives; the thread gives up as soon as the document passes the page or character limit.
 * Input (workerData): `{ data: Uint8Array, maxPages, maxChars }`. Output: one message, see PdfWorkerResult.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { getDocumentProxy } from 'unpdf';

export type PdfWorkerResult =
  | { ok: true; pages: string[] }
  | { ok: false; reason: 'too_many_pages'; pages: number }
  | { ok: false; reason: 'too_much_text' }
  | { ok: false; reason: 'unreadable' };

interface TextItem {
  str?: string;
  hasEOL?: boolean;
}

async function extract(data: Uint8Array, maxPages: number, maxChars: number): Promise<PdfWorkerResult> {
  let pdf;
  try {
    pdf = await getDocumentProxy(data);
  } catch {
    return { ok: false, reason: 'unreadable' };
  }
  if (pdf.numPages > maxPages) return { ok: false, reason: 'too_many_pages', pages: pdf.numPages };
  const pages: string[] = [];
  let total = 0;
  try {
    for (let i = 1; i <= pdf.numPages; i++) {
      const page = await pdf.getPage(i);
      const reader = page.streamTextContent().getReader() as ReadableStreamDefaultReader<{ items: TextItem[] }>;
      const parts: string[] = [];
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const item of value.items) {
          const s = item.str ?? '';
          total += s.length;
          parts.push(item.hasEOL ? `${s}\n` : s);
        }
        // Checked per streamed chunk: the text of one page never has to be whole in memory to be refused.
        if (total > maxChars) return { ok: false, reason: 'too_much_text' };
      }
      pages.push(
        parts
          .join('')
          .replace(/[ \t]+\n/g, '\n')
          .trim(),
      );
      page.cleanup();
    }
  } catch {
    return { ok: false, reason: 'unreadable' };
  }
  return { ok: true, pages };
}

if (parentPort) {
  const { data, maxPages, maxChars } = workerData as { data: Uint8Array; maxPages: number; maxChars: number };
  const result = await extract(data, maxPages, maxChars);
  parentPort.postMessage(result);
  // The pdf.js machinery may keep handles open; the answer is out, so the thread ends here.
  process.exit(0);
}
