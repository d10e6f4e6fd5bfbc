/**
 * The dialog that edits the user's own template of one event type and language: title and body
 * editors, the syntax and the fields the event carries, the default beside it for reference, a live
 * preview of the unsaved draft rendered from the user's last event of that type (debounced), Save,
 * Cancel, and Reset to default when an own template exists.
 */
import { Fragment } from 'preact';
import { useEffect, useRef, useState } from 'preact/hooks';
import { ApiError, api, del, put } from '../../lib/api.ts';
import { type Locale, t } from '../../lib/i18n.ts';
import type { TemplatePreview, TemplateText as Text } from '../../lib/types.ts';
import { Button, ConfirmButton, Loading, Note } from '../../ui/basics.tsx';
import { Field } from '../../ui/field.tsx';
import { eventLabel } from '../../ui/labels.ts';
import { Modal } from '../../ui/modal.tsx';
import { errorText, toast } from '../../ui/toast.tsx';

/** The template language, as written in a template (code, not prose). */
const SYNTAX = [
  '{{field}}',
  '{{#if field}}…{{else}}…{{/if}}',
  '{{#each list}}…{{.}}…{{/each}}',
  '{{count list}}',
  '{{markdown field}}',
];
/** Names every event's template can use besides its payload fields. */
const COMMON = [
  'event_type',
  'severity',
  'provider_name',
  'provider_kind',
  'tracker_name',
  'target_name',
  'occurred_at',
  'extras.<name>',
];
const PREVIEW_DELAY_MS = 350;

/**
 * The payload fields a (default) template refers to: `{{name}}`, `{{#if url}}`, `{{#each assets}}`, `{{count x}}`,
 * `{{markdown body}}`.
 */
