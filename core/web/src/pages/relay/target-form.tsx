/** Create or edit a target: kind, name, message language and the plugin's config fields. */
import { useState } from 'preact/hooks';
import { patch, post } from '../../lib/api.ts';
import { oneOf, useForm } from '../../lib/form.ts';
import { LOCALES, locale, t } from '../../lib/i18n.ts';
import { cleanConfig, initialConfig } from '../../lib/schema.ts';
import type { Bot, ParsedTargetUrl, Plugin, Target, TargetCreateBody, TargetPatchBody } from '../../lib/types.ts';
import { Button, ErrorNote } from '../../ui/basics.tsx';
import { Field } from '../../ui/field.tsx';
import { Modal } from '../../ui/modal.tsx';
import { languageName } from '../../ui/names.ts';
import { FixBelow, SchemaForm, useFormChecks } from '../../ui/schema-form.tsx';
import { allowEntryOk, allowValue, OutboundAllowEditor, useCanSetAllow } from './outbound-allow.tsx';

/** What the form edits: the create body, every field present (the plugin's config and allow list kept apart). */
type Values = Omit<Required<TargetCreateBody>, 'config' | 'outbound_allow'>;

export function TargetForm({
  plugins,
  bots,
  target,
  onClose,
  onSaved,
}: {
  plugins: Plugin[];
  bots: Bot[];
  target?: Target;
  onClose: () => void;
  onSaved: (t: Target) => void;
}) {
  const kinds = plugins.filter((p) => p.kind === 'target');
  const form = useForm<Values>(() => ({
    kind: target?.kind ?? kinds[0]?.id ?? '',
    name: target?.name ?? '',
    locale: oneOf(LOCALES, target?.locale ?? '') ?? locale(),
    enabled: target?.enabled ?? true,
    // Messages that follow the state: edit (or reply to) the earlier message of the same thing.
    update_messages: target?.update_messages ?? true,
  }));
  const { kind, name } = form.values;
  const plugin = kinds.find((p) => p.id === kind);
  const [config, setConfig] = useState(() => initialConfig(plugin?.config_schema, target?.config));
  const canAllow = useCanSetAllow();
  const [allow, setAllow] = useState<string[]>(() => target?.outbound_allow ?? []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const { checks, validate, fromServer, reset } = useFormChecks(plugin?.config_schema, config, target?.secrets_set);
  const [placed, setPlaced] = useState(false);
  const [nameShown, setNameShown] = useState(false);
  const nameError = nameShown && !name.trim() ? t('field.required') : null;
  const [appriseUrl, setAppriseUrl] = useState('');
  const [appriseNote, setAppriseNote] = useState<{ ok?: string; error?: unknown } | null>(null);

  /** Reads the pasted Apprise URL on the server and fills the form from it (kind, name, config). */
  const fillFromUrl = async () => {
    if (!appriseUrl.trim()) return;
    try {
      const r = await post<ParsedTargetUrl>('/api/targets/parse-url', { url: appriseUrl.trim() });
      const p = kinds.find((k) => k.id === r.kind);
      if (!r.kind_enabled || !p) {
        setAppriseNote({ error: t('apprise.kind_not_enabled', { kind: r.kind }) });
        return;
      }
      form.merge(name.trim() ? { kind: r.kind } : { kind: r.kind, name: r.name });
      setConfig(initialConfig(p.config_schema, r.config));
      reset();
      setPlaced(false);
      setAppriseNote({ ok: t('apprise.filled') });
    } catch (err) {
      setAppriseNote({ error: err });
    }
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!plugin) return;
    setNameShown(true);
    if (!validate() || !name.trim() || !allowValue(allow).every(allowEntryOk)) return;
    setBusy(true);
    setError(null);
    setPlaced(false);
    const { kind: _, ...fields } = form.values;
    const cleaned = cleanConfig(plugin.config_schema, config, target?.secrets_set);
    // Only an administrator may send it (the service refuses anyone else).
    const allowed = canAllow ? { outbound_allow: allowValue(allow) } : {};
    const body: TargetPatchBody = { ...fields, config: cleaned, ...allowed };
    const create: TargetCreateBody = { ...fields, kind, config: cleaned, ...allowed };
    try {
      onSaved(
        target ? await patch<Target>(`/api/targets/${target.id}`, body) : await post<Target>('/api/targets', create),
      );
    } catch (err) {
      if (fromServer(err)) setPlaced(true);
      else setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal title={target ? t('targets.edit') : t('targets.add')} onClose={onClose} wide>
      <form class="stack" onSubmit={submit} noValidate>
        {!target && (
          <Field label={t('apprise.paste')} hints={[t('apprise.paste_help')]}>
            <div class="stack">
              <div class="row">
                <input
                  type="text"
                  spellcheck={false}
                  autocomplete="off"
                  value={appriseUrl}
                  data-testid="apprise-url"
                  onInput={(e) => setAppriseUrl(e.currentTarget.value)}
                  onKeyDown={(e) => {
                    if (e.key === 'Enter') {
                      e.preventDefault();
                      void fillFromUrl();
                    }
                  }}
                />
                <Button onClick={() => void fillFromUrl()} data-testid="apprise-fill">
                  {t('apprise.fill')}
                </Button>
              </div>
              {appriseNote?.ok && (
                <p class="note note-ok" role="status">
                  {appriseNote.ok}
                </p>
              )}
              {typeof appriseNote?.error === 'string' && (
                <p class="note note-warn" role="alert">
                  {appriseNote.error}
                </p>
              )}
              {appriseNote?.error !== undefined && typeof appriseNote.error !== 'string' && (
                <ErrorNote error={appriseNote.error} />
              )}
            </div>
          </Field>
        )}
        <div class="grid-2">
          <Field label={t('targets.kind')} hints={[plugin?.description]}>
            <select
              value={kind}
              disabled={Boolean(target)}
              data-testid="target-kind"
              onChange={(e) => {
                const k = e.currentTarget.value;
                form.set('kind', k);
                setConfig(initialConfig(kinds.find((p) => p.id === k)?.config_schema));
                reset();
                setPlaced(false);
              }}
            >
              {kinds.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.display_name}
                </option>
              ))}
            </select>
          </Field>
          <Field label={t('common.name')} error={nameError}>
            <input
              required
              maxLength={200}
              {...form.text('name')}
              onBlur={() => setNameShown(true)}
              data-testid="target-name"
            />
          </Field>
          <Field label={t('targets.locale')} hints={[t('targets.locale_help')]}>
            <select {...form.choice('locale', LOCALES)}>
              {LOCALES.map((l) => (
                <option key={l} value={l}>
                  {languageName(l)}
                </option>
              ))}
            </select>
          </Field>
          <label class="check check-field">
            <input type="checkbox" {...form.check('enabled')} />
            <span>{t('common.enabled')}</span>
          </label>
          <label class="check check-field" title={t('updates.follow_help')}>
            <input type="checkbox" {...form.check('update_messages')} data-testid="target-update-messages" />
            <span>{t('updates.follow')}</span>
          </label>
        </div>
        {plugin?.has_bot_driver && !bots.some((b) => b.kind === kind) && (
          <p class="note note-warn">{t('targets.needs_bot')}</p>
        )}
        {plugin && (
          <SchemaForm
            key={kind}
            schema={plugin.config_schema}
            value={config}
            onChange={setConfig}
            secretsSet={target?.secrets_set}
            bots={plugin.has_bot_driver ? bots.filter((b) => b.kind === kind) : undefined}
            checks={checks}
          />
        )}
        <OutboundAllowEditor value={allow} onChange={setAllow} editable={canAllow} />
        {placed && <FixBelow />}
        <ErrorNote error={error} />
        <div class="form-actions">
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type="submit" variant="primary" busy={busy}>
            {t('common.save')}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
