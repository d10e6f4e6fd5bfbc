/**
 * A Herald process of its own, started from the sources (`core/src/main.ts`) on a loopback port as
 * an operator would run it, for the tests that kill, signal or restart it; and its HTTP API driven
 * with `fetch`, as any client would.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { EXAMPLE_HOOK_HEADERS } from './service.ts';
import { waitThrough } from './wait.ts';

const root = new URL('../..', import.meta.url).pathname;

export interface HeraldProcessOptions {
  /** SERVICE_DATA_DIR. */
  dir: string;
  /** SERVICE_PORT: a port from `freePort()` (test/helpers/peers.ts), kept across restarts. */
  port: number;
  /** SERVICE_SECRET_KEY. */
  key: string;
  /** SERVICE_DATABASE_URL, when the run is on PostgreSQL (`testDatabaseUrl`). */
  databaseUrl?: string;
  /** SERVICE_PLUGINS. */
  plugins: string;
  /** More of the service's variables. */
  env?: Record<string, string>;
  /** Node options before the entry point (`--import <module>`, say). */
  nodeArgs?: string[];
}

export interface HeraldProcess {
  child: ChildProcess;
  /** Its base URL. */
  base: string;
  /** Everything it wrote to standard error so far (JSON log lines). */
  stderr(): string;
}

/**
 * The variables a Herald process of its own runs with: a loopback port, the test's secret key, JSON logs, cheap
 * password hashing, loopback targets allowed, and its dispatch in a thread of its own when the test run says so
 * (SERVICE_DISPATCH_THREAD), as for the services started in-process. `env` comes last and wins.
 */
export function heraldProcessEnv(o: { port: number; key: string; env?: Record<string, string> }): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    NODE_COMPILE_CACHE: process.env.NODE_COMPILE_CACHE,
    SERVICE_SECRET_KEY: o.key,
    SERVICE_PORT: String(o.port),
    SERVICE_HOST: '127.0.0.1',
    SERVICE_OUTBOUND_ALLOW_CIDRS: '127.0.0.0/8',
    HERALD_BCRYPT_COST: '4',
    SERVICE_LOG_FORMAT: 'json',
    ...(process.env.SERVICE_DISPATCH_THREAD ? { SERVICE_DISPATCH_THREAD: process.env.SERVICE_DISPATCH_THREAD } : {}),
    ...o.env,
  };
}

/** Starts the service as a child process (the Node running the tests). */
export function startHeraldProcess(o: HeraldProcessOptions): HeraldProcess {
  const child = spawn(process.execPath, [...(o.nodeArgs ?? []), 'core/src/main.ts'], {
    cwd: root,
    stdio: ['ignore', 'ignore', 'pipe'],
    env: heraldProcessEnv({
      port: o.port,
      key: o.key,
      env: {
        SERVICE_DATA_DIR: o.dir,
        SERVICE_PLUGINS: o.plugins,
        ...(o.databaseUrl ? { SERVICE_DATABASE_URL: o.databaseUrl } : {}),
        ...o.env,
      },
    }),
  });
  let stderr = '';
  child.stderr!.on('data', (c) => {
    stderr += c;
  });
  return { child, base: `http://127.0.0.1:${o.port}`, stderr: () => stderr };
}

/** Waits until the process at `base` answers ready, through the errors of one still starting; fails naming `what`. */
export function untilReady(base: string, what: string, ms = 20_000): Promise<true> {
  return waitThrough(what, async () => (await fetch(`${base}/api/ready`)).status === 200 || undefined, ms);
}

/** Resolves once the child has exited. */
export function exited(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

export type ApiCall = (
  method: string,
  path: string,
  body?: unknown,
  headers?: Record<string, string>,
) => Promise<{ status: number; body: any }>;

/** Calls the API at `base`: a JSON body in, the answer's status and parsed JSON out. */
export function apiCaller(base: string): ApiCall {
  return async (method, path, body, headers = {}) => {
    const r = await fetch(base + path, {
      method,
      headers: { 'content-type': 'application/json', ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await r.text();
    return { status: r.status, body: text ? JSON.parse(text) : undefined };
  };
}

/**
 * First-run setup, then the example chain through the API, as `exampleChain` (service.ts) sets it up
 * in-process: an `example` provider (its shared token in {@link EXAMPLE_HOOK_HEADERS}), a tracker,
 * the given target, linked. Fails on any refused step.
 */
export async function exampleChainOverHttp(
  call: ApiCall,
  password: string,
  target: { kind: string; name: string; config: Record<string, unknown> },
): Promise<{ auth: Record<string, string>; providerId: string; targetId: string; hook: string }> {
  const step = async (what: string, method: string, path: string, body?: unknown, auth?: Record<string, string>) => {
    const r = await call(method, path, body, auth);
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body)}`);
    return r.body;
  };
  const setup = await step('setup', 'POST', '/api/setup', { email: 'a@example.test', password });
  const auth = { authorization: `Bearer ${setup.access_token}` };
  const prov = await step(
    'the provider',
    'POST',
    '/api/providers',
    { kind: 'example', name: 'Ex', config: { shared_token: EXAMPLE_HOOK_HEADERS['x-example-token'] } },
    auth,
  );
  const tr = await step('the tracker', 'POST', '/api/trackers', { provider_id: prov.id, name: 'Tr' }, auth);
  const tg = await step('the target', 'POST', '/api/targets', { ...target, locale: 'en' }, auth);
  await step('the link', 'PUT', `/api/trackers/${tr.id}/targets/${tg.id}`, undefined, auth);
  return { auth, providerId: prov.id, targetId: tg.id, hook: new URL(prov.webhook_url).pathname };
}
