/**
 * Templates: per provider kind, event type and language, the default template text (and the user's
 * own, when saved) beside a live preview rendered from the user's last event of that type; the list
 * of the kind's event types shows where an own template is saved, and "Edit" opens the editor.
 */

import { useState } from 'preact/hooks';
import { ApiError, get } from '../../lib/api.ts';
import { oneOf } from '../../lib/form.ts';
import { useAsync } from '../../lib/hooks.ts';
import { dateTime, LOCALES, type Locale, locale, t } from '../../lib/i18n.ts';
import { navigate, useLocation } from '../../lib/router.ts';
import type { TemplateCatalog, TemplatePreview, TemplateText as Text } from '../../lib/types.ts';
import { Badge, Button, Card, ErrorNote, Loading, Note, Page } from '../../ui/basics.tsx';
import { eventLabel } from '../../ui/labels.ts';
import { languageName } from '../../ui/names.ts';
import { TemplateEditor } from './template-editor.tsx';

function TemplateText({ text, testid }: { text: Text; testid: string }) {
  return (
    <dl class="facts ops-template" data-testid={testid}>
      <dt>{t('ops.title_label')}</dt>
      <dd>
        <pre class="ops-pre">{text.title}</pre>
      </dd>
      <dt>{t('ops.body_label')}</dt>
      <dd>
        <pre class="ops-pre">{text.body || '—'}</pre>
      </dd>
    </dl>
  );
}

function PreviewCard({
  type,
  lang,
  hasEvent,
  version,
}: {
  type: string;
  lang: Locale;
  hasEvent: boolean;
  version: number;
}) {
  const p = useAsync(
    async () =>
      !hasEvent
        ? null
        : get<TemplatePreview>(`/api/templates/${encodeURIComponent(type)}/preview`, { locale: lang }).catch((err) => {
            if (err instanceof ApiError && err.code === 'no_event_for_preview') return null;
            throw err;
          }),
    [type, lang, hasEvent, version],
  );
  return (
    <Card title={t('ops.preview')}>
      {p.error ? (
        <ErrorNote error={p.error} />
      ) : p.data === undefined ? (
        <Loading />
      ) : p.data === null ? (
        <Note>{t('ops.no_preview', { event_type: eventLabel(type) })}</Note>
      ) : (
        <div data-testid="template-preview">
          <p class="muted small">
            {t('ops.preview_from', { time: dateTime(p.data.occurred_at), provider: p.data.provider_name ?? '—' })}
            {p.data.own_template ? ` ${t('ops.own_used')}` : ''}
          </p>
          <TemplateText text={p.data} testid="preview-text" />
        </div>
      )}
    </Card>
  );
}

