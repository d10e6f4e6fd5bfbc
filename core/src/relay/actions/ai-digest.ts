/**
 * The scheduled action kind `ai_digest`: on its schedule the model summarises the owner's events
 * since the last run (counts, then the few that matter, grouped, critical first), once per
 * language of the action's targets, and the summary goes to the targets through the normal
 * pipeline as one event of type `ai_digest` (source `action`), each target getting it in its
 * language. The payload records the tokens spent, which count against the owner's daily token
 * quota. When the quota is spent, the assistant is not configured or the model fails, that
 * language falls back to the plain digest (the events listed), saying why.
 */

import { ASSISTANT_SOURCE } from '../../assistant/lab-actions.ts';
import { type Lang, lab, langOf } from '../../assistant/lab-strings.ts';
import type { ModelClient } from '../../assistant/model.ts';
import type { Models } from '../../assistant/models.ts';
import type { Quotas } from '../../assistant/quotas.ts';
import type { Core } from '../../core.ts';
import type { Severity } from '../../plugin-api/index.ts';
import type { ActionDbRow, StoredActionConfig } from '../definitions/action.ts';
import type { EventDbRow } from '../definitions/event.ts';
import { DIGEST_SOURCE, pluralForms } from '../pipeline/digest.ts';
import { catalogOf, oneLine, overridesFor, renderEvent } from '../routes/templates.ts';
import { emitOwn } from './emit.ts';

export const AI_DIGEST = 'ai_digest';
/** Events listed per language: to the model, and in the plain digest. */
const LISTED = 60;
/** The longest summary the model may write. */
const SUMMARY_TOKENS = 700;
const MODEL_TIMEOUT_MS = 90_000;
const RANK: Record<string, number> = { critical: 2, warning: 1, info: 0 };

export interface DigestUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** What one run sent: the event, and per language whether the model wrote it or why not. */
export interface AiDigestRun {
  eventId: string;
  usage: DigestUsage;
  fallback: Partial<Record<Lang, string>>;
}

/** Events a digest summarises: those providers raised, not what actions, the assistant or quiet-hours digests sent. */
const OWN_SOURCES = ['action', ASSISTANT_SOURCE, DIGEST_SOURCE];

