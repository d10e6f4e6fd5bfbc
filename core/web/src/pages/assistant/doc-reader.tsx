/**
 * Reading a document: its extracted text in a dialog (Markdown files rendered, text and PDF text as they are), with
 * the documents search's matches marked, counted and the first scrolled into view.
 */
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { DocWithText } from '../../../../src/assistant/api-types.ts';
import { get } from '../../lib/api.ts';
import { useAsync } from '../../lib/hooks.ts';
import { num, t } from '../../lib/i18n.ts';
import { renderMarkdown } from '../../lib/markdown.ts';
import { ErrorNote, Loading } from '../../ui/basics.tsx';
import { Modal } from '../../ui/modal.tsx';
import { markElement } from './marks.tsx';

const isMarkdown = (d: DocWithText) => /\.(md|markdown)$/i.test(d.filename) || d.media_type === 'text/markdown';

export function DocReader({ id, q, onClose }: { id: string; q: string; onClose: () => void }) {
  const doc = useAsync(() => get<DocWithText>(`/api/v1/documents/${id}`), [id]);
  const body = useRef<HTMLDivElement>(null);
  const [count, setCount] = useState<number | null>(null);
  const d = doc.data;
  const html = useMemo(() => (d && isMarkdown(d) ? renderMarkdown(d.content) : null), [d]);
  useEffect(() => {
    const el = body.current;
    if (!el || !d) return;
    const n = markElement(el, q);
    setCount(q.trim() ? n : null);
    el.querySelector('mark')?.scrollIntoView({ block: 'center' });
  }, [d, html, q]);
  return (
    <Modal
      title={d ? t('chat_extras.reader_title', { name: d.filename }) : t('chat_extras.reader')}
      onClose={onClose}
      wide
    >
      <ErrorNote error={doc.error} />
      {!d ? (
        doc.error ? null : (
          <Loading />
        )
      ) : (
        <>
          {count !== null && (
            <p class="muted small" role="status" data-testid="reader-matches">
              {t('chat_extras.reader_matches', { query: q.trim(), n: num(count) })}
            </p>
          )}
          {html !== null ? (
            <div
              key={q}
              class="md doc-reader"
              ref={body}
              data-testid="doc-reader"
              dangerouslySetInnerHTML={{ __html: html }}
            />
          ) : (
            <div key={q} class="doc-reader doc-reader-plain" ref={body} data-testid="doc-reader">
              {d.content}
            </div>
          )}
        </>
      )}
    </Modal>
  );
}