export function TemplatesPage() {
  const loc = useLocation();
  const list = useAsync(
    () => get<TemplateCatalog>('/api/templates', { locale: locale() }).then((r) => r.templates),
    [locale()],
  );
  const all = list.data ?? [];
  const kinds = [...new Map(all.map((x) => [x.provider_kind, x.provider_name])).entries()];
  const kind = loc.query.get('kind') || kinds[0]?.[0] || '';
  const ofKind = all.filter((x) => x.provider_kind === kind);
  const type = ofKind.some((x) => x.event_type === loc.query.get('type'))
    ? loc.query.get('type')!
    : (ofKind[0]?.event_type ?? '');
  const q = loc.query.get('lang');
  const lang: Locale = q === 'en' || q === 'ru' ? q : locale();
  const entry = ofKind.find((x) => x.event_type === type);
  const go = (k: string, ty: string, l: Locale) =>
    navigate(`/templates?${new URLSearchParams({ kind: k, type: ty, lang: l }).toString()}`, true);
  const of = entry?.locales[lang];
  const [editing, setEditing] = useState<{ type: string; lang: Locale } | null>(null);
  const [version, setVersion] = useState(0);
  const edited = editing ? all.find((x) => x.event_type === editing.type) : undefined;
  const saved = () => {
    setEditing(null);
    setVersion((v) => v + 1);
    void list.reload();
  };

  return (
    <Page
      title={t('ops.templates_title')}
      subtitle={t('ops.templates_subtitle')}
      actions={
        <Button
          variant="primary"
          icon="edit"
          disabled={!entry}
          data-testid="edit-template"
          onClick={() => entry && setEditing({ type: entry.event_type, lang })}
        >
          {t('tpl_edit.edit_current')}
        </Button>
      }
    >
      <ErrorNote error={list.error} />
      {!list.data ? (
        <Loading />
      ) : (
        <>
          <div class="filters card ops-filters">
            <label class="field">
              <span class="field-label">{t('ops.provider_kind')}</span>
              <select value={kind} data-testid="template-kind" onChange={(e) => go(e.currentTarget.value, '', lang)}>
                {kinds.map(([k, name]) => (
                  <option key={k} value={k}>
                    {name}
                  </option>
                ))}
              </select>
            </label>
            <label class="field">
              <span class="field-label">{t('events.type')}</span>
              <select value={type} data-testid="template-type" onChange={(e) => go(kind, e.currentTarget.value, lang)}>
                {ofKind.map((x) => (
                  <option key={x.event_type} value={x.event_type} title={x.event_type}>
                    {eventLabel(x.event_type)}
                  </option>
                ))}
              </select>
            </label>
            <label class="field">
              <span class="field-label">{t('ops.template_language')}</span>
              <select
                value={lang}
                data-testid="template-lang"
                onChange={(e) => go(kind, type, oneOf(LOCALES, e.currentTarget.value) ?? lang)}
              >
                {LOCALES.map((l) => (
                  <option key={l} value={l}>
                    {languageName(l)}
                  </option>
                ))}
              </select>
            </label>
          </div>
          {entry && of && (
            <div class="ops-templates">
              <Card title={t('ops.default_template')}>
                {entry.description && <p class="muted small">{entry.description}</p>}
                {of.fallback && <Note tone="warn">{t('ops.fallback')}</Note>}
                <TemplateText text={of.default} testid="default-template" />
                {of.override && (
                  <>
                    <h3>{t('ops.own_template')}</h3>
                    <TemplateText text={of.override} testid="own-template" />
                  </>
                )}
              </Card>
              <PreviewCard
                type={entry.event_type}
                lang={lang}
                hasEvent={entry.last_event_at !== null}
                version={version}
              />
            </div>
          )}
          {ofKind.length > 0 && (
            <Card title={t('tpl_edit.list_title')} class="tpl-list-card">
              <p class="muted small">{t('tpl_edit.list_hint')}</p>
              <ul class="tpl-list" data-testid="template-list">
                {ofKind.map((x) => (
                  <li
                    key={x.event_type}
                    class={x.event_type === type ? 'tpl-row tpl-row-current' : 'tpl-row'}
                    data-testid="template-row"
                    data-type={x.event_type}
                  >
                    <a
                      class="tpl-row-name"
                      href={`#/templates?${new URLSearchParams({ kind, type: x.event_type, lang }).toString()}`}
                    >
                      <span title={x.event_type}>{eventLabel(x.event_type)}</span>
                    </a>
                    <span class="tpl-row-langs">
                      {LOCALES.map((l) => (
                        <span
                          key={l}
                          class="tpl-row-lang"
                          data-testid={`template-state-${l}`}
                          data-own={x.locales[l].override ? 'true' : 'false'}
                        >
                          <Badge tone={x.locales[l].override ? 'ok' : 'neutral'}>
                            {languageName(l)} · {x.locales[l].override ? t('tpl_edit.own') : t('tpl_edit.default')}
                          </Badge>
                          <Button
                            small
                            icon="edit"
                            aria-label={t('tpl_edit.edit_named', {
                              event_type: eventLabel(x.event_type),
                              in_language: t(`tpl_edit.in_language.${l}`),
                            })}
                            data-testid={`edit-${l}`}
                            onClick={() => setEditing({ type: x.event_type, lang: l })}
                          >
                            {t('tpl_edit.edit')}
                          </Button>
                        </span>
                      ))}
                    </span>
                  </li>
                ))}
              </ul>
            </Card>
          )}
          {editing && edited && (
            <TemplateEditor
              key={`${editing.type}/${editing.lang}`}
              type={editing.type}
              lang={editing.lang}
              fallback={edited.locales[editing.lang].default}
              own={edited.locales[editing.lang].override}
              hasEvent={edited.last_event_at !== null}
              onClose={() => setEditing(null)}
              onSaved={saved}
            />
          )}
        </>
      )}
    </Page>
  );
}
