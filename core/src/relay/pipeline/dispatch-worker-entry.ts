/**
 * Entry of the dispatch thread: switches on Node's compile cache for this thread first (as main.ts
 * does for the process), so the thread's modules are not parsed and compiled anew at every start.
 */
import module from 'node:module';

try {
  module.enableCompileCache?.();
} catch {
  /* an unwritable cache directory only costs time */
}
await import('./dispatch-worker.ts');
