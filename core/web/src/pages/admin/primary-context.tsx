/** The primary context every conversation starts from; each save raises its version. */
import { t } from '../../lib/i18n.ts';
import { Page } from '../../ui/basics.tsx';
import { TextDoc } from '../../ui/text-doc.tsx';

export function PrimaryContextPage() {
  return (
    <Page title={t('admin.context_title')} subtitle={t('admin.context_subtitle')}>
      <TextDoc
        path="/api/v1/admin/context"
        max={200000}
        label={t('admin.context_label')}
        help={t('admin.context_help')}
      />
    </Page>
  );
}
