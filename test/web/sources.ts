/** The web client's source files, for the static checks. */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const WEB_SRC = path.join(ROOT, 'core/web/src');

export function sourceFiles(ext = /\.(ts|tsx)$/): { file: string; text: string }[] {
  const out: { file: string; text: string }[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (ext.test(e.name)) out.push({ file: path.relative(ROOT, p), text: fs.readFileSync(p, 'utf8') });
    }
  };
  walk(WEB_SRC);
  return out.sort((a, b) => a.file.localeCompare(b.file));
}
