/** The caller's personal context, added to every conversation. */
import { t } from '../../lib/i18n.ts';
import { Page } from '../../ui/basics.tsx';
import { TextDoc } from '../../ui/text-doc.tsx';

export function ContextPage() {
  return (
    <Page title={t('context.title')} subtitle={t('context.subtitle')}>
      <TextDoc
        path="/api/v1/users/me/context"
        max={32000}
        label={t('context.personal_label')}
        help={t('context.personal_help')}
      />
    </Page>
  );
}
