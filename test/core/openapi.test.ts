/**
 * The OpenAPI document states the API as it is. Walked operation by operation: each lists a
 * success status and the errors its shape can give (problem details, referencing the one Problem
 * schema); then each is called for real (as an administrator with made-up ids and an empty body,
 * and anonymously) and must answer one of the statuses it lists, never a 500. The statuses that
 * were misstated before are checked on real objects: a provider is created with 201, a webhook
 * accepted with 202, deletes answer 204. Validation problems are told in sentences.
 */
import t from 'tap';
import { startService, TEST_PLUGINS } from '../helpers/service.ts';

interface Answer {
  description?: string;
  content?: Record<string, { schema?: { $ref?: string } }>;
}
interface Operation {
  security?: unknown[];
  parameters?: { in: string; name: string }[];
  requestBody?: unknown;
  responses?: Record<string, Answer>;
}
interface Doc {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, { properties?: Record<string, unknown> }> };
}

const PROBLEM = '#/components/schemas/Problem';

interface Shape {
  type?: string | string[];
  $ref?: string;
  format?: string;
  properties?: Record<string, unknown>;
  additionalProperties?: unknown;
  patternProperties?: unknown;
  items?: unknown;
  anyOf?: Shape[];
  oneOf?: Shape[];
  allOf?: Shape[];
}
/** A response schema that says what the body holds: a typed value, a reference, or a union of such. */
function shaped(s: Shape | undefined): boolean {
  if (!s) return false;
  if (s.$ref) return true;
  for (const parts of [s.anyOf, s.oneOf, s.allOf]) if (parts?.length) return parts.every(shaped);
  if (s.type === 'object') return Boolean(s.properties || s.additionalProperties || s.patternProperties);
  if (s.type === 'array') return Boolean(s.items);
  return Boolean(s.type);
}
const MADE_UP_ID = '0190f0e0-0000-7000-8000-00000000abcd';
/** A value for a path parameter that names nothing. */
function madeUp(name: string): string {
  if (/id$/.test(name)) return MADE_UP_ID;
  if (name === 'locale') return 'en';
  if (name === 'kind') return 'provider';
  if (name === 'filename') return 'backup-20000101T000000Z.json';
  return `not-a-real-${name.replace(/[^a-z]/g, '')}`;
}
const urlOf = (path: string) => path.replace(/\{([^}]+)\}/g, (_m, name: string) => madeUp(name));
const hasBody = (method: string) => ['POST', 'PUT', 'PATCH'].includes(method);
/** Answers in another service's own shape (dialect routes), or a body that is not an error (readiness). */
const notProblem = (path: string, status: string, a: Answer) =>
  /imitated service's own error shape/.test(a.description ?? '') || (path === '/api/ready' && status === '503');

/** The status of a GET that may answer with an endless event stream, and the start of its body; then it is closed. */
async function streamStatus(url: string, token: string | null): Promise<{ status: number; text: string }> {
  const ac = new AbortController();
  const res = await fetch(url, { headers: token ? { authorization: `Bearer ${token}` } : {}, signal: ac.signal });
  const reader = res.body!.getReader();
  const first = await reader.read();
  ac.abort();
  return { status: res.status, text: first.value ? new TextDecoder().decode(first.value) : '' };
}

