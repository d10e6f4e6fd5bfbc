/** A single long text (personal or primary context) with save, and an optional version line. */
import { useState } from 'preact/hooks';
import { get, put } from '../lib/api.ts';
import { useAsync } from '../lib/hooks.ts';
import { dateTime, num, t } from '../lib/i18n.ts';
import type { PersonalContext, PrimaryContext } from '../lib/types.ts';
import { Badge, Button, Card, ErrorNote, Loading } from './basics.tsx';
import { Field } from './field.tsx';
import { toast } from './toast.tsx';

/** The primary or a personal context, as their routes declare them. */
type Doc = PrimaryContext | PersonalContext;

export function TextDoc({ path, max, label, help }: { path: string; max: number; label: string; help: string }) {
  const doc = useAsync(() => get<Doc>(path), [path]);
  if (!doc.data) return doc.error ? <ErrorNote error={doc.error} /> : <Loading />;
  // The form starts from the loaded text in its first render, so nothing typed early is overwritten.
  return <TextDocForm path={path} max={max} label={label} help={help} doc={doc.data} onSaved={(d) => doc.set(d)} />;
}

function TextDocForm({
  path,
  max,
  label,
  help,
  doc: d,
  onSaved,
}: {
  path: string;
  max: number;
  label: string;
  help: string;
  doc: Doc;
  onSaved(d: Doc): void;
}) {
  const [text, setText] = useState(d.content);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      onSaved(await put<Doc>(path, { content: text }));
      toast.ok(t('common.saved'));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card>
      <form class="stack" onSubmit={submit}>
        <div class="meta">
          {'version' in d && <Badge tone="info">{t('context.version', { version: d.version })}</Badge>}
          <span class="muted small">
            {d.updated_at ? t('context.updated', { time: dateTime(d.updated_at) }) : t('context.never')}
          </span>
        </div>
        <Field label={label} hints={[help, t('context.chars', { used: num(text.length), max: num(max) })]}>
          <textarea
            rows={14}
            maxLength={max}
            value={text}
            onInput={(e) => setText(e.currentTarget.value)}
            data-testid="context-text"
          />
        </Field>
        <ErrorNote error={error} />
        <div class="form-actions">
          <Button type="submit" variant="primary" busy={busy} disabled={text === d.content}>
            {t('common.save')}
          </Button>
        </div>
      </form>
    </Card>
  );
}
