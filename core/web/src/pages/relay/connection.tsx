/**
 * What to paste into the sending app, for a webhook provider: its URL, the values a dialect's app
 * asks for one by one (`webhook_connection`, labelled by the service), a command that sends a
 * test (the plugin's `webhook_example`, else a JSON POST for the generic webhook, whose payload is
 * free-form), each with a copy button and secrets hidden until shown; and, for a kind that takes
 * mail while the SMTP listener is off, what the operator must set.
 */
import { useState } from 'preact/hooks';
import { t } from '../../lib/i18n.ts';
import type { Provider } from '../../lib/types.ts';
import { Button, CopyField, Note } from '../../ui/basics.tsx';
import { InlineMd } from '../../ui/inline-md.tsx';

const MASK = '••••••••';
/** A value in single quotes for a POSIX shell. */
const quote = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;
/** The payload path a mapping reads first: `alert.title || name` → alert.title, `{{build.name}} done` → build.name. */
const pathOf = (v: unknown) =>
  typeof v === 'string'
    ? (/\{\{\s*([\w.]+)\s*\}\}/.exec(v) ?? /^\s*([A-Za-z_][\w.]*)\s*(\|\||$)/.exec(v))?.[1]
    : undefined;

/**
 * The generic webhook's test (its config has auth_mode): a JSON POST filling its mapping's title
 * and body paths, with the shared secret ($SECRET) as its auth mode sends it.
 */
export function jsonExample(p: Provider): string | null {
  if (!p.webhook_url || !p.auth_mode) return null;
  const body: Record<string, unknown> = {};
  const mapping = (p.config.mapping ?? {}) as Record<string, unknown>;
  for (const [field, text] of [
    ['title', t('connection.sample_title')],
    ['body', t('connection.sample_body')],
  ]) {
    const keys = pathOf(mapping[field])?.split('.') ?? [];
    let at = body;
    for (const k of keys.slice(0, -1))
      at = (typeof at[k] === 'object' ? at[k] : (at[k] = {})) as Record<string, unknown>;
    if (keys.length) at[keys.at(-1)!] ??= text;
  }
  const json = quote(JSON.stringify(body));
  const head = `curl -H 'Content-Type: application/json'`;
  if (p.auth_mode === 'hmac_sha256') {
    const signature = `$(printf %s "$BODY" | openssl dgst -sha256 -hmac "$SECRET" -r | cut -d' ' -f1)`;
    return `BODY=${json}; ${head} -H "X-Signature-256: sha256=${signature}" -d "$BODY" ${quote(p.webhook_url)}`;
  }
  const bearer = p.auth_mode === 'bearer' ? ' -H "Authorization: Bearer $SECRET"' : '';
  return `${head}${bearer} -d ${json} ${quote(p.webhook_url)}`;
}

/** `open`: the example unfolded (right after creating the provider). */
export function ConnectionPanel({ provider: p, open }: { provider: Provider; open?: boolean }) {
  const [shown, setShown] = useState(false);
  if (!p.webhook_url) return null;
  const fields = p.webhook_connection ?? [];
  const secrets = fields.filter((f) => f.secret && f.value).map((f) => f.value);
  const hide = (v: string) => (shown ? v : secrets.reduce((s, x) => s.replaceAll(x, MASK), v));
  const example = p.webhook_example ?? jsonExample(p);
  // The URL, unless a value below is that same URL (the Apprise URL).
  const rows = fields.some((f) => f.value === p.webhook_url)
    ? fields
    : [
        {
          key: 'webhook_url',
          label: t('providers.webhook_url'),
          hint: t('providers.webhook_help'),
          value: p.webhook_url,
        },
        ...fields,
      ];
  return (
    <div class="stack" data-testid="connection">
      {rows.map((f) => (
        <div class="field" key={f.key} data-testid={`connection-${f.key}`}>
          <span class="field-label">{f.label}</span>
          <CopyField value={f.value} label={f.label} shown={hide(f.value)} />
          {f.hint && (
            <small class="hint">
              <InlineMd text={f.hint} />
            </small>
          )}
        </div>
      ))}
      {secrets.length > 0 && (
        <div>
          <Button small variant="ghost" aria-pressed={shown} onClick={() => setShown(!shown)}>
            {shown ? t('connection.hide') : t('connection.show')}
          </Button>
        </div>
      )}
      {p.smtp_listener_off && <Note tone="warn">{t('connection.smtp_off')}</Note>}
      {example && (
        <details class="field" open={open} data-testid="connection-example">
          <summary class="field-label">{t('connection.example')}</summary>
          <CopyField code value={example} label={t('connection.example')} shown={hide(example)} />
          {example.includes('$SECRET') && <small class="hint">{t('connection.secret_var')}</small>}
        </details>
      )}
    </div>
  );
}
