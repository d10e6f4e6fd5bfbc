/** User administration: role, active, chat limit, daily AI limits and storage limit (empty means the default). */
import { useState } from 'preact/hooks';
import { del, get, patch, post, put } from '../../lib/api.ts';
import { useForm } from '../../lib/form.ts';
import { useAsync } from '../../lib/hooks.ts';
import { dateTime, LOCALES, num, t } from '../../lib/i18n.ts';
import { sessionNow, updateUser } from '../../lib/session.ts';
import type { Settings, User, UserCreateBody, UserPatchBody } from '../../lib/types.ts';
import { Badge, Button, ConfirmButton, Empty, ErrorNote, Loading, Page, StatusBadge } from '../../ui/basics.tsx';
import { Field } from '../../ui/field.tsx';
import { Modal } from '../../ui/modal.tsx';
import { languageName } from '../../ui/names.ts';
import { toast } from '../../ui/toast.tsx';
import { newPasswordProblems } from '../account.tsx';

const ROLES: readonly User['role'][] = ['user', 'admin'];

export function UsersPage() {
  const data = useAsync(async () => {
    const [u, s] = await Promise.all([
      get<{ users: User[] }>('/api/v1/admin/users', { limit: 200 }),
      get<Settings>('/api/v1/admin/settings'),
    ]);
    return { users: u.users, settings: s };
  }, []);
  const [editing, setEditing] = useState<User | 'new' | null>(null);
  const [settingPassword, setSettingPassword] = useState<User | null>(null);
  const d = data.data;
  const me = sessionNow().user?.id;
  const limit = (v: number | null, fallback: number) =>
    v === null ? <span class="muted">{t('users.default_value', { value: num(fallback) })}</span> : num(v);
  return (
    <Page
      title={t('users.title')}
      subtitle={t('users.subtitle')}
      actions={
        <Button variant="primary" icon="plus" onClick={() => setEditing('new')}>
          {t('users.add')}
        </Button>
      }
    >
      <ErrorNote error={data.error} />
      {!d ? (
        <Loading />
      ) : !d.users.length ? (
        <Empty>{t('users.empty')}</Empty>
      ) : (
        <div class="table-wrap card">
          <table class="table">
            <thead>
              <tr>
                <th>{t('users.email')}</th>
                <th>{t('users.role')}</th>
                <th>{t('common.status')}</th>
                <th>{t('users.max_chats')}</th>
                <th>{t('users.messages_per_day')}</th>
                <th>{t('users.tokens_per_day')}</th>
                <th>{t('users.storage')}</th>
                <th>
                  <span class="sr-only">{t('common.actions')}</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {d.users.map((u) => (
                <tr key={u.id} data-testid="user-row">
                  <td>
                    <strong>{u.email}</strong>
                    {u.id === me && (
                      <>
                        {' '}
                        <Badge tone="info">{t('users.you')}</Badge>
                      </>
                    )}
                    {/* Under the address rather than a column of its own: the table fits at 1366 px in Russian. */}
                    <div class="muted small">
                      <span>{t('users.created')}</span> <span class="nowrap">{dateTime(u.created_at)}</span>
                    </div>
                  </td>
                  <td>
                    <Badge tone={u.role === 'admin' ? 'info' : 'neutral'}>{t(`users.role_${u.role}`)}</Badge>
                  </td>
                  <td>
                    <StatusBadge status={u.is_active ? 'active' : 'inactive'} />
                    {u.password_set === false && (
                      <>
                        {' '}
                        <Badge tone="warn">{t('account.no_password')}</Badge>
                      </>
                    )}
                  </td>
                  <td>{num(u.max_chats)}</td>
                  <td>{limit(u.max_ai_messages_per_day, d.settings.default_max_ai_messages_per_day)}</td>
                  <td>{limit(u.max_ai_tokens_per_day, d.settings.default_max_ai_tokens_per_day)}</td>
                  <td data-testid="user-storage">
                    {u.max_storage_mb == null ? (
                      <span class="muted">{t('users.storage_default')}</span>
                    ) : (
                      t('users.storage_mb', { value: num(u.max_storage_mb) })
                    )}
                  </td>
                  <td class="row-actions">
                    <Button small icon="edit" onClick={() => setEditing(u)}>
                      {t('common.edit')}
                    </Button>
                    {u.id !== me && (
                      <Button small onClick={() => setSettingPassword(u)} data-testid="set-password">
                        {t('account.set_password')}
                      </Button>
                    )}
                    {u.id !== me && (
                      <ConfirmButton
                        onConfirm={async () => {
                          await del(`/api/v1/admin/users/${u.id}`);
                          toast.ok(t('common.deleted'));
                          void data.reload();
                        }}
                      />
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {settingPassword && (
        <SetPasswordForm
          user={settingPassword}
          onClose={() => setSettingPassword(null)}
          onSaved={(u) => {
            setSettingPassword(null);
            toast.ok(t('account.password_set_done', { email: u.email }));
            void data.reload();
          }}
        />
      )}
      {editing && (
        <UserForm
          user={editing === 'new' ? undefined : editing}
          onClose={() => setEditing(null)}
          onSaved={(u) => {
            setEditing(null);
            updateUser(u);
            toast.ok(t('common.saved'));
            void data.reload();
          }}
        />
      )}
    </Page>
  );
}

/** What the form edits: the create body, every field present; max_chats null: the service's default. */
type Values = Omit<Required<UserCreateBody>, 'max_chats'> & { max_chats: number | null };

function UserForm({ user, onClose, onSaved }: { user?: User; onClose: () => void; onSaved: (u: User) => void }) {
  const form = useForm<Values>(() => ({
    email: '',
    password: '',
    locale: 'en',
    role: user?.role ?? 'user',
    is_active: user?.is_active ?? true,
    max_chats: user ? user.max_chats : null,
    max_ai_messages_per_day: user?.max_ai_messages_per_day ?? null,
    max_ai_tokens_per_day: user?.max_ai_tokens_per_day ?? null,
    max_storage_mb: user?.max_storage_mb ?? null,
  }));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const { email, password, locale, max_chats, ...settable } = form.values;
    // No chat limit typed: the service's default.
    const body: UserPatchBody = max_chats === null ? settable : { ...settable, max_chats };
    const create: UserCreateBody = { ...body, email, password, locale };
    try {
      onSaved(
        user
          ? await patch<User>(`/api/v1/admin/users/${user.id}`, body)
          : await post<User>('/api/v1/admin/users', create),
      );
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  type Limit = 'max_chats' | 'max_ai_messages_per_day' | 'max_ai_tokens_per_day' | 'max_storage_mb';
  const numberField = (label: string, key: Limit, testId: string, help?: string) => (
    <Field label={label} hints={[help]}>
      <input type="number" min={0} step={1} {...form.optionalNumber(key)} data-testid={testId} />
    </Field>
  );
  return (
    <Modal title={user ? t('users.edit', { email: user.email }) : t('users.add')} onClose={onClose} wide>
      <form class="stack" onSubmit={submit}>
        {!user && (
          <div class="grid-2">
            <label class="field">
              <span class="field-label">{t('users.email')}</span>
              <input type="email" required {...form.text('email')} />
            </label>
            <label class="field">
              <span class="field-label">{t('auth.password')}</span>
              <input type="password" autocomplete="new-password" required {...form.text('password')} />
            </label>
            <label class="field">
              <span class="field-label">{t('users.language')}</span>
              <select {...form.choice('locale', LOCALES)}>
                {LOCALES.map((l) => (
                  <option key={l} value={l}>
                    {languageName(l)}
                  </option>
                ))}
              </select>
            </label>
          </div>
        )}
        <div class="grid-2">
          <label class="field">
            <span class="field-label">{t('users.role')}</span>
            <select {...form.choice('role', ROLES)}>
              <option value="user">{t('users.role_user')}</option>
              <option value="admin">{t('users.role_admin')}</option>
            </select>
          </label>
          <label class="check check-field">
            <input type="checkbox" {...form.check('is_active')} />
            <span>{t('users.active')}</span>
          </label>
          {numberField(t('users.max_chats'), 'max_chats', 'user-max-chats', user ? undefined : t('users.default_hint'))}
        </div>
        <fieldset class="subform">
          <legend>{t('users.daily_limits')}</legend>
          <p class="hint">{t('users.daily_limits_help')}</p>
          <div class="grid-2">
            {numberField(t('users.messages_per_day'), 'max_ai_messages_per_day', 'user-messages')}
            {numberField(t('users.tokens_per_day'), 'max_ai_tokens_per_day', 'user-tokens')}
          </div>
        </fieldset>
        {numberField(t('users.storage_field'), 'max_storage_mb', 'user-storage-mb', t('users.storage_help'))}
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

/**
 * An administrator sets another user's password: every session of that user ends, and a user
 * restored from a backup without a password can log in again.
 */
function SetPasswordForm({ user, onClose, onSaved }: { user: User; onClose: () => void; onSaved: (u: User) => void }) {
  const [password, setPassword] = useState('');
  const [repeat, setRepeat] = useState('');
  const [shown, setShown] = useState(false);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const problems = newPasswordProblems(password, repeat);
  const submit = async (e: Event) => {
    e.preventDefault();
    setShown(true);
    if (problems.password || problems.repeat) return;
    setBusy(true);
    setError(null);
    try {
      onSaved(await put<User>(`/api/v1/admin/users/${user.id}/password`, { password }));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal title={t('account.set_password_for', { email: user.email })} onClose={onClose}>
      <form class="stack" onSubmit={submit} noValidate>
        <p class="muted">
          {user.password_set === false ? t('account.set_password_restored') : t('account.set_password_lead')}
        </p>
        <Field label={t('account.new_password')} error={shown ? problems.password : null}>
          <input
            type="password"
            autocomplete="new-password"
            value={password}
            data-testid="admin-new-password"
            onInput={(e) => setPassword(e.currentTarget.value)}
          />
        </Field>
        <Field label={t('account.repeat_password')} error={shown ? problems.repeat : null}>
          <input
            type="password"
            autocomplete="new-password"
            value={repeat}
            data-testid="admin-repeat-password"
            onInput={(e) => setRepeat(e.currentTarget.value)}
          />
        </Field>
        <ErrorNote error={error} />
        <div class="form-actions">
          <Button onClick={onClose}>{t('common.cancel')}</Button>
          <Button type="submit" variant="primary" busy={busy} data-testid="save-password">
            {t('account.set_password')}
          </Button>
        </div>
      </form>
    </Modal>
  );
}
