/** First-run setup and login: a centred card, outside the sidebar layout. */
import type { ComponentChildren } from 'preact';
import { useState } from 'preact/hooks';
import { post } from '../../lib/api.ts';
import { locale, t } from '../../lib/i18n.ts';
import { current, navigate } from '../../lib/router.ts';
import { loggedIn } from '../../lib/session.ts';
import type { Session } from '../../lib/types.ts';
import { Button, ErrorNote } from '../../ui/basics.tsx';
import { Field } from '../../ui/field.tsx';
import { Icon } from '../../ui/icons.tsx';
import { LanguageSwitch } from '../../ui/language.tsx';

function AuthCard({ title, lead, children }: { title: string; lead: string; children: ComponentChildren }) {
  return (
    <main class="auth">
      <div class="auth-card card">
        <div class="brand brand-lg">
          <Icon name="logo" size={28} />
          <span>{t('app.name')}</span>
        </div>
        <h1>{title}</h1>
        <p class="muted">{lead}</p>
        {children}
        <div class="auth-foot">
          <LanguageSwitch />
        </div>
      </div>
    </main>
  );
}

/** Where to go after logging in: the page that sent us here, never back to login. */
function nextPath(): string {
  const next = current().query.get('next');
  return next && next.startsWith('/') && !next.startsWith('/login') ? next : '/';
}

export function LoginPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const res = await post<Session>('/api/auth/login', { email, password });
      await loggedIn(res);
      navigate(nextPath(), true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <AuthCard title={t('auth.login_title')} lead={t('auth.login_lead')}>
      <form class="stack" onSubmit={submit}>
        <label class="field">
          <span class="field-label">{t('auth.email')}</span>
          <input
            type="email"
            name="email"
            autocomplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <label class="field">
          <span class="field-label">{t('auth.password')}</span>
          <input
            type="password"
            name="password"
            autocomplete="current-password"
            required
            value={password}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </label>
        <ErrorNote error={error} />
        <Button type="submit" variant="primary" busy={busy}>
          {t('auth.login')}
        </Button>
      </form>
    </AuthCard>
  );
}

export function SetupPage() {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const mismatch = repeat !== '' && repeat !== password;
  const tooLong = new TextEncoder().encode(password).length > 72;
  const submit = async (e: Event) => {
    e.preventDefault();
    if (mismatch || tooLong) return;
    setBusy(true);
    setError(null);
    try {
      const res = await post<Session>('/api/setup', { email, password, locale: locale() });
      await loggedIn(res);
      navigate('/', true);
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <AuthCard title={t('auth.setup_title')} lead={t('auth.setup_lead')}>
      <form class="stack" onSubmit={submit}>
        <label class="field">
          <span class="field-label">{t('auth.admin_email')}</span>
          <input
            type="email"
            name="email"
            autocomplete="username"
            required
            value={email}
            onInput={(e) => setEmail(e.currentTarget.value)}
          />
        </label>
        <Field label={t('auth.password')} hints={[{ text: t('auth.password_rules'), danger: tooLong }]}>
          <input
            type="password"
            name="password"
            autocomplete="new-password"
            required
            minLength={8}
            value={password}
            aria-invalid={tooLong}
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <Field
          label={t('auth.password_repeat')}
          hints={[mismatch && { text: t('auth.password_mismatch'), danger: true }]}
        >
          <input
            type="password"
            name="repeat"
            autocomplete="new-password"
            required
            value={repeat}
            aria-invalid={mismatch}
            onInput={(e) => setRepeat(e.currentTarget.value)}
          />
        </Field>
        <ErrorNote error={error} />
        <Button type="submit" variant="primary" busy={busy} disabled={mismatch || tooLong}>
          {t('auth.create_admin')}
        </Button>
      </form>
    </AuthCard>
  );
}
