/**
 * Draws one health-compilation PDF in a worker thread, so that a report built from very long
 * texts costs this thread's bounded heap and time instead of the service's event loop (reports.ts
 * starts it and enforces REPORT_LIMITS). Input (workerData): RenderInput with `generatedAt` as an ISO
 * string. Output: one message, see ReportWorkerResult.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { type RenderInput, ReportFontMissingError, renderReport } from './report-pdf.ts';

export type ReportWorkerResult = { ok: true; pdf: Uint8Array } | { ok: false; reason: 'font_missing' | 'failed' };

if (parentPort) {
  const input = workerData as Omit<RenderInput, 'generatedAt'> & { generatedAt: string };
  let result: ReportWorkerResult;
  try {
    const pdf = await renderReport({ ...input, generatedAt: new Date(input.generatedAt) });
    result = { ok: true, pdf: new Uint8Array(pdf.buffer, pdf.byteOffset, pdf.byteLength) };
  } catch (err) {
    result = { ok: false, reason: err instanceof ReportFontMissingError ? 'font_missing' : 'failed' };
  }
  parentPort.postMessage(result);
}
