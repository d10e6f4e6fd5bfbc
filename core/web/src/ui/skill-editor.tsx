/** Skill list and editor, shared by personal skills and the administrators' general skills. */
import { useState } from 'preact/hooks';
import { del, get, patch, post } from '../lib/api.ts';
import { useForm } from '../lib/form.ts';
import { useAsync } from '../lib/hooks.ts';
import { t } from '../lib/i18n.ts';
import type { Skill, SkillCreateBody } from '../lib/types.ts';
import { Badge, Button, Card, ConfirmButton, Empty, ErrorNote, Loading } from './basics.tsx';
import { Field } from './field.tsx';
import { Modal } from './modal.tsx';
import { toast } from './toast.tsx';

export function SkillList({ base, editable }: { base: string; editable: (s: Skill) => boolean }) {
  const list = useAsync(() => get<{ skills: Skill[] }>(base).then((r) => r.skills), [base]);
  const [editing, setEditing] = useState<Skill | 'new' | null>(null);
  return (
    <>
      <div class="toolbar">
        <Button variant="primary" icon="plus" onClick={() => setEditing('new')}>
          {t('skills.add')}
        </Button>
      </div>
      <ErrorNote error={list.error} />
      {!list.data ? (
        <Loading />
      ) : !list.data.length ? (
        <Empty>{t('skills.empty')}</Empty>
      ) : (
        <div class="cards">
          {list.data.map((s) => (
            <Card
              key={s.id}
              class="item-card"
              title={s.name}
              actions={<Badge tone={s.scope === 'general' ? 'info' : 'neutral'}>{t(`skills.${s.scope}`)}</Badge>}
            >
              {s.description && <p class="muted small">{s.description}</p>}
              <p class="clamp">{s.prompt}</p>
              {editable(s) && (
                <div class="card-foot">
                  <Button small icon="edit" onClick={() => setEditing(s)}>
                    {t('common.edit')}
                  </Button>
                  <ConfirmButton
                    onConfirm={async () => {
                      await del(`${base}/${s.id}`);
                      toast.ok(t('common.deleted'));
                      void list.reload();
                    }}
                  />
                </div>
              )}
            </Card>
          ))}
        </div>
      )}
      {editing && (
        <SkillForm
          base={base}
          skill={editing === 'new' ? undefined : editing}
          onClose={() => setEditing(null)}
          onSaved={() => {
            setEditing(null);
            toast.ok(t('common.saved'));
            void list.reload();
          }}
        />
      )}
    </>
  );
}

function SkillForm({
  base,
  skill,
  onClose,
  onSaved,
}: {
  base: string;
  skill?: Skill;
  onClose: () => void;
  onSaved: () => void;
}) {
  const form = useForm<Required<SkillCreateBody>>({
    name: skill?.name ?? '',
    description: skill?.description ?? null,
    prompt: skill?.prompt ?? '',
  });
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const body: SkillCreateBody = form.values;
    try {
      if (skill) await patch(`${base}/${skill.id}`, body);
      else await post(base, body);
      onSaved();
    } catch (err) {
      setError(err);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Modal title={skill ? t('skills.edit') : t('skills.add')} onClose={onClose} wide>
      <form class="stack" onSubmit={submit}>
        <label class="field">
          <span class="field-label">{t('common.name')}</span>
          <input required maxLength={200} {...form.text('name')} />
        </label>
        <label class="field">
          <span class="field-label">{t('skills.description')}</span>
          <input maxLength={2000} {...form.optionalText('description')} />
        </label>
        <Field label={t('skills.prompt')} hints={[t('skills.prompt_help')]}>
          <textarea required rows={8} maxLength={32000} {...form.text('prompt')} />
        </Field>
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
