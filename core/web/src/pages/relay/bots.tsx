/** Messaging bots: the accounts that post to chats, and the chats each bot has seen. */
import { useState } from 'preact/hooks';
import { del, get, patch, post } from '../../lib/api.ts';
import { useForm } from '../../lib/form.ts';
import { useAsync } from '../../lib/hooks.ts';
import { dateTime, t } from '../../lib/i18n.ts';
import { usePlugins } from '../../lib/plugins.ts';
import { MASK } from '../../lib/schema.ts';
import type { Bot, BotChat, BotCreateBody, BotPatchBody } from '../../lib/types.ts';
import { Badge, Button, Card, ConfirmButton, Empty, ErrorNote, Loading, Page, StatusBadge } from '../../ui/basics.tsx';
import { problemText } from '../../ui/failures.ts';
import { Field } from '../../ui/field.tsx';
import { kindLabel } from '../../ui/labels.ts';
import { Modal } from '../../ui/modal.tsx';
import { toast } from '../../ui/toast.tsx';

export function BotsPage() {
  const list = useAsync(() => get<{ bots: Bot[] }>('/api/bots', { limit: 200 }).then((r) => r.bots), []);
  const [editing, setEditing] = useState<Bot | 'new' | null>(null);
  const plugins = usePlugins();
  return (
    <Page
      title={t('bots.title')}
      subtitle={t('bots.subtitle')}
      actions={
        <Button variant="primary" icon="plus" onClick={() => setEditing('new')}>
          {t('bots.add')}
        </Button>
      }
    >
      <ErrorNote error={list.error} />
      {!list.data ? (
        <Loading />
      ) : !list.data.length ? (
        <Empty>{t('bots.empty')}</Empty>
      ) : (
        <div class="cards">
          {list.data.map((b) => (
            <BotCard
              key={b.id}
              bot={b}
              kindName={kindLabel(b.kind, plugins.data, 'target')}
              onEdit={() => setEditing(b)}
              onDeleted={() => void list.reload()}
            />
          ))}
        </div>
      )}
      {editing && (
        <BotForm
          bot={editing === 'new' ? undefined : editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            toast.ok(t('common.saved'));
            void list.reload();
          }}
        />
      )}
    </Page>
  );
}

function BotCard({
  bot: b,
  kindName,
  onEdit,
  onDeleted,
}: {
  bot: Bot;
  kindName: string;
  onEdit: () => void;
  onDeleted: () => void;
}) {
  const [open, setOpen] = useState(false);
  return (
    <Card class="item-card" title={b.name} actions={<StatusBadge status={b.status} />}>
      <div class="meta">
        {b.username && <span>@{b.username}</span>}
        <Badge>{t(`bots.mode_${b.mode}`)}</Badge>
        <span class="muted" title={b.kind}>
          {kindName}
        </span>
      </div>
      {b.status_detail && (
        <p class="muted small" title={b.status_detail}>
          {problemText(b.status_detail)}
        </p>
      )}
      <div class="card-foot">
        <Button small variant="ghost" aria-expanded={open} onClick={() => setOpen(!open)}>
          {t('bots.chats')}
        </Button>
        <Button small icon="edit" onClick={onEdit}>
          {t('common.edit')}
        </Button>
        <ConfirmButton
          onConfirm={async () => {
            await del(`/api/bots/${b.id}`);
            toast.ok(t('common.deleted'));
            onDeleted();
          }}
        />
      </div>
      {open && <BotChats id={b.id} />}
    </Card>
  );
}

function BotChats({ id }: { id: string }) {
  const chats = useAsync(
    () => get<{ chats: BotChat[] }>(`/api/bots/${id}/chats`, { limit: 100 }).then((r) => r.chats),
    [id],
  );
  if (chats.error) return <ErrorNote error={chats.error} />;
  if (!chats.data) return <Loading />;
  if (!chats.data.length) return <p class="muted small">{t('bots.no_chats')}</p>;
  return (
    <div class="table-wrap">
      <table class="table compact">
        <thead>
          <tr>
            <th>{t('bots.chat')}</th>
            <th>{t('bots.chat_id')}</th>
            <th>{t('bots.last_seen')}</th>
          </tr>
        </thead>
        <tbody>
          {chats.data.map((c) => (
            <tr key={c.id}>
              <td>
                {c.title ?? (c.username ? `@${c.username}` : c.type)}
                {c.registered && (
                  <>
                    {' '}
                    <Badge tone="ok">{t('bots.registered')}</Badge>
                  </>
                )}
              </td>
              <td>
                <code>{c.chat_id}</code>
              </td>
              <td class="nowrap">{dateTime(c.last_seen_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function BotForm({ bot, onClose, onSaved }: { bot?: Bot; onClose: () => void; onSaved: () => void }) {
  // `kind` empty: the first kind offered.
  const form = useForm<Required<Omit<BotCreateBody, 'api_root'>>>({
    name: bot?.name ?? '',
    token: '',
    mode: bot?.mode ?? 'polling',
    kind: '',
  });
  const { token, mode, kind, ...named } = form.values;
  // The bot kinds are the enabled plugins with a bot driver; the choice is offered only when there are several.
  const kinds = (usePlugins().data ?? []).filter((p) => p.has_bot_driver);
  const chosen = kind || kinds[0]?.id;
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      const change: BotPatchBody = { ...named, mode, token: token || MASK };
      const create: BotCreateBody = { ...named, token, mode, ...(kinds.length > 1 && chosen ? { kind: chosen } : {}) };
      if (bot) await patch(`/api/bots/${bot.id}`, change);
      else await post('/api/bots', create);
      onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal title={bot ? t('bots.edit') : t('bots.add')} onClose={onClose}>
      <form class="stack" onSubmit={submit}>
        {!bot && kinds.length > 1 && (
          <label class="field">
            <span class="field-label">{t('bots.kind')}</span>
            <select
              {...form.choice(
                'kind',
                kinds.map((p) => p.id),
              )}
              value={chosen}
              data-testid="bot-kind"
            >
              {kinds.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.display_name}
                </option>
              ))}
            </select>
          </label>
        )}
        <label class="field">
          <span class="field-label">{t('common.name')}</span>
          <input required maxLength={200} {...form.text('name')} />
        </label>
        <Field label={t('bots.token')} hints={[bot ? t('form.secret_kept') : t('bots.token_help')]}>
          <input
            type="password"
            autocomplete="off"
            required={!bot}
            placeholder={bot ? MASK : ''}
            {...form.text('token')}
          />
        </Field>
        <fieldset class="subform">
          <legend>{t('bots.mode')}</legend>
          {(['polling', 'webhook'] as const).map((m) => (
            <label class="radio" key={m}>
              <input type="radio" name="mode" checked={mode === m} onChange={() => form.set('mode', m)} />
              <span>
                <strong>{t(`bots.mode_${m}`)}</strong>
                <small class="hint">{t(`bots.mode_${m}_help`)}</small>
              </span>
            </label>
          ))}
        </fieldset>
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
