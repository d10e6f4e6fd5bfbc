import Type from 'typebox';
import { requireAdmin, requireUser } from '../auth/guard.ts';
import type { Core } from '../core.ts';
import { unprocessable } from '../http/problem.ts';
import { ok } from '../http/schemas.ts';
import type { App } from '../http/server.ts';
import { type AdminModels, AdminModelsView, ModelsView } from './definitions/models.ts';
import type { ModelClient } from './model.ts';
import {
  DefaultModel,
  defaultModelProblem,
  ModelsAllowed,
  normalizeModelChoice,
  readModelSettings,
  writeModelSettings,
} from './model-settings.ts';

/** How long the endpoint's model list is reused before it is asked again. */
const LIST_TTL_MS = 60_000;

export interface ModelChoice {
  /** The models users may pick, the default first. */
  models: string[];
  /** The model used when a chat chose none. */
  default: string;
  /** What the administrator configured (empty: every model the endpoint lists). */
  configured: string[];
  /** Whether the endpoint answered `GET /models`. */
  listed: boolean;
}

/**
 * Which models users may pick. The administrator's list (`models_allowed`, a setting) and default
 * (`default_model`, else AI_MODEL); the endpoint's `GET /models`, asked through the model client
 * with its credentials and cached for a minute, narrows the list to what the endpoint serves, and
 * gives the list when none is configured. The default is always allowed.
 */
export class Models {
  private core: Core;
  private client: ModelClient;
  private listed?: { at: number; ids: Promise<string[] | undefined> };
  constructor(core: Core, client: ModelClient) {
    this.core = core;
    this.client = client;
  }

  async configured(): Promise<{ allowed: string[]; default: string }> {
    const s = await readModelSettings(this.core.db);
    return { allowed: s.allowed, default: s.default ?? '' };
  }

  async save(values: { allowed?: string[]; default?: string }): Promise<void> {
    await writeModelSettings(this.core.db, values, this.core.clock.now().toISOString());
  }

  private endpointModels(): Promise<string[] | undefined> {
    const now = Date.now();
    if (!this.listed || now - this.listed.at > LIST_TTL_MS) this.listed = { at: now, ids: this.client.listModels() };
    return this.listed.ids;
  }

  async choice(): Promise<ModelChoice> {
    const [conf, endpoint] = await Promise.all([this.configured(), this.endpointModels()]);
    const def = conf.default || this.client.model;
    const base = conf.allowed.length
      ? endpoint
        ? conf.allowed.filter((m) => endpoint.includes(m))
        : conf.allowed
      : (endpoint ?? []);
    return {
      models: [def, ...base.filter((m) => m !== def)],
      default: def,
      configured: conf.allowed,
      listed: endpoint !== undefined,
    };
  }

  /** The model a chat's reply uses: its own choice while still allowed, else the default. */
  async forChat(chosen: string | null): Promise<string> {
    if (!chosen) {
      const def = (await this.configured()).default;
      return def || this.client.model;
    }
    const c = await this.choice();
    return c.models.includes(chosen) ? chosen : c.default;
  }

  /** Refuses (422 `model_not_allowed`) a model users may not pick. */
  async check(model: string | null | undefined): Promise<void> {
    if (!model) return;
    const c = await this.choice();
    if (!c.models.includes(model)) {
      throw unprocessable(
        `The model "${model}" is not one of the models you may choose.`,
        [{ path: 'body/model', message: 'is not an allowed model', code: 'model_not_allowed', params: { model } }],
        'model_not_allowed',
        { model },
      );
    }
  }

  async routes(app: App): Promise<void> {
    app.get(
      '/api/v1/models',
      {
        schema: {
          tags: ['assistant'],
          summary: 'Models users may choose for a chat, and the default',
          response: { ...ok('The models you may choose (`models`) and the `default`.', ModelsView) },
        },
        preHandler: requireUser(this.core),
      },
      async () => {
        const c = await this.choice();
        return { models: c.models.map((id) => ({ id })), default: c.default };
      },
    );

    const read = async (): Promise<AdminModels> => {
      const [conf, endpoint, c] = await Promise.all([this.configured(), this.endpointModels(), this.choice()]);
      return {
        models_allowed: conf.allowed,
        default_model: conf.default,
        endpoint_models: endpoint ?? null,
        configured_model: this.client.model,
        effective: c.models,
      };
    };
    const admin = { preHandler: requireAdmin(this.core) };
    app.get(
      '/api/v1/admin/models',
      {
        ...admin,
        schema: {
          tags: ['admin'],
          summary: 'The models users may choose, the default, and what the endpoint lists',
          response: { ...ok('The model settings and what the endpoint lists.', AdminModelsView) },
        },
      },
      read,
    );
    app.put(
      '/api/v1/admin/models',
      {
        ...admin,
        schema: {
          tags: ['admin'],
          summary: 'Set the models users may choose and the default',
          description:
            'An empty `models_allowed` allows every model the endpoint lists; an empty `default_model` ' +
            'means AI_MODEL. The default must be one of the allowed models when a list is set (422 ' +
            '`default_model_not_allowed`).',
          body: Type.Object(
            { models_allowed: ModelsAllowed, default_model: DefaultModel },
            { additionalProperties: false },
          ),
          response: { ...ok('The model settings as saved.', AdminModelsView) },
        },
      },
      async (req) => {
        const b = req.body;
        const { allowed, default: def } = normalizeModelChoice(b.models_allowed, b.default_model);
        if (defaultModelProblem(allowed, def)) {
          throw unprocessable(
            `The default model "${def}" is not in the allowed list.`,
            [
              {
                path: 'body/default_model',
                message: 'must be one of models_allowed',
                code: 'default_model_not_allowed',
                params: { model: def },
              },
            ],
            'default_model_not_allowed',
            { model: def },
          );
        }
        await this.save({ allowed, default: def });
        return read();
      },
    );
  }
}
