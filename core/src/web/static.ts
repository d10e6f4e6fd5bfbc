/**
 * The built client's files, served from memory once read: a handful of hashed assets and one page, which needs
 * none of what a general static-file server carries (ranges, directory listings, globbing). @fastify/static and
 * its glob cost about 1.3 MB of the idle service's resident memory (issue 27, scripts/bench/RESULTS.md); this costs
 * nothing until a browser asks, then the size of the files it asked for, gzipped once as well.
 *
 * Only names found in the build folder at start are served: a request's path is looked up, never joined to a
 * folder. Assets (`/assets/…`, names carrying a content hash) are cached by browsers for a year; the page is
 * revalidated every time (its ETag answers 304), so a new build is picked up at the next load.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import zlib from 'node:zlib';

const gzip = promisify(zlib.gzip);

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
  '.txt': 'text/plain; charset=utf-8',
};
/** Kinds worth compressing (images and fonts are compressed already). */
const TEXT = new Set(['.html', '.js', '.css', '.json', '.svg', '.txt']);
/** Below this a gzip frame saves nothing worth a header. */
const GZIP_FROM = 1024;

export interface StaticFile {
  body: Buffer;
  /** The gzipped body, when it is text of some size and gzip makes it smaller. */
  gzipped?: Buffer;
  type: string;
  etag: string;
  cacheControl: string;
}

/** The names of a build folder's files (`index.html`, `assets/index-abc.js`, …), with `/` as the separator. */
export function listFiles(root: string): Map<string, string> {
  const found = new Map<string, string>();
  const walk = (dir: string, prefix: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const full = path.join(dir, e.name);
      if (e.isDirectory()) walk(full, `${prefix}${e.name}/`);
      else if (e.isFile()) found.set(`${prefix}${e.name}`, full);
    }
  };
  walk(root, '');
  return found;
}

/** Serves the files of one build folder by name, reading and compressing each once. */
export class StaticFiles {
  private readonly files: Map<string, string>;
  private readonly cache = new Map<string, Promise<StaticFile>>();

  constructor(root: string) {
    this.files = listFiles(root);
  }

  has(name: string): boolean {
    return this.files.has(name);
  }

  /** The file of that name (as listed at start), or undefined. */
  get(name: string): Promise<StaticFile> | undefined {
    const file = this.files.get(name);
    if (!file) return undefined;
    let entry = this.cache.get(name);
    if (!entry) {
      entry = load(name, file);
      // A file that vanished (a rebuild under a running service) is looked for again next time.
      entry.catch(() => this.cache.delete(name));
      this.cache.set(name, entry);
    }
    return entry;
  }
}

async function load(name: string, file: string): Promise<StaticFile> {
  const body = await fs.promises.readFile(file);
  const ext = path.extname(name).toLowerCase();
  const out: StaticFile = {
    body,
    type: TYPES[ext] ?? 'application/octet-stream',
    etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`,
    // Vite names every asset after its content: a changed file is a new name.
    cacheControl: name.startsWith('assets/') ? 'public, max-age=31536000, immutable' : 'no-cache',
  };
  if (TEXT.has(ext) && body.length >= GZIP_FROM) {
    const z = await gzip(body, { level: 9 });
    if (z.length < body.length) out.gzipped = z;
  }
  return out;
}

/** Whether an `Accept-Encoding` header takes gzip (with a q-value above zero). */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  for (const part of header.split(',')) {
    const [coding, ...params] = part.trim().toLowerCase().split(';');
    if (coding !== 'gzip' && coding !== '*') continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith('q='));
    return !q || Number(q.slice(2)) > 0;
  }
  return false;
}

/** Whether an `If-None-Match` header names this ETag (or any). */
export function matches(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((t) => t.trim().replace(/^W\//, '') === etag);
}
