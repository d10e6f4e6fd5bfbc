import type { Feature } from '../features.ts';
import { adminRoutes } from './admin.ts';
import { chatRoutes } from './chats.ts';
import { Consents, consentRoutes } from './consent.ts';
import { contextRoutes } from './context.ts';
import { documentRoutes } from './documents.ts';
import { exportRoutes } from './export.ts';
import { memoryRoutes } from './memory.ts';
import { historyRoutes } from './messages.ts';
import { ModelClient } from './model.ts';
import { Models } from './models.ts';
import { Quotas, quotaRoutes } from './quotas.ts';
import { Reports } from './reports.ts';
import { searchRoutes } from './search.ts';
import { InFlight, sendRoutes } from './send.ts';
import { skillRoutes } from './skills.ts';

/**
 * The AI chat assistant: chats and streamed replies, contexts and skills, daily quotas, memory,
 * documents, PDF reports, the tools over the relay's events with consent for what they do, and
 * the administration around them. Everything lives under `/api/v1`.
 */
export default {
  name: 'assistant',
  async register(app, core) {
    const streams = new InFlight();
    core.services.set('assistant.inflight', streams);
    const quotas = new Quotas(core);
    const model = new ModelClient(core.config.ai);
    const reports = new Reports(core);
    const models = new Models(core, model);
    const consents = new Consents(core);
    core.services.set('assistant.models', models);
    core.services.set('assistant.model', model);
    core.services.set('assistant.quotas', quotas);
    core.services.set('assistant.reports', reports);
    if (!model.configured)
      core.logs.get('assistant').warn('AI_API_KEY is not set; the assistant answers 503 until it is');
    await quotaRoutes(app, core, quotas);
    await chatRoutes(app, core, models);
    await historyRoutes(app, core);
    await sendRoutes(app, core, { quotas, model, reports, inflight: streams, models, consents });
    await consentRoutes(app, core, consents);
    await models.routes(app);
    await contextRoutes(app, core);
    await skillRoutes(app, core);
    await searchRoutes(app, core);
    await exportRoutes(app, core);
    await memoryRoutes(app, core);
    await documentRoutes(app, core);
    await reports.routes(app);
    await adminRoutes(app, core, reports);
  },
  // No start(): the model client (the openai SDK and undici, ~25-35 MB resident) loads with the
  // first message, not at boot, even when the assistant is configured (issue 27; the first reply
  // waits the few hundred ms that takes).
  /** Runs after the server closed: replies still streaming are aborted and saved before the database closes. */
  async stop(core) {
    await (core.services.get('assistant.inflight') as InFlight | undefined)?.drain();
    await (core.services.get('assistant.model') as ModelClient | undefined)?.close();
  },
} satisfies Feature;