export function fieldsOf(text: Text): string[] {
  const found = new Set<string>();
  for (const m of `${text.title}\n${text.body}`.matchAll(
    /\{\{\s*(?:#if\s+|#each\s+|count\s+|markdown\s+)?([\w.]+)\s*\}\}/g,
  )) {
    const name = m[1]!;
    if (name !== 'else' && !COMMON.includes(name)) found.add(name);
  }
  return [...found];
}

/** The readable sentence for a problem with a draft, in the user's language. */
function draftError(err: unknown): string {
  if (err instanceof ApiError && err.code === 'template_invalid') {
    const p = err.params as Record<string, string>;
    const field = p.field === 'title' ? 'title' : 'body';
    return t(`tpl_edit.invalid_${field}`, {
      problem: t(`tpl_edit.reason.${p.reason ?? 'other'}`, { tag: p.tag ?? '' }),
    });
  }
  return errorText(err);
}

/** `hasEvent`: whether the user has an event of this type (none: no preview is asked for, "no event yet" is shown). */
export function TemplateEditor({
  type,
  lang,
  fallback,
  own,
  hasEvent,
  onClose,
  onSaved,
}: {
  type: string;
  lang: Locale;
  fallback: Text;
  own: Text | null;
  hasEvent: boolean;
  onClose: () => void;
  onSaved: () => void;
}) {
  const [title, setTitle] = useState((own ?? fallback).title);
  const [body, setBody] = useState((own ?? fallback).body);
  const [preview, setPreview] = useState<{ data?: TemplatePreview; none?: boolean; error?: string } | null>(null);
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string | null>(null);
  const seq = useRef(0);
  const empty = !title.trim() && !body.trim();

  useEffect(() => {
    const n = ++seq.current;
    if (!hasEvent) {
      setPreview({ none: true });
      return;
    }
    const timer = setTimeout(async () => {
      try {
        const data = await api<TemplatePreview>('POST', `/api/templates/${encodeURIComponent(type)}/preview`, {
          body: { locale: lang, title, body },
        });
        if (n === seq.current) setPreview({ data });
      } catch (err) {
        if (n !== seq.current) return;
        if (err instanceof ApiError && err.code === 'no_event_for_preview') setPreview({ none: true });
        else setPreview({ error: draftError(err) });
      }
    }, PREVIEW_DELAY_MS);
    return () => clearTimeout(timer);
  }, [type, lang, title, body, hasEvent]);

  const save = async (e: Event) => {
    e.preventDefault();
    if (empty) return;
    setSaving(true);
    setSaveError(null);
    try {
      await put(`/api/templates/${encodeURIComponent(type)}/${lang}`, { title, body });
      toast.ok(t('tpl_edit.saved'));
      onSaved();
    } catch (err) {
      setSaveError(draftError(err));
    } finally {
      setSaving(false);
    }
  };
  const reset = async () => {
    await del(`/api/templates/${encodeURIComponent(type)}/${lang}`);
    toast.ok(t('tpl_edit.was_reset'));
    onSaved();
  };
  const fields = fieldsOf(fallback);

  return (
    <Modal
      title={t('tpl_edit.dialog_title', {
        event_type: eventLabel(type),
        in_language: t(`tpl_edit.in_language.${lang}`),
      })}
      onClose={onClose}
      wide
    >
      <form class="tpl-edit" onSubmit={save} data-testid="template-editor">
        <div class="tpl-edit-main">
          <Field label={t('ops.title_label')}>
            <textarea
              class="mono"
              rows={2}
              maxLength={500}
              value={title}
              spellcheck={false}
              data-testid="edit-title"
              onInput={(e) => setTitle(e.currentTarget.value)}
            />
          </Field>
          <Field label={t('ops.body_label')}>
            <textarea
              class="mono"
              rows={7}
              maxLength={10000}
              value={body}
              spellcheck={false}
              data-testid="edit-body"
              onInput={(e) => setBody(e.currentTarget.value)}
            />
          </Field>
          <p class="hint tpl-help" data-testid="template-help">
            {t('tpl_edit.help_syntax')}{' '}
            {SYNTAX.map((s) => (
              <code key={s}>{s}</code>
            ))}
            {fields.length > 0 && (
              <>
                <br />
                {t('tpl_edit.help_fields')}{' '}
                {fields.map((f) => (
                  <code key={f}>{f}</code>
                ))}
              </>
            )}
            <br />
            {t('tpl_edit.help_more', { names: '\u0000' })
              .split('\u0000')
              .map((part, i) =>
                i === 0 ? (
                  part
                ) : (
                  <Fragment key={part}>
                    {COMMON.map((f, j) => (
                      <Fragment key={f}>
                        {j > 0 && ', '}
                        <code>{f}</code>
                      </Fragment>
                    ))}
                    {part}
                  </Fragment>
                ),
              )}
          </p>
          {empty && <Note tone="warn">{t('tpl_edit.empty')}</Note>}
          {saveError && (
            <div class="note note-danger" role="alert" data-testid="save-error">
              {saveError}
            </div>
          )}
        </div>
        <div class="tpl-edit-side">
          <section class="tpl-edit-box" aria-live="polite" data-testid="draft-preview">
            <h3>{t('tpl_edit.preview_draft')}</h3>
            {preview === null ? (
              <Loading />
            ) : preview.none ? (
              <Note>{t('tpl_edit.no_event', { event_type: eventLabel(type) })}</Note>
            ) : preview.error ? (
              <div class="note note-danger" data-testid="draft-error">
                {preview.error}
              </div>
            ) : (
              preview.data && (
                <dl class="facts ops-template" data-testid="draft-preview-text">
                  <dt>{t('ops.title_label')}</dt>
                  <dd>
                    <pre class="ops-pre">{preview.data.title}</pre>
                  </dd>
                  <dt>{t('ops.body_label')}</dt>
                  <dd>
                    <pre class="ops-pre">{preview.data.body || '—'}</pre>
                  </dd>
                </dl>
              )
            )}
            {!preview?.none && <p class="muted small">{t('tpl_edit.preview_waiting')}</p>}
          </section>
          <section class="tpl-edit-box" data-testid="edit-default">
            <h3>{t('tpl_edit.default_beside')}</h3>
            <pre class="ops-pre mono">{fallback.title}</pre>
            <pre class="ops-pre mono">{fallback.body || '—'}</pre>
          </section>
        </div>
        <div class="form-actions tpl-edit-actions">
          {own && (
            <span class="tpl-edit-reset">
              <ConfirmButton onConfirm={reset} label={t('tpl_edit.reset')} confirmLabel={t('tpl_edit.confirm_reset')} />
            </span>
          )}
          <Button onClick={onClose}>{t('tpl_edit.cancel')}</Button>
          <Button type="submit" variant="primary" busy={saving} disabled={empty} data-testid="save-template">
            {t('tpl_edit.save')}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