export async function runAiDigest(
  core: Core,
  a: ActionDbRow,
  config: Pick<StoredActionConfig, 'target_ids' | 'provider_ids'>,
  now: Date,
): Promise<AiDigestRun> {
  const db = core.db;
  const ids = config.target_ids ?? [];
  const targets = ids.length
    ? await db.all<{ id: string; locale: string }>(
        `SELECT id, locale FROM targets WHERE user_id = ? AND id IN (${ids.map(() => '?').join(',')})`,
        [a.user_id, ...ids],
      )
    : [];
  if (!targets.length) throw new Error('none of the targets of this action exists any more');
  const since = a.last_run_at ?? a.created_at;
  const params: unknown[] = [a.user_id, since, now.toISOString(), ...OWN_SOURCES];
  let where =
    'e.user_id = ? AND e.created_at > ? AND e.created_at <= ? AND e.provider_kind NOT IN ' +
    `(${OWN_SOURCES.map(() => '?').join(',')})`;
  const providers = config.provider_ids ?? [];
  if (providers.length) {
    where += ` AND e.provider_id IN (${providers.map(() => '?').join(',')})`;
    params.push(...providers);
  }
  const from = `FROM event_log e LEFT JOIN providers p ON p.id = e.provider_id WHERE ${where}`;
  const count = Number(
    (await db.get<{ n: number | string }>(`SELECT COUNT(*) AS n ${from}`, params as never[]))?.n ?? 0,
  );
  // The ones that matter first: critical, then warnings, newest first within each.
  const rows = await db.all<EventDbRow>(
    `SELECT e.*, p.name AS provider_name ${from}
    ORDER BY CASE e.severity WHEN 'critical' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END, e.id DESC LIMIT ?`,
    [...params, LISTED] as never[],
  );
  const counts = count ? await countsOf(core, from, params) : null;

  const langs = [...new Set(targets.map((t) => langOf(t.locale)))].sort() as Lang[];
  const catalog = catalogOf(core);
  const lines = new Map<Lang, string[]>();
  const texts = new Map<string, Partial<Record<Lang, string>>>();
  for (const l of langs) {
    const overrides = await overridesFor(
      db,
      a.user_id,
      rows.map((r) => r.event_type),
      l,
    );
    lines.set(
      l,
      rows.map((r) => {
        const message = oneLine(renderEvent(catalog, r, l, overrides.get(r.event_type)));
        texts.set(r.id, { ...texts.get(r.id), [l]: message });
        return (
          `- [${r.severity}] ${r.occurred_at} · ${r.provider_name ?? r.provider_kind} · ` +
          `${r.event_type}${r.dispatch_status === 'failed' ? ' · delivery failed' : ''} — ${message}`
        );
      }),
    );
  }

  const usage: DigestUsage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  const summary: Partial<Record<Lang, string>> = {};
  const fallback: Partial<Record<Lang, string>> = {};
  const fallbackReason: Partial<Record<Lang, string>> = {};
  const model = core.services.get('assistant.model') as ModelClient | undefined;
  const quotas = core.services.get('assistant.quotas') as Quotas | undefined;
  const models = core.services.get('assistant.models') as Models | undefined;
  const owner = await db.get<{
    id: string;
    max_ai_messages_per_day: number | null;
    max_ai_tokens_per_day: number | null;
  }>('SELECT id, max_ai_messages_per_day, max_ai_tokens_per_day FROM users WHERE id = ?', [a.user_id]);
  const log = core.logs.get('relay');
  let modelName: string | null = null;
  if (count > 0) {
    for (const l of langs) {
      if (!model?.configured || !quotas || !owner) {
        fallback[l] = 'not_configured';
        fallbackReason[l] = lab(l, 'digest.fallback.not_configured');
        continue;
      }
      if (!(await quotas.tokensLeft(owner))) {
        fallback[l] = 'quota';
        fallbackReason[l] = lab(l, 'digest.fallback.quota');
        continue;
      }
      const more = count > rows.length ? lab(l, 'digest.more', { shown: rows.length }) : '';
      const prompt = [
        lab(l, 'digest.events', { since, count, more }),
        ...(lines.get(l) ?? []),
        '',
        `${lab(l, 'digest.counts')}: ${JSON.stringify(counts)}`,
      ].join('\n');
      try {
        modelName ??= models ? await models.forChat(null) : model.model;
        const r = await model.complete(
          [
            { role: 'system', content: lab(l, 'digest.system') },
            { role: 'user', content: prompt },
          ],
          { maxTokens: SUMMARY_TOKENS, signal: AbortSignal.timeout(MODEL_TIMEOUT_MS), model: modelName },
        );
        usage.prompt_tokens += r.usage.prompt_tokens;
        usage.completion_tokens += r.usage.completion_tokens;
        usage.total_tokens += r.usage.total_tokens;
        await quotas.spendTokens(owner.id, r.usage.total_tokens);
        const text = r.text.trim();
        if (!text) {
          fallback[l] = 'model';
          fallbackReason[l] = lab(l, 'digest.fallback.model', { reason: lab(l, 'digest.reason.empty') });
          continue;
        }
        summary[l] = text.length > 8000 ? `${text.slice(0, 7999)}…` : text;
      } catch (err) {
        const failure = model.failure(err);
        log.warn(
          { action_id: a.id, code: failure.code, status: failure.status },
          'the AI digest fell back to the plain digest: the model failed',
        );
        fallback[l] = 'model';
        fallbackReason[l] = lab(l, 'digest.fallback.model', { reason: lab(l, `digest.reason.${failure.code}`) });
      }
    }
  }

  const severity = rows.reduce<Severity>((s, r) => ((RANK[r.severity] ?? 0) > RANK[s]! ? r.severity : s), 'info');
  const payload = {
    action_name: a.name,
    since,
    total: count,
    forms: pluralForms(count),
    summary,
    fallback,
    fallback_reason: fallbackReason,
    events: rows.map((r) => ({
      occurred_at: r.occurred_at,
      severity: r.severity,
      event_type: r.event_type,
      text: texts.get(r.id) ?? {},
    })),
    more: Math.max(0, count - rows.length),
    // Named without "token": payload fields named like secrets are redacted wherever the log shows them.
    usage: {
      prompt: usage.prompt_tokens,
      completion: usage.completion_tokens,
      total: usage.total_tokens,
      model: modelName,
    },
  };
  const eventId = await emitOwn(core, {
    userId: a.user_id,
    source: 'action',
    type: AI_DIGEST,
    severity,
    payload,
    targetIds: targets.map((t) => t.id),
  });
  return { eventId, usage, fallback };
}

/** The counts the model sees: by provider, event type, severity and dispatch status. */
async function countsOf(core: Core, from: string, params: unknown[]): Promise<Record<string, Record<string, number>>> {
  const by = async (col: string) =>
    Object.fromEntries(
      (
        await core.db.all<{ k: unknown; n: number | string }>(
          `SELECT ${col} AS k, COUNT(*) AS n ${from} GROUP BY ${col} ORDER BY n DESC LIMIT 20`,
          params as never[],
        )
      ).map((r) => [String(r.k), Number(r.n)]),
    );
  return {
    provider: await by('COALESCE(p.name, e.provider_kind)'),
    event_type: await by('e.event_type'),
    severity: await by('e.severity'),
    dispatch_status: await by('e.dispatch_status'),
  };
}