t.test('every operation states its success and its errors, and answers only what it states', async (t) => {
  const s = await startService({ SERVICE_PLUGINS: `${TEST_PLUGINS},@herald/provider-ntfy` });
  t.teardown(() => s.stop());
  const docAnswer = await s.request('GET', '/api/docs/json');
  t.equal(docAnswer.status, 200);
  const doc = docAnswer.body as Doc;

  const problem = doc.components.schemas.Problem;
  t.same(
    Object.keys(problem?.properties ?? {}).sort(),
    ['code', 'detail', 'errors', 'params', 'status', 'title', 'type'],
    'one Problem schema: RFC 9457 members, code, params and field errors',
  );

  const wrong: string[] = [];
  const unshaped: string[] = [];
  const ops: { path: string; method: string; op: Operation; statuses: string[] }[] = [];
  for (const [path, methods] of Object.entries(doc.paths)) {
    for (const [m, op] of Object.entries(methods)) {
      const method = m.toUpperCase();
      const responses = op.responses ?? {};
      const statuses = Object.keys(responses);
      ops.push({ path, method, op, statuses });
      const where = `${method} ${path}`;
      if (!statuses.some((x) => /^2\d\d$/.test(x))) wrong.push(`${where}: no success status`);
      for (const [status, a] of Object.entries(responses)) {
        if (Number(status) < 400 || notProblem(path, status, a)) continue;
        if (a.content?.['application/problem+json']?.schema?.$ref !== PROBLEM)
          wrong.push(`${where} ${status}: not problem details`);
        if (!a.description) wrong.push(`${where} ${status}: no description`);
      }
      const must = ['500'];
      const pub = Array.isArray(op.security) && op.security.length === 0;
      if (!pub) must.push('401');
      if (/\/admin\/|^\/api\/backup\//.test(path)) must.push('403');
      if (path.includes('{')) must.push('404');
      if (op.requestBody || op.parameters?.some((p) => p.in === 'query')) must.push('422');
      if (hasBody(method)) must.push('400', '413');
      if (method === 'DELETE') must.push('204');
      for (const x of must) if (!statuses.includes(x)) wrong.push(`${where}: ${x} is not listed`);
      // Every success but 204 says what it returns: a schema with a shape (a download or stream: binary).
      for (const [status, a] of Object.entries(responses)) {
        if (!/^2\d\d$/.test(status) || status === '204') continue;
        // A plugin's own answer (a dialect imitating another service, or a webhook plugin's reply) has its shape.
        if (/plugin's own answer|service this route imitates/.test(a.description ?? '')) continue;
        const schemas = Object.values(a.content ?? {}).map((c) => c.schema as Shape | undefined);
        if (!schemas.length || !schemas.every(shaped)) unshaped.push(`${where} ${status}`);
      }
    }
  }
  t.ok(ops.length > 130, `${ops.length} operations in the document`);
  t.ok(
    ops.some((o) => o.path === '/' && o.method === 'PUT'),
    'the dialect routes of a loaded plugin (ntfy) are in it',
  );
  t.same(wrong, [], 'every operation lists a success status and its errors as problem details');
  t.same(unshaped, [], 'every answer with a body has a response schema that describes it');

  // Called for real: what each answers is among what it lists. Signing out is left for last.
  const called: string[] = [];
  for (const { path, method, op, statuses } of ops) {
    if (path === '/api/auth/logout') continue;
    const body = hasBody(method) ? {} : undefined;
    // A stream that answers 200 goes on: its status and first bytes are what there is to check.
    const stream = method === 'GET' && Boolean(op.responses?.['200']?.content?.['text/event-stream']);
    for (const token of [s.admin.token, null]) {
      const r = stream
        ? await streamStatus(s.url + urlOf(path), token)
        : await s.request(method, urlOf(path), { token, body });
      const who = token ? 'as an administrator' : 'anonymously';
      if (r.status >= 500 || !statuses.includes(String(r.status)))
        called.push(`${method} ${path} ${who}: ${r.status} (lists ${statuses.join(', ')}) ${r.text.slice(0, 200)}`);
    }
  }
  const session = await s.request('POST', '/api/auth/login', {
    body: { email: s.admin.email, password: 'correct horse battery' },
  });
  const out = await s.request('POST', '/api/auth/logout', { token: session.body.access_token });
  const logout = ops.find((o) => o.path === '/api/auth/logout')!;
  if (!logout.statuses.includes(String(out.status))) called.push(`POST /api/auth/logout: ${out.status}`);
  t.same(called, [], 'every operation answered a status its document lists, and none a 500');

  const lists = (path: string, method: string, status: number) =>
    t.ok(
      ops.find((o) => o.path === path && o.method === method)?.statuses.includes(String(status)),
      `${method} ${path} lists ${status}`,
    );
  const token = s.admin.token;
  const provider = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Doc', config: { shared_token: 'sharedtoken1' } },
  });
  t.equal(provider.status, 201, 'a provider is created with 201');
  lists('/api/providers', 'POST', 201);
  const hook = await s.request('POST', `/api/hooks/${provider.body.webhook_url.split('/api/hooks/')[1]}`, {
    headers: { 'x-example-token': 'sharedtoken1' },
    body: { type: 'thing_happened', payload: { name: 'doc' } },
  });
  t.equal(hook.status, 202, 'a webhook with an event is accepted with 202');
  t.equal(hook.body.event_ids.length, 1);
  lists('/api/hooks/{token}', 'POST', 202);
  t.notOk(ops.find((o) => o.path === '/api/hooks/{token}')?.statuses.includes('201'));
  const tracker = await s.request('POST', '/api/trackers', {
    token,
    body: { provider_id: provider.body.id, name: 'Doc tracker' },
  });
  t.equal(tracker.status, 201);
  t.equal(
    (await s.request('DELETE', `/api/trackers/${tracker.body.id}`, { token })).status,
    204,
    'a tracker is deleted with 204',
  );
  t.equal(
    (await s.request('DELETE', `/api/providers/${provider.body.id}`, { token })).status,
    204,
    'a provider is deleted with 204',
  );
  lists('/api/providers/{id}', 'DELETE', 204);
  t.notOk(
    ops.find((o) => o.path === '/api/providers/{id}' && o.method === 'DELETE')?.statuses.includes('200'),
    'and does not claim 200',
  );
});

