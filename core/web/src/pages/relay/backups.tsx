/**
 * Backups (administrators): create and download configuration backups, the schedule, and a
 * staged restore (upload, then apply with a restart or cancel).
 */
import { useRef, useState } from 'preact/hooks';
import { api, del, download, get, post, put } from '../../lib/api.ts';
import { useForm } from '../../lib/form.ts';
import { useAsync } from '../../lib/hooks.ts';
import { bytes, dateTime, num, t, tOr } from '../../lib/i18n.ts';
import type { BackupFiles, BackupSchedule as Schedule, StagedRestore } from '../../lib/types.ts';
import { Button, Card, ConfirmButton, Empty, ErrorNote, Loading, Note, Page } from '../../ui/basics.tsx';
import { Field } from '../../ui/field.tsx';
import { Modal } from '../../ui/modal.tsx';
import { toast } from '../../ui/toast.tsx';

const SECRET_MODES = ['exclude', 'include'] as const;
const CONFLICT_MODES = ['fail', 'skip', 'overwrite'] as const;

export function BackupsPage() {
  const files = useAsync(() => get<BackupFiles>('/api/backup/files').then((r) => r.files), []);
  const [mode, setMode] = useState<string>('exclude');
  const [busy, setBusy] = useState(false);
  const create = async () => {
    setBusy(true);
    try {
      await post('/api/backup/files', undefined, { secrets_mode: mode });
      toast.ok(t('backups.created'));
      void files.reload();
    } catch (err) {
      toast.error(err);
    } finally {
      setBusy(false);
    }
  };
  const fetchFile = (path: string, name: string) => download(path, name).catch(toast.error);
  return (
    <Page title={t('backups.title')} subtitle={t('backups.subtitle')}>
      <Card title={t('backups.create')}>
        <div class="upload">
          <label class="field">
            <span class="field-label">{t('backups.secrets_mode')}</span>
            <select value={mode} onChange={(e) => setMode(e.currentTarget.value)}>
              {SECRET_MODES.map((m) => (
                <option key={m} value={m}>
                  {t(`backups.secrets_${m}`)}
                </option>
              ))}
            </select>
          </label>
          <Button variant="primary" busy={busy} onClick={create}>
            {t('backups.create_button')}
          </Button>
          <Button
            icon="download"
            onClick={() => void fetchFile(`/api/backup/export?secrets_mode=${mode}`, 'backup.json')}
          >
            {t('backups.export')}
          </Button>
        </div>
        {mode === 'include' && <Note tone="warn">{t('backups.secrets_warning')}</Note>}
      </Card>
      <Card title={t('backups.files')}>
        <ErrorNote error={files.error} />
        {!files.data ? (
          files.error ? null : (
            <Loading />
          )
        ) : !files.data.length ? (
          <Empty>{t('backups.none')}</Empty>
        ) : (
          <div class="table-wrap">
            <table class="table">
              <thead>
                <tr>
                  <th>{t('backups.file')}</th>
                  <th>{t('documents.size')}</th>
                  <th>{t('reports.created')}</th>
                  <th>
                    <span class="sr-only">{t('common.actions')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {files.data.map((f) => (
                  <tr key={f.filename}>
                    <td>
                      <code>{f.filename}</code>
                    </td>
                    <td class="nowrap">{bytes(f.size_bytes)}</td>
                    <td class="nowrap">{dateTime(f.created_at)}</td>
                    <td class="row-actions">
                      <Button
                        small
                        icon="download"
                        data-testid="backup-download"
                        onClick={() =>
                          void fetchFile(`/api/backup/files/${encodeURIComponent(f.filename)}`, f.filename)
                        }
                      >
                        {t('reports.download')}
                      </Button>
                      <ConfirmButton
                        onConfirm={async () => {
                          await del(`/api/backup/files/${encodeURIComponent(f.filename)}`);
                          toast.ok(t('backups.deleted'));
                          void files.reload();
                        }}
                      />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Card>
      <ScheduleCard />
      <RestoreCard />
    </Page>
  );
}

function ScheduleCard() {
  const data = useAsync(() => get<Schedule>('/api/backup/scheduled'), []);
  if (!data.data)
    return <Card title={t('backups.schedule')}>{data.error ? <ErrorNote error={data.error} /> : <Loading />}</Card>;
  return <ScheduleForm initial={data.data} />;
}

/** The scheduled backup's settings, edited as the body PUT /api/backup/scheduled takes (kept as text). */
function ScheduleForm({ initial }: { initial: Schedule }) {
  const form = useForm<Schedule>(initial);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    try {
      form.merge(await put<Schedule>('/api/backup/scheduled', form.values));
      toast.ok(t('common.saved'));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Card title={t('backups.schedule')}>
      <form class="stack" onSubmit={submit}>
        <label class="check">
          <input
            type="checkbox"
            checked={form.values.backup_scheduled_enabled === 'true'}
            onChange={(e) => form.set('backup_scheduled_enabled', String(e.currentTarget.checked))}
          />
          <span>{t('backups.schedule_enabled')}</span>
        </label>
        <div class="grid-3">
          <label class="field">
            <span class="field-label">{t('backups.interval_hours')}</span>
            <input type="number" min={1} required {...form.text('backup_scheduled_interval_hours')} />
          </label>
          <label class="field">
            <span class="field-label">{t('backups.retention')}</span>
            <input type="number" min={1} required {...form.text('backup_retention_count')} />
          </label>
          <label class="field">
            <span class="field-label">{t('backups.secrets_mode')}</span>
            <select {...form.choice('backup_secrets_mode', SECRET_MODES)}>
              {SECRET_MODES.map((m) => (
                <option key={m} value={m}>
                  {t(`backups.secrets_${m}`)}
                </option>
              ))}
            </select>
          </label>
        </div>
        <ErrorNote error={error} />
        <div class="form-actions">
          <Button type="submit" variant="primary" busy={busy}>
            {t('common.save')}
          </Button>
        </div>
      </form>
    </Card>
  );
}

function RestoreCard() {
  // 204 (no body) means nothing is staged.
  const pending = useAsync(
    () => get<StagedRestore | undefined>('/api/backup/pending-restore').then((p) => p ?? null),
    [],
  );
  const [confirming, setConfirming] = useState(false);
  const file = useRef<HTMLInputElement>(null);
  const [conflict, setConflict] = useState<string>('fail');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const prepare = async (e: Event) => {
    e.preventDefault();
    const f = file.current?.files?.[0];
    if (!f) return;
    const form = new FormData();
    form.append('file', f);
    setBusy(true);
    setError(null);
    try {
      pending.set(
        await api<StagedRestore>('POST', '/api/backup/prepare-restore', { form, query: { conflict_mode: conflict } }),
      );
      toast.ok(t('backups.staged'));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const apply = async () => {
    setConfirming(false);
    setBusy(true);
    setError(null);
    try {
      await post('/api/backup/apply-restart');
      toast.ok(t('backups.restarting'));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const cancel = async () => {
    setBusy(true);
    setError(null);
    try {
      await del('/api/backup/pending-restore');
      pending.set(null);
      toast.ok(t('backups.cancelled'));
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  const p = pending.data;
  return (
    <Card title={t('backups.restore')}>
      <p class="hint">{t('backups.restore_help')}</p>
      <ErrorNote error={pending.error} />
      {p ? (
        <div class="stack" data-testid="staged-restore">
          <Note tone="warn">{t('backups.staged_note')}</Note>
          <dl class="facts">
            <dt>{t('backups.file')}</dt>
            <dd>
              <code>{p.source.filename}</code> · {bytes(p.source.size_bytes)}
            </dd>
            <dt>{t('backups.backup_of')}</dt>
            <dd>
              {dateTime(p.backup.created_at)} ·{' '}
              {t(`backups.secrets_${p.backup.secrets_mode === 'include' ? 'include' : 'exclude'}`)}
            </dd>
            <dt>{t('backups.conflict_mode')}</dt>
            <dd>{tOr(`backups.conflict_${p.conflict_mode}`, p.conflict_mode)}</dd>
            <dt>{t('backups.staged_at')}</dt>
            <dd>{dateTime(p.staged_at)}</dd>
          </dl>
          <div class="table-wrap">
            <table class="table compact">
              <thead>
                <tr>
                  <th>{t('backups.records')}</th>
                  <th class="num">{t('backups.created_n')}</th>
                  <th class="num">{t('backups.replaced_n')}</th>
                  <th class="num">{t('backups.kept_n')}</th>
                  <th class="num">{t('backups.unchanged_n')}</th>
                </tr>
              </thead>
              <tbody>
                {Object.entries(p.summary.counts).map(([table, c]) => (
                  <tr key={table} data-testid={`restore-kind-${table}`}>
                    <td>
                      {tOr(`backups.record_kind.${table}`, table)} <code class="muted small">{table}</code>
                    </td>
                    <td class="num">{num(c.created)}</td>
                    <td class="num">{num(c.replaced)}</td>
                    <td class="num">{num(c.kept)}</td>
                    <td class="num">{num(c.unchanged)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {[
            ...p.summary.warnings,
            ...p.summary.disabled.map((d) => `${d.table} ${d.id}: ${d.reason}`),
            ...p.summary.skipped.map((d) => `${d.table} ${d.id}: ${d.reason}`),
          ].map((w, i) => (
            <p key={i} class="small hint-danger">
              {w}
            </p>
          ))}
          <div class="form-actions">
            <Button onClick={cancel} busy={busy}>
              {t('backups.cancel_restore')}
            </Button>
            <Button variant="danger" onClick={() => setConfirming(true)} busy={busy}>
              {t('backups.apply_restart')}
            </Button>
          </div>
          {confirming && (
            <Modal title={t('backups.apply_confirm_title')} onClose={() => setConfirming(false)}>
              <div class="stack" data-testid="apply-confirm">
                <p>{t('backups.apply_confirm_text')}</p>
                <div class="form-actions">
                  <Button onClick={() => setConfirming(false)}>{t('common.cancel')}</Button>
                  <Button variant="danger" onClick={apply}>
                    {t('backups.apply_confirm_button')}
                  </Button>
                </div>
              </div>
            </Modal>
          )}
        </div>
      ) : pending.loading ? (
        <Loading />
      ) : (
        <form class="stack" onSubmit={prepare}>
          <div class="grid-2">
            <Field label={t('backups.file')}>
              <input ref={file} type="file" required accept=".json,application/json" data-testid="restore-file" />
            </Field>
            <Field label={t('backups.conflict_mode')} hints={[t(`backups.conflict_${conflict}_help`)]}>
              <select value={conflict} onChange={(e) => setConflict(e.currentTarget.value)}>
                {CONFLICT_MODES.map((m) => (
                  <option key={m} value={m}>
                    {t(`backups.conflict_${m}`)}
                  </option>
                ))}
              </select>
            </Field>
          </div>
          <div class="form-actions">
            <Button type="submit" variant="primary" busy={busy}>
              {t('backups.prepare')}
            </Button>
          </div>
        </form>
      )}
      <ErrorNote error={error} />
    </Card>
  );
}
