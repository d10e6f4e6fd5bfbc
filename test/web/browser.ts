/**
 * Chromium for the web tests: Debian's `chromium` driven by playwright-core, a fresh profile
 * per run, console errors collected (a test fails on them), screenshots under
 * test-output/screenshots/.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { chromium, type BrowserContext, type ConsoleMessage, type Page } from 'playwright-core';
import { ROOT } from './sources.ts';

export const DIST = path.join(ROOT, 'core/web/dist');
export const SCREENSHOTS = path.join(ROOT, 'test-output/screenshots');
export const CHROMIUM = '/usr/bin/chromium';

/** Builds the web client when core/web/dist is missing (npm test builds it before tap). */
export function ensureBuilt(): void {
  if (fs.existsSync(path.join(DIST, 'index.html'))) return;
  execFileSync(process.execPath, [path.join(ROOT, 'node_modules/vite/bin/vite.js'), 'build', '--config', 'core/web/vite.config.ts', '--logLevel', 'warn'], { cwd: ROOT, stdio: 'inherit' });
}

export interface Browser {
  context: BrowserContext;
  page: Page;
  /** Console errors and page errors so far (expected 401 probes excluded). */
  problems: string[];
  /** Accepts console lines matching `re` from now on (a test that provokes an error on purpose). */
  allow(re: RegExp): void;
  shot(name: string): Promise<void>;
  close(): Promise<void>;
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

export async function openBrowser(viewport = { width: 1280, height: 860 }): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (scripts/peers/install.sh does).`);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--no-first-run', '--disable-quic'],
    viewport,
    locale: 'en-US',
    timezoneId: 'UTC',
    acceptDownloads: true,
  });
  const page = context.pages()[0] ?? await context.newPage();
  const problems: string[] = [];
  const allowed: RegExp[] = [];
  const watch = (p: Page) => {
    p.on('console', (m) => {
      if (expected(m) || allowed.some((re) => re.test(`${m.text()} ${m.location().url}`))) return;
      if (m.type() === 'error' || (m.type() === 'warning' && m.text().includes('missing string'))) problems.push(`${m.type()}: ${m.text()} (${m.location().url})`);
    });
    p.on('pageerror', (e) => problems.push(`pageerror: ${e.message}`));
  };
  watch(page);
  context.on('page', watch);
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  return {
    context, page, problems,
    allow: (re) => { allowed.push(re); },
    async shot(name) { await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true }).catch(() => {}); },
    async close() {
      await context.close();
      fs.rmSync(profile, { recursive: true, force: true });
    },
  };
}
