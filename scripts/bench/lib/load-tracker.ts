/**
 * Loaded with `--import` into a process (the service, in bench:module-cost and the footprint
 * test): records every module the process loads, through `require` or `import`, in order, with
 * the resident set at that moment, and which module asked for which. On exit, or on SIGUSR2,
 * writes them as JSON lines to HERALD_LOAD_TRACK (a file path): `{"url", "rssKb", "ms"}` per module
 * loaded, `{"from", "to"}` per import or require resolved.
 */
import fs from 'node:fs';
import module from 'node:module';

const file = process.env.HERALD_LOAD_TRACK;
const seen: ({ url: string; rssKb: number; ms: number } | { from: string; to: string })[] = [];
const edges = new Set<string>();
const start = performance.now();

if (file) {
  module.registerHooks({
    resolve(specifier, context, nextResolve) {
      const r = nextResolve(specifier, context);
      const edge = `${context.parentURL}\0${r.url}`;
      if (context.parentURL && !edges.has(edge)) {
        edges.add(edge);
        seen.push({ from: context.parentURL, to: r.url });
      }
      return r;
    },
    load(url, context, nextLoad) {
      seen.push({
        url,
        rssKb: Math.round(process.memoryUsage.rss() / 1024),
        ms: Math.round((performance.now() - start) * 10) / 10,
      });
      return nextLoad(url, context);
    },
  });
  let written = 0;
  const flush = () => {
    if (written === seen.length) return;
    fs.appendFileSync(
      file,
      seen
        .slice(written)
        .map((s) => JSON.stringify(s))
        .join('\n') + '\n',
    );
    written = seen.length;
  };
  process.on('SIGUSR2', flush);
  process.on('exit', flush);
}
