/**
 * Files attached in the composer: dropped on it or picked with the paperclip, each text, Markdown or PDF file is
 * uploaded as a document (`POST /api/v1/documents`) that the assistant's document search reads, and shown as a chip
 * until the message is sent (the message then carries the documents' ids). A file too large or of another kind is
 * refused at once with a toast in the user's language; the service's own refusals (storage limit…) are toasted too.
 */
import { useState } from 'preact/hooks';
import { ApiError, api } from '../../lib/api.ts';
import { num, t } from '../../lib/i18n.ts';
import { toast } from '../../ui/toast.tsx';

export interface AttachedDoc {
  id: string;
  name: string;
}

/** The service's upload limit (documents.ts MAX_DOCUMENT_BYTES): 10 MiB. */
export const MAX_ATTACH_BYTES = 10 * 1024 * 1024;
/** The most documents one message carries (send.ts MAX_MESSAGE_DOCUMENTS). */
export const MAX_ATTACHED = 10;
const KINDS = /\.(txt|text|md|markdown|pdf)$/i;
export const ACCEPT = '.txt,.md,.markdown,.pdf,text/plain,text/markdown,application/pdf';

/** Why a file cannot be attached, in the user's language; null when it can. */
export function refusal(f: { name: string; size: number }): string | null {
  if (!KINDS.test(f.name)) return t('chat_extras.unsupported', { name: f.name });
  if (f.size > MAX_ATTACH_BYTES)
    return t('chat_extras.too_large', { name: f.name, limit: num(MAX_ATTACH_BYTES / 1024 / 1024) });
  return null;
}

export function useAttachments() {
  const [docs, setDocs] = useState<AttachedDoc[]>([]);
  const [uploading, setUploading] = useState(0);
  const [dragging, setDragging] = useState(false);
  const add = async (files: Iterable<File>) => {
    for (const f of files) {
      const why = refusal(f);
      if (why) {
        toast.error(new ApiError(422, 'attach_refused', why));
        continue;
      }
      if (docs.length + uploading >= MAX_ATTACHED) {
        toast.error(new ApiError(422, 'attach_refused', t('chat_extras.files_limit', { n: MAX_ATTACHED })));
        break;
      }
      const form = new FormData();
      form.append('file', f);
      setUploading((n) => n + 1);
      try {
        const doc = await api<{ id: string; filename: string }>('POST', '/api/v1/documents', { form });
        setDocs((d) => [...d, { id: doc.id, name: doc.filename }]);
      } catch (err) {
        toast.error(err);
      } finally {
        setUploading((n) => n - 1);
      }
    }
  };
  const has = (e: DragEvent) => Boolean(e.dataTransfer?.types.includes('Files'));
  return {
    docs,
    uploading: uploading > 0,
    dragging,
    add,
    remove: (id: string) => setDocs((d) => d.filter((x) => x.id !== id)),
    clear: () => setDocs([]),
    dropHandlers: {
      onDragOver: (e: DragEvent) => {
        if (!has(e)) return;
        e.preventDefault();
        setDragging(true);
      },
      onDragLeave: () => setDragging(false),
      onDrop: (e: DragEvent) => {
        if (!has(e)) return;
        e.preventDefault();
        setDragging(false);
        void add(Array.from(e.dataTransfer?.files ?? []));
      },
    },
  };
}
export type Attachments = ReturnType<typeof useAttachments>;

/** The paperclip: a file picker for text, Markdown and PDF files. */
export function AttachButton({ attach, disabled }: { attach: Attachments; disabled?: boolean }) {
  return (
    <label class={`btn btn-ghost composer-attach${disabled ? ' disabled' : ''}`} title={t('chat_extras.attach')}>
      <span aria-hidden="true">📎</span>
      <span class="sr-only">{t('chat_extras.attach')}</span>
      <input
        type="file"
        class="sr-only"
        multiple
        accept={ACCEPT}
        disabled={disabled}
        data-testid="attach-input"
        onChange={(e) => {
          const input = e.currentTarget;
          void attach.add(Array.from(input.files ?? [])).finally(() => {
            input.value = '';
          });
        }}
      />
    </label>
  );
}

/** The documents waiting to be sent, each with a remove button; "Uploading…" while one is on its way. */
export function AttachChips({ attach }: { attach: Attachments }) {
  if (!attach.docs.length && !attach.uploading) return null;
  return (
    <div class="composer-note attach-chips" data-testid="attach-chips">
      {attach.docs.map((d) => (
        <span class="badge doc-chip" key={d.id} data-testid="attach-chip">
          <span aria-hidden="true">📄 </span>
          {d.name}
          <button
            type="button"
            class="btn btn-sm btn-ghost"
            aria-label={t('chat_extras.remove', { name: d.name })}
            onClick={() => attach.remove(d.id)}
          >
            ×
          </button>
        </span>
      ))}
      {attach.uploading && (
        <span class="muted small" role="status">
          {t('chat_extras.uploading')}
        </span>
      )}
    </div>
  );
}

/** A sent message's documents, as chips linking to the reader. */
export function DocChips({ docs }: { docs: { document_id: string; name: string; available?: boolean }[] }) {
  if (!docs.length) return null;
  return (
    <div class="attach-chips" data-testid="msg-docs">
      {docs.map((d) =>
        d.available === false ? (
          <span class="badge doc-chip muted" key={d.document_id} title={t('chat_extras.doc_gone')}>
            📄 {d.name}
          </span>
        ) : (
          <a
            class="badge doc-chip"
            key={d.document_id}
            href={`#/documents?open=${d.document_id}`}
            data-testid="msg-doc"
          >
            <span aria-hidden="true">📄 </span>
            {d.name}
          </a>
        ),
      )}
    </div>
  );
}
