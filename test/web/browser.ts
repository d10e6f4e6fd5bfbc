/**
 * Chromium for the web tests: Debian's `chromium` driven by playwright-core, a fresh profile
 * per run, console errors collected (a test fails on them), screenshots under
 * test-output/screenshots/.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type BrowserContext, type ConsoleMessage, chromium, type Page } from 'playwright-core';
import { waitFor } from '../helpers/wait.ts';
import { ROOT } from './sources.ts';

export const DIST = path.join(ROOT, 'core/web/dist');
export const SCREENSHOTS = path.join(ROOT, 'test-output/screenshots');
export const CHROMIUM = '/usr/bin/chromium';

/** Builds the web client when core/web/dist is missing (npm test builds it before tap). */
export function ensureBuilt(): void {
  if (fs.existsSync(path.join(DIST, 'index.html'))) return;
  execFileSync(
    process.execPath,
    [
      path.join(ROOT, 'node_modules/vite/bin/vite.js'),
      'build',
      '--config',
      'core/web/vite.config.ts',
      '--logLevel',
      'warn',
    ],
    { cwd: ROOT, stdio: 'inherit' },
  );
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Console errors and page errors so far (expected 401 probes excluded). */
  problems: string[];
  /** Accepts console lines matching `re` from now on (a test that provokes an error on purpose). */
  allow(re: RegExp): void;
  shot(name: string): Promise<void>;
  /**
   * Runs one step of a test; on failure saves a screenshot named after the file's prefix and the step, then rethrows.
   */
  step(name: string, fn: () => Promise<void>): Promise<void>;
  /** Follows a nav link by its name (through the menu on a phone) and waits for the page's title. */
  nav(name: string): Promise<void>;
  /** Opens `url`, logs in with the login form and waits for the overview. */
  logIn(url: string, email: string, password: string): Promise<void>;
  close(): Promise<void>;
}

/** Polls until `fn` is truthy (the UI updates asynchronously). */
export async function until<T>(fn: () => Promise<T> | T, what: string, ms = 8000): Promise<T> {
  return (await waitFor(what, fn, ms, 50)) as T;
}

/**
 * Chromium logs every failed response. One is an answer the client expects: 401 (the session
 * probe at boot, a request after the session ended: show the login form). Anything else on the
 * console is a problem.
 */
function expected(m: ConsoleMessage): boolean {
  if (m.type() !== 'error' || !/Failed to load resource/.test(m.text())) return false;
  const url = m.location().url ?? '';
  // 401: the session probe or an ended session.
  return /status of 401/.test(m.text()) && /\/api\//.test(url);
}

/** `shots`: the prefix of the screenshots a failed step saves (one per test file, so parallel files do not collide). */
export async function openBrowser(
  viewport = { width: 1280, height: 860 },
  { shots = 'failed' }: { shots?: string } = {},
): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (scripts/peers/install.sh does).`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      '--disable-quic',
    ],
    viewport,
    locale: 'en-US',
    timezoneId: 'UTC',
    acceptDownloads: true,
  });
  const page = context.pages()[0] ?? (await context.newPage());
  const problems: string[] = [];
  const allowed: RegExp[] = [];
  const watch = (p: Page) => {
    p.on('console', (m) => {
      if (expected(m) || allowed.some((re) => re.test(`${m.text()} ${m.location().url}`))) return;
      if (m.type() === 'error' || (m.type() === 'warning' && m.text().includes('missing string')))
        problems.push(`${m.type()}: ${m.text()} (${m.location().url})`);
    });
    p.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  };
  watch(page);
  context.on('page', watch);
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  const shot = async (name: string) => {
    await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true }).catch(() => {});
  };
  return {
    context,
    page,
    problems,
    allow: (re) => {
      allowed.push(re);
    },
    shot,
    async step(name, fn) {
      try {
        await fn();
      } catch (err) {
        await shot(`${shots}-${name}`);
        throw err;
      }
    },
    async nav(name) {
      const link = page.getByRole('navigation').getByRole('link', { name, exact: true });
      const phone = (page.viewportSize()?.width ?? 1280) <= 860;
      if (phone) await page.getByRole('button', { name: /^(Menu|Меню)$/ }).click();
      await link.click();
      // On a phone the drawer slides away after the choice.
      if (phone) await link.waitFor({ state: 'hidden' });
      await page.locator('#page-title').waitFor();
    },
    async logIn(url, email, password) {
      await page.goto(url);
      await page.getByLabel('Email').fill(email);
      await page.getByLabel('Password').fill(password);
      await page.getByRole('button', { name: 'Log in' }).click();
      await page.getByRole('heading', { name: 'Overview' }).waitFor();
    },
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
