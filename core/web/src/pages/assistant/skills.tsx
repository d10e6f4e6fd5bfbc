/** The caller's skills: their own (editable) and the general ones (read-only). */
import { t } from '../../lib/i18n.ts';
import { Page } from '../../ui/basics.tsx';
import { SkillList } from '../../ui/skill-editor.tsx';

export function SkillsPage() {
  return (
    <Page title={t('skills.title')} subtitle={t('skills.subtitle')}>
      <SkillList base="/api/v1/skills" editable={(s) => s.scope === 'personal'} />
    </Page>
  );
}
