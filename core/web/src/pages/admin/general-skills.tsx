/** General skills, visible to every user, managed by administrators. */
import { t } from '../../lib/i18n.ts';
import { Page } from '../../ui/basics.tsx';
import { SkillList } from '../../ui/skill-editor.tsx';

export function GeneralSkillsPage() {
  return (
    <Page title={t('admin.skills_title')} subtitle={t('admin.skills_subtitle')}>
      <SkillList base="/api/v1/admin/skills" editable={() => true} />
    </Page>
  );
}
