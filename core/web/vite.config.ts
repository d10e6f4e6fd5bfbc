/**
 * Build of the web client: preact through oxc's automatic JSX runtime (no framework plugin),
 * one small CSS file, output to core/web/dist which the core serves at `/`.
 */
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vite';

const root = fileURLToPath(new URL('.', import.meta.url));

export default defineConfig({
  root,
  base: '/',
  publicDir: false,
  oxc: { jsx: { runtime: 'automatic', importSource: 'preact' } },
  build: {
    outDir: fileURLToPath(new URL('./dist', import.meta.url)),
    emptyOutDir: true,
    target: 'es2022',
    sourcemap: false,
    // The CSP forbids inline scripts and data: fonts are not needed; keep every asset a file.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    reportCompressedSize: true,
  },
  server: { proxy: { '/api': 'http://127.0.0.1:8080' } },
});
