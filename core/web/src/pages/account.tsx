/**
 * The signed-in user's account: who they are, changing their password (the current one proves
 * it is them; every other session is signed out, this one goes on with the new token), and the
 * browsers that show their notifications (account-push.tsx), and this browser's theme (lib/theme.ts).
 */
import { useState } from 'preact/hooks';
import { ApiError, post, setToken } from '../lib/api.ts';
import { useForm } from '../lib/form.ts';
import { t } from '../lib/i18n.ts';
import { sessionNow, updateUser } from '../lib/session.ts';
import { setTheme, THEMES, type Theme, theme } from '../lib/theme.ts';
import type { PasswordChangeBody, Session } from '../lib/types.ts';
import { Button, Card, ErrorNote, Page } from '../ui/basics.tsx';
import { Field } from '../ui/field.tsx';
import { toast } from '../ui/toast.tsx';
import { NotifyThisBrowser } from './account-push.tsx';

/** Fewest characters the service accepts in a password (auth/passwords.ts). */
export const MIN_PASSWORD = 8;
/** bcrypt reads at most 72 bytes of a password; the service refuses longer ones. */
export const MAX_PASSWORD_BYTES = 72;

/** The problem with a new password and its repetition, in the user's words (null when both are fine). */
export function newPasswordProblems(
  password: string,
  repeat: string,
): { password: string | null; repeat: string | null } {
  let p: string | null = null;
  if (!password) p = t('field.required');
  else if ([...password].length < MIN_PASSWORD) p = t('field.min_length', { count: MIN_PASSWORD });
  else if (new TextEncoder().encode(password).length > MAX_PASSWORD_BYTES) p = t('account.password_too_long');
  return {
    password: p,
    repeat: !repeat ? t('field.required') : repeat !== password ? t('account.repeat_mismatch') : null,
  };
}

export function AccountPage() {
  const user = sessionNow().user;
  return (
    <Page title={t('account.title')} subtitle={user?.email}>
      <Card title={t('account.change_password')}>
        <ChangePassword />
      </Card>
      <NotifyThisBrowser />
      <Card title={t('theme.title')}>
        <ThemeChoice />
      </Card>
    </Page>
  );
}

/** Light, dark or as the system says; applies at once and is remembered in this browser. */
function ThemeChoice() {
  const [chosen, setChosen] = useState<Theme>(theme());
  return (
    <fieldset class="fieldset stack" data-testid="theme">
      <legend class="sr-only">{t('theme.title')}</legend>
      <p class="muted">{t('theme.lead')}</p>
      {THEMES.map((choice) => (
        <label key={choice} class="radio">
          <input
            type="radio"
            name="theme"
            value={choice}
            checked={chosen === choice}
            data-testid={`theme-${choice}`}
            onChange={() => {
              setTheme(choice);
              setChosen(choice);
            }}
          />
          <span>{t(`theme.${choice}`)}</span>
        </label>
      ))}
    </fieldset>
  );
}

function ChangePassword() {
  // The body, and the new password once more (checked here, never sent).
  const form = useForm<PasswordChangeBody & { repeat: string }>({ current_password: '', password: '', repeat: '' });
  const { current_password: current, password, repeat } = form.values;
  const [shown, setShown] = useState<ReadonlySet<string>>(new Set());
  const [wrongCurrent, setWrongCurrent] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const problems = newPasswordProblems(password, repeat);
  const show = (name: string) => setShown(new Set([...shown, name]));
  const currentError = wrongCurrent
    ? t('account.current_wrong')
    : shown.has('current') && !current
      ? t('field.required')
      : null;

  const submit = async (e: Event) => {
    e.preventDefault();
    setShown(new Set(['current', 'password', 'repeat']));
    if (!current || problems.password || problems.repeat) return;
    setBusy(true);
    setError(null);
    try {
      const body: PasswordChangeBody = { current_password: current, password };
      const res = await post<Session>('/api/auth/password', body);
      // Every token of this account was retired, this page's too: go on with the one the answer carries.
      setToken(res.access_token);
      updateUser(res.user);
      form.merge({ current_password: '', password: '', repeat: '' });
      setShown(new Set());
      toast.ok(t('account.password_changed'));
    } catch (err) {
      if (err instanceof ApiError && err.code === 'current_password_wrong') setWrongCurrent(true);
      else setError(err);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form class="stack account-form" onSubmit={submit} noValidate>
      <p class="muted">{t('account.change_password_lead')}</p>
      <Field label={t('account.current_password')} error={currentError}>
        <input
          type="password"
          autocomplete="current-password"
          data-testid="current-password"
          {...form.text('current_password')}
          onInput={(e) => {
            form.set('current_password', e.currentTarget.value);
            setWrongCurrent(false);
          }}
          onBlur={() => show('current')}
        />
      </Field>
      <Field
        label={t('account.new_password')}
        error={shown.has('password') ? problems.password : null}
        hints={[t('account.new_password_hint', { count: MIN_PASSWORD })]}
      >
        <input
          type="password"
          autocomplete="new-password"
          {...form.text('password')}
          data-testid="new-password"
          onBlur={() => show('password')}
        />
      </Field>
      <Field label={t('account.repeat_password')} error={shown.has('repeat') ? problems.repeat : null}>
        <input
          type="password"
          autocomplete="new-password"
          {...form.text('repeat')}
          data-testid="repeat-password"
          onBlur={() => show('repeat')}
        />
      </Field>
      <ErrorNote error={error} />
      <div class="form-actions">
        <Button type="submit" variant="primary" busy={busy} data-testid="change-password">
          {t('account.change_password')}
        </Button>
      </div>
    </form>
  );
}
