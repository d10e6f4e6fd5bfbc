/**
 * Every route authenticates and authorizes before it validates: walked over the whole route table
 * (the OpenAPI document), an anonymous request with an empty or wrong body and made-up path values
 * gets 401 wherever the route needs a caller, and a signed-in user who is not an administrator gets
 * 403 on every administrator's route; never a 422 that would describe the route's schema.
 */
import t from 'tap';
import { startService } from '../helpers/service.ts';

interface Operation {
  security?: unknown[];
  tags?: string[];
}

t.test('401 and 403 come before 422 on every route', async (t) => {
  const s = await startService();
  t.teardown(() => s.stop());
  const doc = (await s.request('GET', '/api/docs/json')).body as { paths: Record<string, Record<string, Operation>> };
  const user = await s.request('POST', '/api/v1/admin/users', {
    token: s.admin.token,
    body: { email: 'plain@example.test', password: 'a plain password', role: 'user' },
  });
  t.equal(user.status, 201, JSON.stringify(user.body));
  const login = await s.request('POST', '/api/auth/login', {
    body: { email: 'plain@example.test', password: 'a plain password' },
  });
  const plain = login.body.access_token as string;

  let walked = 0;
  let adminRoutes = 0;
  const wrong: string[] = [];
  for (const [route, methods] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(methods)) {
      if (Array.isArray(op.security) && op.security.length === 0) continue;
      const url = route.replace(/\{[^}]+\}/g, 'not-a-real-id');
      const m = method.toUpperCase();
      const body = m === 'GET' || m === 'DELETE' || m === 'HEAD' ? undefined : { unexpected_field: [1, 2, 3] };
      walked++;
      const anon = await s.request(m, url, { body });
      if (anon.status !== 401) wrong.push(`${m} ${route} anonymous: ${anon.status}`);
      if (/\/admin\//.test(route)) {
        adminRoutes++;
        const r = await s.request(m, url, { token: plain, body });
        if (r.status !== 403) wrong.push(`${m} ${route} as a user: ${r.status}`);
      }
    }
  }
  t.ok(walked > 100, `${walked} operations walked`);
  t.ok(adminRoutes > 10, `${adminRoutes} administrator's operations walked`);
  t.same(wrong, [], 'every route answered 401 (anonymous) or 403 (not an administrator) first');
});