t.test('validation problems are told in sentences', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const token = s.admin.token;
  const schemaWords =
    /body\/|querystring\/|must be equal to constant|schema is false|anyOf|must NOT|additional properties/;

  const role = await s.request('POST', '/api/v1/admin/users', {
    token,
    body: { email: 'role@example.test', password: 'a long password', role: 'evil' },
  });
  t.equal(role.status, 422);
  t.equal(role.body.detail, 'The request body is invalid. The field role must be one of: user, admin.');
  t.same(
    role.body.errors,
    [
      {
        path: 'body/role',
        message: 'must be one of: user, admin',
        code: 'enum',
        params: { allowedValues: ['user', 'admin'] },
      },
    ],
    'the union is one field error, an enum a client can word itself',
  );

  const target = await s.request('POST', '/api/targets', {
    token,
    body: { kind: 'recorder', name: 'R', config: { url: 'http://127.0.0.1:9/' }, locale: 'en' },
  });
  t.equal(target.status, 201);
  const action = await s.request('POST', '/api/actions', {
    token,
    body: {
      name: 'A',
      kind: 'message',
      schedule: '0 9 * * *',
      config: { target_ids: [target.body.id], title: 'Hi', body: 'There', evil: 1 },
    },
  });
  t.equal(action.status, 422);
  t.equal(action.body.detail, 'The config of a message action is invalid. The field config.evil is not allowed.');

  const many = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'x'.repeat(201), config: {}, evil: true },
  });
  t.equal(many.status, 422);
  t.match(many.body.detail, /^The request body is invalid\. /);
  t.match(many.body.detail, /The field evil is not allowed\./);
  t.match(many.body.detail, /The field name must be at most 200 characters long\./);

  const nested = await s.request('POST', '/api/trackers', {
    token,
    body: { provider_id: MADE_UP_ID, name: 'T', quiet_hours: { start: '22:00', timezone: 'UTC' } },
  });
  t.equal(nested.status, 422);
  t.equal(
    nested.body.detail,
    'The request body is invalid. The field quiet_hours.end is required.',
    'a nullable object names what is missing in it, not "matches no form"',
  );

  const query = await s.request('GET', '/api/providers?limit=500', { token });
  t.equal(query.status, 422);
  t.equal(query.body.detail, 'The query string is invalid. The query parameter limit must be at most 200.');

  const config = await s.request('POST', '/api/providers', {
    token,
    body: { kind: 'example', name: 'Short', config: { shared_token: 'short' } },
  });
  t.equal(config.status, 422);
  t.match(
    config.body.detail,
    new RegExp(
      /^The configuration of a .+ provider is invalid\. The field config\.shared_token must be at least \d+ /.source +
        /characters long\./.source,
    ),
  );

  for (const r of [role, action, many, nested, query, config])
    t.notMatch(r.body.detail, schemaWords, `no schema jargon in: ${r.body.detail}`);
});
