/** Create or edit a provider: kind, name, the plugin's config fields, and webhook authentication. */
import { useState } from 'preact/hooks';
import { patch, post } from '../../lib/api.ts';
import { oneOf, useForm } from '../../lib/form.ts';
import { t } from '../../lib/i18n.ts';
import { hasAuthMode } from '../../lib/plugins.ts';
import { cleanConfig, initialConfig } from '../../lib/schema.ts';
import type { AuthMode, Plugin, Provider, ProviderCreateBody, ProviderPatchBody } from '../../lib/types.ts';
import { Button, ErrorNote, Note } from '../../ui/basics.tsx';
import { Field } from '../../ui/field.tsx';
import { Modal } from '../../ui/modal.tsx';
import { FixBelow, SchemaForm, useFormChecks } from '../../ui/schema-form.tsx';
import { allowEntryOk, allowValue, OutboundAllowEditor, useCanSetAllow } from './outbound-allow.tsx';

const AUTH_MODES: readonly AuthMode[] = ['hmac_sha256', 'bearer', 'none'];

/** What the form edits: the create body, every field present (the plugin's config and allow list kept apart). */
type Values = Omit<Required<ProviderCreateBody>, 'config' | 'outbound_allow'>;

export function ProviderForm({
  plugins,
  provider,
  onClose,
  onSaved,
}: {
  plugins: Plugin[];
  provider?: Provider;
  onClose: () => void;
  onSaved: (p: Provider) => void;
}) {
  const creatable = plugins.filter((p) => p.kind === 'provider' && !p.core_managed);
  const form = useForm<Values>(() => {
    const kind = provider?.kind ?? creatable[0]?.id ?? '';
    const schema = plugins.find((p) => p.kind === 'provider' && p.id === kind)?.config_schema;
    return {
      kind,
      name: provider?.name ?? '',
      enabled: provider?.enabled ?? true,
      auth_mode:
        oneOf(AUTH_MODES, provider?.auth_mode ?? String(schema?.properties?.auth_mode?.default ?? '')) ?? 'hmac_sha256',
      acknowledge_unauthenticated: provider?.acknowledge_unauthenticated ?? false,
    };
  });
  const { kind, name, auth_mode: authMode } = form.values;
  const plugin = plugins.find((p) => p.kind === 'provider' && p.id === kind);
  const [config, setConfig] = useState(() => initialConfig(plugin?.config_schema, provider?.config));
  const canAllow = useCanSetAllow();
  const [allow, setAllow] = useState<string[]>(() => provider?.outbound_allow ?? []);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const auth = hasAuthMode(plugin);
  const skip = ['auth_mode', 'acknowledge_unauthenticated'];
  const { checks, validate, fromServer, reset } = useFormChecks(
    plugin?.config_schema,
    config,
    provider?.secrets_set,
    skip,
  );
  const [placed, setPlaced] = useState(false);
  const [nameShown, setNameShown] = useState(false);
  const nameError = nameShown && !name.trim() ? t('field.required') : null;

  const pickKind = (id: string) => {
    form.set('kind', id);
    setConfig(initialConfig(plugins.find((p) => p.kind === 'provider' && p.id === id)?.config_schema));
    reset();
    setPlaced(false);
  };

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!plugin) return;
    setNameShown(true);
    // Checked here first, in the user's words; the service checks again and its field problems land under the fields
    // too.
    if (!validate() || !name.trim() || !allowValue(allow).every(allowEntryOk)) return;
    setBusy(true);
    setError(null);
    setPlaced(false);
    const cfg = cleanConfig(plugin.config_schema, config, provider?.secrets_set);
    delete cfg.auth_mode;
    delete cfg.acknowledge_unauthenticated;
    const { kind: _, auth_mode, acknowledge_unauthenticated, ...fields } = form.values;
    const body: ProviderPatchBody = {
      ...fields,
      config: cfg,
      ...(auth && {
        auth_mode,
        acknowledge_unauthenticated: auth_mode === 'none' ? acknowledge_unauthenticated : false,
      }),
      // Only an administrator may send it (the service refuses anyone else).
      ...(canAllow && { outbound_allow: allowValue(allow) }),
    };
    const create: ProviderCreateBody = { ...body, kind, name: fields.name, config: cfg };
    try {
      const saved = provider
        ? await patch<Provider>(`/api/providers/${provider.id}`, body)
        : await post<Provider>('/api/providers', create);
      onSaved(saved);
    } catch (err) {
      if (fromServer(err)) setPlaced(true);
      else setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <Modal title={provider ? t('providers.edit') : t('providers.add')} onClose={onClose} wide>
      <form class="stack" onSubmit={submit} noValidate>
        <div class="grid-2">
          <Field label={t('providers.kind')} hints={[plugin?.description]}>
            <select
              value={kind}
              disabled={Boolean(provider)}
              onChange={(e) => pickKind(e.currentTarget.value)}
              data-testid="provider-kind"
            >
              {creatable.map((p) => (
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
              data-testid="provider-name"
            />
          </Field>
        </div>
        <label class="check">
          <input type="checkbox" {...form.check('enabled')} />
          <span>{t('common.enabled')}</span>
        </label>
        {auth && (
          <fieldset class="subform">
            <legend>{t('providers.auth_mode')}</legend>
            <p class="hint">{t('providers.auth_mode_lead')}</p>
            {AUTH_MODES.map((m) => (
              <label class="radio" key={m}>
                <input
                  type="radio"
                  name="auth_mode"
                  value={m}
                  checked={authMode === m}
                  onChange={() => form.set('auth_mode', m)}
                />
                <span>
                  <strong>{t(`providers.auth_${m}`)}</strong>
                  <small class="hint">{t(`providers.auth_${m}_help`)}</small>
                </span>
              </label>
            ))}
            {authMode === 'none' && (
              <Note tone="warn">
                <p>{t('providers.auth_none_warning')}</p>
                <label class="check">
                  <input type="checkbox" {...form.check('acknowledge_unauthenticated')} data-testid="acknowledge" />
                  <span>{t('providers.acknowledge_unauthenticated')}</span>
                </label>
              </Note>
            )}
          </fieldset>
        )}
        {plugin && (
          <SchemaForm
            key={kind}
            schema={plugin.config_schema}
            value={config}
            onChange={setConfig}
            secretsSet={provider?.secrets_set}
            skip={skip}
            checks={checks}
          />
        )}
        <OutboundAllowEditor value={allow} onChange={setAllow} editable={canAllow} />
        {placed && <FixBelow />}
        <ErrorNote error={error} />
        <div class="form-actions">
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button
            type="submit"
            variant="primary"
            busy={busy}
            disabled={auth && authMode === 'none' && !form.values.acknowledge_unauthenticated}
          >
            {t('common.save')}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
