/**
 * Entry point of the operator's command line: `npm run herald -- <command>`, and `herald <command>`
 * in the image. Node's compile cache is switched on first, as for the service (main.ts next to
 * core/src), so a second run starts faster; then the command runs and the process exits with its code.
 */
import module from 'node:module';

try {
  module.enableCompileCache?.();
} catch {
  /* an unwritable cache directory only costs time */
}
const { run } = await import('./program.ts');
process.exit(await run(process.argv.slice(2)));
