/** The building blocks every page uses: page header, cards, badges, notes, buttons. */
import type { ButtonHTMLAttributes, ComponentChildren } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { t, tOr } from '../lib/i18n.ts';
import { Icon } from './icons.tsx';
import { errorText, toast } from './toast.tsx';

export function Page({
  title,
  subtitle,
  actions,
  children,
}: {
  title: string;
  subtitle?: string;
  actions?: ComponentChildren;
  children: ComponentChildren;
}) {
  useEffect(() => {
    document.title = `${title} · Herald`;
  }, [title]);
  return (
    <section class="page" aria-labelledby="page-title">
      <header class="page-head">
        <div>
          <h1 id="page-title" tabIndex={-1}>
            {title}
          </h1>
          {subtitle && <p class="muted">{subtitle}</p>}
        </div>
        {actions && <div class="page-actions">{actions}</div>}
      </header>
      {children}
    </section>
  );
}

export function Card({
  title,
  actions,
  children,
  class: cls = '',
}: {
  title?: ComponentChildren;
  actions?: ComponentChildren;
  children: ComponentChildren;
  class?: string;
}) {
  return (
    <div class={`card ${cls}`}>
      {(title || actions) && (
        <div class="card-head">
          {title && <h2>{title}</h2>}
          {actions && <div class="card-actions">{actions}</div>}
        </div>
      )}
      {children}
    </div>
  );
}

export type Tone = 'ok' | 'warn' | 'danger' | 'info' | 'neutral';
export const Badge = ({ tone = 'neutral', children }: { tone?: Tone; children: ComponentChildren }) => (
  <span class={`badge badge-${tone}`}>{children}</span>
);

const TONES: Record<string, Tone> = {
  ok: 'ok',
  running: 'ok',
  dispatched: 'ok',
  complete: 'ok',
  sent: 'ok',
  delivered: 'ok',
  active: 'ok',
  applied: 'ok',
  connected: 'ok',
  pending: 'info',
  queued: 'info',
  retrying: 'warn',
  deferred: 'warn',
  partial: 'warn',
  interrupted: 'warn',
  degraded: 'warn',
  staged: 'warn',
  not_ready: 'warn',
  starting: 'info',
  failed: 'danger',
  error: 'danger',
  auth_failed: 'danger',
  config_error: 'danger',
  inactive: 'danger',
  dropped: 'neutral',
  disabled: 'neutral',
};

/** A status from the service, translated when the client knows it, coloured by meaning. */
export function StatusBadge({ status }: { status: string }) {
  return <Badge tone={TONES[status] ?? 'neutral'}>{tOr(`status.${status}`, status)}</Badge>;
}

export const Loading = () => (
  <div class="loading" role="status">
    <span class="spinner" aria-hidden="true" />
    {t('common.loading')}
  </div>
);

export const Empty = ({ children }: { children: ComponentChildren }) => <div class="empty">{children}</div>;

export function ErrorNote({ error }: { error: unknown }) {
  if (!error) return null;
  return (
    <div class="note note-danger" role="alert">
      {errorText(error)}
    </div>
  );
}

export function Note({ tone = 'info', children }: { tone?: Tone; children: ComponentChildren }) {
  return <div class={`note note-${tone}`}>{children}</div>;
}

type ButtonProps = Omit<ButtonHTMLAttributes<HTMLButtonElement>, 'type'> & {
  variant?: 'primary' | 'ghost' | 'danger' | 'default';
  small?: boolean;
  icon?: string;
  busy?: boolean;
  type?: 'button' | 'submit';
  disabled?: boolean;
};

export function Button({
  variant = 'default',
  small,
  icon,
  busy,
  children,
  class: cls,
  type = 'button',
  disabled,
  ...rest
}: ButtonProps) {
  return (
    <button
      type={type}
      class={`btn btn-${variant}${small ? ' btn-sm' : ''} ${cls ?? ''}`}
      disabled={disabled || busy}
      aria-busy={busy ? 'true' : undefined}
      {...rest}
    >
      {busy ? <span class="spinner" aria-hidden="true" /> : icon ? <Icon name={icon} size={small ? 15 : 17} /> : null}
      {children}
    </button>
  );
}

/** A delete (or other destructive) button that asks once more in place before acting. */
export function ConfirmButton({
  onConfirm,
  label,
  confirmLabel,
  small = true,
}: {
  onConfirm: () => Promise<unknown> | void;
  label?: string;
  confirmLabel?: string;
  small?: boolean;
}) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  if (!asking) {
    return (
      <Button
        small={small}
        variant="ghost"
        icon="trash"
        onClick={() => {
          setAsking(true);
          timer.current = setTimeout(() => setAsking(false), 5000);
        }}
      >
        {label ?? t('common.delete')}
      </Button>
    );
  }
  return (
    <Button
      small={small}
      variant="danger"
      busy={busy}
      onClick={async () => {
        setBusy(true);
        try {
          await onConfirm();
        } catch (err) {
          toast.error(err);
        } finally {
          setBusy(false);
          setAsking(false);
        }
      }}
    >
      {confirmLabel ?? t('common.confirm_delete')}
    </Button>
  );
}

/**
 * A read-only value with a copy button (webhook URLs, connection values, commands): `shown` is
 * displayed in its place (a secret masked), `code` shows it as a block.
 */
export function CopyField({
  value,
  label,
  shown = value,
  code,
}: {
  value: string;
  label: string;
  shown?: string;
  code?: boolean;
}) {
  const ref = useRef<HTMLDivElement>(null);
  const id = useId();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      // Inside the wrapper: outside an open dialog, the page is inert.
      const area = document.createElement('textarea');
      area.value = value;
      ref.current?.append(area);
      area.select();
      document.execCommand('copy');
      area.remove();
    }
    toast.ok(t('common.copied'));
  };
  return (
    <div class={code ? 'copy copy-block' : 'copy'} ref={ref}>
      {code ? (
        <pre class="json" data-testid="copy-code">
          {shown}
        </pre>
      ) : (
        <>
          <label class="sr-only" for={id}>
            {label}
          </label>
          {/* A text area sized to its content: a long address wraps and shows whole, on a phone too. */}
          <textarea
            id={id}
            readOnly
            rows={1}
            spellcheck={false}
            value={shown}
            onFocus={(e) => e.currentTarget.select()}
            data-testid="copy-value"
          />
        </>
      )}
      <Button small icon="copy" onClick={copy} aria-label={t('connection.copy_what', { what: label })}>
        {t('common.copy')}
      </Button>
    </div>
  );
}

/** Pretty JSON for details panes. */
export const Json = ({ value }: { value: unknown }) => <pre class="json">{JSON.stringify(value, null, 2)}</pre>;
