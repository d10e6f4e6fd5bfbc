// The import boundaries between the core, the plugin contract and the plugins, checked on every
// `npm run lint` after Biome (which cannot tell where a relative path lands). Three rules:
//
// 1. A plugin (plugins/*, test/fixtures/plugins/*) imports only the contract (`@herald/plugin-api`,
//    `@herald/core/plugin-api`, each with its `/testing` entry), Node builtins, its own declared
//    dependencies, and its own files: never core internals, never a relative path out of its folder.
// 2. The core (core/src) never imports a plugin, by package name or by a path into a plugin's folder.
// 3. The contract (packages/plugin-api/src) never imports the core, a plugin, or a path out of its folder.
//
// A plugin's test code (`*.test.ts`, anything under its `test/` folder) may also use the repository's
// shared test tooling, the root package.json's devDependencies (tap, smtp-server, ...).
// Type-only imports count: a type from core internals ties a plugin to the core as much as a value does.
//
// Then the dependency check (`checkDependencies`, also `npm run lint:deps`), for every workspace
// package (packages/*, core, plugins/*, test/fixtures/plugins/*) and the root:
//
// 4. A declared dependency that no file of the package imports fails, unless USED_WITHOUT_IMPORT
//    names it with its reason (a binary run by a script, a module loaded a way no scanner follows).
//    `@types/x` counts as used when any file imports `x`.
// 5. A bare import of a package the importing package does not declare fails. Test code
//    (`*.test.ts`, a package's `test/` folder) and the web client (core/web, built by the root's
//    `npm run build:web`) may also use the root's dependencies; files outside any workspace
//    (scripts/, test/, migrations/) are the root's. Workspace packages resolve by their npm
//    workspace link. A plugin's undeclared imports are reported by rule 1 already.
//
// Imports are found by a small lexer (below), not a parser with native bindings: the registry this
// project installs from lacks most platform packages of those (docs/decisions/dependencies.md).
// Usage: node scripts/lint/boundaries.ts [--deps] [root]. Prints one line per violation, exits 1 if
// any. `--deps` runs the dependency check only.
import fs from 'node:fs';
import { isBuiltin } from 'node:module';
import path from 'node:path';

export interface Violation {
  file: string;
  line: number;
  specifier: string;
  reason: string;
}

export const CONTRACT = new Set([
  '@herald/plugin-api',
  '@herald/plugin-api/testing',
  '@herald/core/plugin-api',
  '@herald/core/plugin-api/testing',
]);
const CORE_PACKAGE = '@herald/core';
const CONTRACT_PACKAGE = '@herald/plugin-api';
const PLUGIN_FOLDERS = ['plugins', 'test/fixtures/plugins'];
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs|jsx)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git']);

interface Pkg {
  dir: string;
  name: string;
  deps: Set<string>;
}

/** The package a bare specifier names: `@scope/name` or `name`, without any subpath. */
export function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
}

function readPkg(dir: string): Pkg | null {
  const file = path.join(dir, 'package.json');
  if (!fs.existsSync(file)) return null;
  const json = JSON.parse(fs.readFileSync(file, 'utf8'));
  const deps = new Set<string>();
  for (const field of ['dependencies', 'peerDependencies', 'optionalDependencies', 'devDependencies']) {
    for (const name of Object.keys(json[field] ?? {})) deps.add(name);
  }
  return { dir, name: json.name ?? path.basename(dir), deps };
}

function pluginPackages(root: string): Pkg[] {
  const out: Pkg[] = [];
  for (const folder of PLUGIN_FOLDERS) {
    const abs = path.join(root, folder);
    if (!fs.existsSync(abs)) continue;
    for (const entry of fs.readdirSync(abs, { withFileTypes: true })) {
      if (!entry.isDirectory()) continue;
      const pkg = readPkg(path.join(abs, entry.name));
      if (pkg) out.push(pkg);
    }
  }
  return out;
}

function sourceFiles(dir: string, out: string[] = []): string[] {
  if (!fs.existsSync(dir)) return out;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    if (SKIP_DIRS.has(entry.name)) continue;
    const abs = path.join(dir, entry.name);
    if (entry.isDirectory()) sourceFiles(abs, out);
    else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(abs);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------
// Import scanner. No parser with native bindings: a small lexer that knows enough of TypeScript
// (comments, strings, template literals with their `${}`, regular expressions, JSX in .tsx/.jsx)
// to find the module specifiers a file names and nothing that only looks like one inside a
// string, comment or JSX text.

type TokenKind = 'name' | 'string' | 'punct' | 'other';
interface Token {
  kind: TokenKind;
  value: string;
  start: number;
}

const ID_START = /[A-Za-z_$\u00a0-\uffff]/;
const ID_PART = /[\w$\u00a0-\uffff]/;
// After these keywords an expression starts, so `/` opens a regex and `<` may open JSX.
const EXPRESSION_KEYWORDS = new Set([
  'return',
  'typeof',
  'instanceof',
  'in',
  'of',
  'new',
  'delete',
  'void',
  'throw',
  'case',
  'do',
  'else',
  'yield',
  'await',
  'extends',
  'export',
  'default',
]);

function tokenize(code: string, jsx: boolean): Token[] {
  const tokens: Token[] = [];
  let i = 0;
  const n = code.length;
  const last = () => tokens[tokens.length - 1];
  /** True when the next token starts an expression (so `/` is a regex, `<` may be JSX). */
  const expressionExpected = () => {
    const t = last();
    if (!t) return true;
    if (t.kind === 'name') return EXPRESSION_KEYWORDS.has(t.value);
    if (t.kind === 'punct') return !(t.value === ')' || t.value === ']' || t.value === '}');
    return false;
  };
  const skipTrivia = (): void => {
    while (i < n) {
      const c = code[i];
      if (c === '/' && code[i + 1] === '/') {
        while (i < n && code[i] !== '\n') i++;
      } else if (c === '/' && code[i + 1] === '*') {
        const end = code.indexOf('*/', i + 2);
        i = end < 0 ? n : end + 2;
      } else if (/\s/.test(c)) i++;
      else return;
    }
  };
  const quoted = (quote: string): string => {
    let value = '';
    i++;
    while (i < n && code[i] !== quote) {
      if (code[i] === '\\') {
        value += code[i + 1] ?? '';
        i += 2;
      } else if (code[i] === '\n')
        break; // unterminated: stop at the line's end
      else value += code[i++];
    }
    i++;
    return value;
  };
  /** A template literal from its backtick; substitutions are scanned as code. Its text if it has none. */
  const template = (): string | null => {
    let value = '';
    let plain = true;
    i++;
    while (i < n && code[i] !== '`') {
      if (code[i] === '\\') {
        value += code[i + 1] ?? '';
        i += 2;
      } else if (code[i] === '$' && code[i + 1] === '{') {
        plain = false;
        i += 2;
        scanCode(true);
      } else value += code[i++];
    }
    i++;
    return plain ? value : null;
  };
  const regex = (): void => {
    let inClass = false;
    i++;
    while (i < n && code[i] !== '\n') {
      const c = code[i];
      if (c === '\\') {
        i += 2;
        continue;
      }
      if (c === '[') inClass = true;
      else if (c === ']') inClass = false;
      else if (c === '/' && !inClass) break;
      i++;
    }
    i++;
    while (i < n && ID_PART.test(code[i])) i++; // flags
  };
  /** A JSX element or fragment from its `<`; attribute and child `{...}` are scanned as code. */
  const jsxElement = (): void => {
    i++; // <
    while (i < n && code[i] !== '>' && !(code[i] === '/' && code[i + 1] === '>')) {
      const c = code[i];
      if (c === '{') {
        i++;
        scanCode(true);
      } else if (c === '"' || c === "'") {
        const q = c;
        i++;
        while (i < n && code[i] !== q) i++;
        i++;
      } else if (c === '/' && (code[i + 1] === '/' || code[i + 1] === '*')) skipTrivia();
      else i++;
    }
    if (code[i] === '/') {
      i += 2;
      return;
    } // self-closing
    i++; // >
    // Children until the matching closing tag.
    while (i < n) {
      const c = code[i];
      if (c === '<' && code[i + 1] === '/') {
        while (i < n && code[i] !== '>') i++;
        i++;
        return;
      }
      if (c === '<') jsxElement();
      else if (c === '{') {
        i++;
        scanCode(true);
      } else i++;
    }
  };
  /** Code until the end, or (nested) until the `}` that closes the current `${`/`{`. */
  const scanCode = (nested: boolean): void => {
    let depth = 0;
    for (;;) {
      skipTrivia();
      if (i >= n) return;
      const c = code[i];
      const start = i;
      if (c === '"' || c === "'") tokens.push({ kind: 'string', value: quoted(c), start });
      else if (c === '`') {
        const value = template();
        tokens.push(value === null ? { kind: 'other', value: '`', start } : { kind: 'string', value, start });
      } else if (ID_START.test(c)) {
        while (i < n && ID_PART.test(code[i])) i++;
        tokens.push({ kind: 'name', value: code.slice(start, i), start });
      } else if (/[0-9]/.test(c) || (c === '.' && /[0-9]/.test(code[i + 1] ?? ''))) {
        while (i < n && /[\w.]/.test(code[i])) i++;
        tokens.push({ kind: 'other', value: code.slice(start, i), start });
      } else if (c === '/' && expressionExpected()) {
        regex();
        tokens.push({ kind: 'other', value: '/re/', start });
      } else if (jsx && c === '<' && expressionExpected() && /[A-Za-z_$>]/.test(code[i + 1] ?? '')) {
        jsxElement();
        tokens.push({ kind: 'other', value: '<jsx>', start });
      } else {
        i++;
        if (c === '{') depth++;
        else if (c === '}') {
          if (nested && depth === 0) return;
          depth--;
        }
        tokens.push({ kind: 'punct', value: c === '.' && code.startsWith('..', i) ? ((i += 2), '...') : c, start });
      }
    }
  };
  scanCode(false);
  return tokens;
}

/** Every module specifier a file names: imports (`import type` too), re-exports, `import('x')` and
 *  `import('x').T` types, and `import x = require('x')`. */
export function importsOf(file: string, code: string): { specifier: string; line: number }[] {
  const tokens = tokenize(code, /\.[jt]sx$/.test(file));
  const found: { specifier: string; line: number; start: number }[] = [];
  const lineOf = (offset: number) => {
    let line = 1;
    for (let k = code.indexOf('\n'); k >= 0 && k < offset; k = code.indexOf('\n', k + 1)) line++;
    return line;
  };
  const is = (k: number, kind: TokenKind, value?: string) =>
    tokens[k] !== undefined && tokens[k].kind === kind && (value === undefined || tokens[k].value === value);
  let declaration = -1; // the `import`/`export` that opened the current statement
  for (let k = 0; k < tokens.length; k++) {
    const t = tokens[k];
    if (t.kind === 'punct' && t.value === ';') declaration = -1;
    if (t.kind !== 'name' || is(k - 1, 'punct', '.')) continue;
    if (t.value === 'import') {
      if (is(k + 1, 'punct', '(')) {
        if (is(k + 2, 'string') && (is(k + 3, 'punct', ')') || is(k + 3, 'punct', ',')))
          found.push({ specifier: tokens[k + 2].value, line: 0, start: t.start });
      } else if (is(k + 1, 'string')) found.push({ specifier: tokens[k + 1].value, line: 0, start: t.start });
      else if (!is(k + 1, 'punct', '.')) declaration = k;
    } else if (t.value === 'export') declaration = k;
    else if (t.value === 'from' && declaration >= 0 && is(k + 1, 'string')) {
      found.push({ specifier: tokens[k + 1].value, line: 0, start: tokens[declaration].start });
      declaration = -1;
    } else if (
      t.value === 'require' &&
      declaration >= 0 &&
      is(k - 1, 'punct', '=') &&
      is(k + 1, 'punct', '(') &&
      is(k + 2, 'string')
    ) {
      found.push({ specifier: tokens[k + 2].value, line: 0, start: tokens[declaration].start });
      declaration = -1;
    }
  }
  return found.map(({ specifier, start }) => ({ specifier, line: lineOf(start) }));
}

const inside = (dir: string, target: string) => {
  const rel = path.relative(dir, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
};

export function checkBoundaries(root: string): Violation[] {
  root = path.resolve(root);
  const plugins = pluginPackages(root);
  const pluginNames = new Set(plugins.map((p) => p.name));
  const isPluginName = (name: string) => pluginNames.has(name) || /^@herald\/(provider|target)-/.test(name);
  const pluginDirOf = (target: string) => plugins.find((p) => inside(p.dir, target));
  const sharedTestTools = readPkg(root)?.deps ?? new Set<string>();
  const isTestFile = (pluginDir: string, file: string) =>
    /\.test\.[cm]?tsx?$/.test(file) || inside(path.join(pluginDir, 'test'), file);
  const violations: Violation[] = [];

  const scan = (dir: string, judge: (specifier: string, file: string) => string | null) => {
    for (const file of sourceFiles(dir)) {
      for (const { specifier, line } of importsOf(file, fs.readFileSync(file, 'utf8'))) {
        const reason = judge(specifier, file);
        if (reason) violations.push({ file: path.relative(root, file), line, specifier, reason });
      }
    }
  };
  const local = (specifier: string) =>
    specifier.startsWith('.') || path.isAbsolute(specifier) || specifier.startsWith('file:');
  const target = (specifier: string, file: string) =>
    specifier.startsWith('file:') ? new URL(specifier).pathname : path.resolve(path.dirname(file), specifier);

  // 1. Plugins: the contract, builtins, declared dependencies, their own files.
  for (const plugin of plugins) {
    scan(plugin.dir, (specifier, file) => {
      if (CONTRACT.has(specifier) || isBuiltin(specifier)) return null;
      if (local(specifier)) {
        return inside(plugin.dir, target(specifier, file))
          ? null
          : `a plugin imports only its own files; this path leaves ${path.relative(root, plugin.dir)}`;
      }
      const name = packageOf(specifier);
      if (name === CORE_PACKAGE || name === CONTRACT_PACKAGE) {
        return `a plugin imports the contract only through ${[...CONTRACT].join(', ')}`;
      }
      if (isPluginName(name) && name !== plugin.name) return 'a plugin does not import another plugin';
      if (name === plugin.name || plugin.deps.has(name)) return null;
      if (isTestFile(plugin.dir, file) && sharedTestTools.has(name)) return null;
      return `"${name}" is not declared in ${path.relative(root, path.join(plugin.dir, 'package.json'))}`;
    });
  }

  // 2. The core never imports a plugin.
  scan(path.join(root, 'core/src'), (specifier, file) => {
    if (local(specifier)) return pluginDirOf(target(specifier, file)) ? 'the core does not import a plugin' : null;
    return isPluginName(packageOf(specifier)) ? 'the core does not import a plugin' : null;
  });

  // 3. The contract never imports the core, a plugin, or anything outside its own folder.
  const contractDir = path.join(root, 'packages/plugin-api');
  scan(path.join(contractDir, 'src'), (specifier, file) => {
    if (local(specifier))
      return inside(contractDir, target(specifier, file)) ? null : 'the contract imports only its own files';
    const name = packageOf(specifier);
    if (name === CORE_PACKAGE) return 'the contract does not import the core';
    return isPluginName(name) ? 'the contract does not import a plugin' : null;
  });
  return violations;
}

// ---------------------------------------------------------------------------------------------
// 4 and 5: unused and undeclared dependencies.

/** Declared dependencies that no file imports but that are used all the same, by workspace folder
 *  ('.' is the root), each with the reason. */
export const USED_WITHOUT_IMPORT: Record<string, Record<string, string>> = {
  '.': {
    node: 'the Node 24 binary that `npm run` puts first on PATH for every script',
    typescript: '`tsc`, run by `npm run typecheck`',
    tap: 'the test runner (`npm test`, `npx tap`)',
    vite: '`vite build`, run by `npm run build:web`',
    '@biomejs/wasm-nodejs': 'the WebAssembly build of Biome that @biomejs/js-api loads for scripts/lint/biome.ts',
    '@types/node': 'the Node types, listed in tsconfig.json "types"',
    '@stryker-mutator/tap-runner':
      'the test runner plugin StrykerJS loads by name (stryker.config.mjs "plugins") for `npm run mutate`',
  },
  core: {
    '@fastify/helmet': 'loaded through createRequire(...).resolve(...) in core/src/http/security-headers.ts',
  },
};

/** Bare imports a package may make without declaring them, by workspace folder, each with the reason. */
export const UNDECLARED_ALLOWED: Record<string, Record<string, string>> = {
  '.': {
    // scripts/bench's load generator resolves the copy hoisted for openai (6.x), not the core's 8.x;
    // declaring it would change what the benchmarks measure with, so that waits for the next
    // re-baselining of the benchmarks.
    undici: 'scripts/bench uses the copy hoisted for openai until the benchmarks are re-baselined',
    'herald-provider-example':
      'test/plugins/template.test.ts builds examples/plugin-template in a temporary project and imports it there',
  },
};

const DEPENDENCY_FIELDS = ['dependencies', 'devDependencies', 'optionalDependencies'] as const;
const DEFAULT_WORKSPACES = ['packages/*', 'core', 'plugins/*', 'test/fixtures/plugins/*'];
const DEPS_SKIP_DIRS = new Set([...SKIP_DIRS, 'test-output', '.tap', 'coverage']);

interface Workspace {
  dir: string; // absolute
  key: string; // folder relative to the root, '.' for the root
  name: string;
  manifest: string; // package.json text
  declared: Map<string, string>; // name -> field (peerDependencies included)
}

function readWorkspace(root: string, dir: string): Workspace | null {
  const file = path.join(dir, 'package.json');
  if (!fs.existsSync(file)) return null;
  const manifest = fs.readFileSync(file, 'utf8');
  const json = JSON.parse(manifest);
  const declared = new Map<string, string>();
  for (const field of [...DEPENDENCY_FIELDS, 'peerDependencies']) {
    for (const name of Object.keys(json[field] ?? {})) if (!declared.has(name)) declared.set(name, field);
  }
  return { dir, key: path.relative(root, dir) || '.', name: json.name ?? path.basename(dir), manifest, declared };
}

function workspaces(root: string): Workspace[] {
  const rootWs = readWorkspace(root, root);
  if (!rootWs) return [];
  const patterns: string[] = JSON.parse(rootWs.manifest).workspaces ?? DEFAULT_WORKSPACES;
  const out = [rootWs];
  for (const pattern of patterns) {
    const dirs = pattern.endsWith('/*')
      ? fs.existsSync(path.join(root, pattern.slice(0, -2)))
        ? fs
            .readdirSync(path.join(root, pattern.slice(0, -2)), { withFileTypes: true })
            .filter((e) => e.isDirectory())
            .map((e) => path.join(root, pattern.slice(0, -2), e.name))
        : []
      : [path.join(root, pattern)];
    for (const dir of dirs) {
      const ws = readWorkspace(root, dir);
      if (ws) out.push(ws);
    }
  }
  return out;
}

/** Source files of a workspace: its folder, less node_modules/dist/output, nested workspaces and
 *  folders that are projects of their own (a package.json that is no workspace, e.g. examples/). */
function workspaceFiles(ws: Workspace, all: Set<string>): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
      if (DEPS_SKIP_DIRS.has(entry.name)) continue;
      const abs = path.join(dir, entry.name);
      if (entry.isDirectory()) {
        if (all.has(abs) || fs.existsSync(path.join(abs, 'package.json'))) continue;
        walk(abs);
      } else if (SOURCE.test(entry.name) && !entry.name.endsWith('.d.ts')) out.push(abs);
    }
  };
  walk(ws.dir);
  return out;
}

/** The line of `"name":` inside the manifest's `field` object, for the report. */
function manifestLine(manifest: string, field: string, name: string): number {
  const at = manifest.indexOf(`"${field}"`);
  const key = manifest.indexOf(`"${name}"`, at < 0 ? 0 : at);
  return key < 0 ? 1 : manifest.slice(0, key).split('\n').length;
}

/** `@types/x` and `@types/scope__x` are the types of `x` and `@scope/x`. */
const typedPackage = (types: string) => {
  const bare = types.slice('@types/'.length);
  return bare.includes('__') ? `@${bare.replace('__', '/')}` : bare;
};

export function checkDependencies(root: string): Violation[] {
  root = path.resolve(root);
  const all = workspaces(root);
  if (all.length === 0) return [];
  const [rootWs] = all;
  const workspaceNames = new Set(all.map((w) => w.name));
  const pluginDirs = PLUGIN_FOLDERS.map((f) => path.join(root, f));
  const dirs = new Set(all.filter((w) => w !== rootWs).map((w) => w.dir));
  const used = new Map(all.map((w) => [w, new Set<string>()] as const));
  const importedAnywhere = new Set<string>();
  const violations: Violation[] = [];

  for (const ws of all) {
    const sharesRoot = (file: string) =>
      ws === rootWs ||
      /\.test\.[cm]?[jt]sx?$/.test(file) ||
      inside(path.join(ws.dir, 'test'), file) ||
      (ws.key === 'core' && inside(path.join(ws.dir, 'web'), file));
    const isPlugin = pluginDirs.some((d) => path.dirname(ws.dir) === d);
    for (const file of workspaceFiles(ws, dirs)) {
      for (const { specifier, line } of importsOf(file, fs.readFileSync(file, 'utf8'))) {
        if (
          specifier.startsWith('.') ||
          specifier.startsWith('#') ||
          path.isAbsolute(specifier) ||
          /^[a-z]+:/.test(specifier) ||
          isBuiltin(specifier)
        )
          continue;
        const name = packageOf(specifier);
        importedAnywhere.add(name);
        if (ws.declared.has(name)) {
          used.get(ws)!.add(name);
          continue;
        }
        if (workspaceNames.has(name)) continue;
        if (sharesRoot(file) && rootWs.declared.has(name)) {
          used.get(rootWs)!.add(name);
          continue;
        }
        if (UNDECLARED_ALLOWED[ws.key]?.[name] || isPlugin) continue; // plugins: rule 1 reports it
        violations.push({
          file: path.relative(root, file),
          line,
          specifier,
          reason: `"${name}" is not declared in ${path.relative(root, path.join(ws.dir, 'package.json'))}`,
        });
      }
    }
  }

  for (const ws of all) {
    const manifest = path.relative(root, path.join(ws.dir, 'package.json'));
    for (const [name, field] of ws.declared) {
      if (field === 'peerDependencies' || used.get(ws)!.has(name) || USED_WITHOUT_IMPORT[ws.key]?.[name]) continue;
      if (name.startsWith('@types/') && importedAnywhere.has(typedPackage(name))) continue;
      violations.push({
        file: manifest,
        line: manifestLine(ws.manifest, field, name),
        specifier: name,
        reason: `"${name}" is declared in ${field} but no file of ${ws.name} imports it`,
      });
    }
  }
  return violations;
}

if (import.meta.main) {
  const args = process.argv.slice(2);
  const depsOnly = args.includes('--deps');
  const root = args.find((a) => !a.startsWith('--')) ?? path.resolve(import.meta.dirname, '../..');
  let failed = false;
  if (!depsOnly) {
    const violations = checkBoundaries(root);
    for (const v of violations) console.error(`${v.file}:${v.line}: import '${v.specifier}': ${v.reason}`);
    if (violations.length > 0) {
      console.error(`boundaries: ${violations.length} import(s) cross a package boundary`);
      failed = true;
    } else console.log('boundaries: plugins, contract and core keep to their imports');
  }
  const problems = checkDependencies(root);
  for (const v of problems) {
    console.error(
      v.file.endsWith('package.json')
        ? `${v.file}:${v.line}: ${v.reason}`
        : `${v.file}:${v.line}: import '${v.specifier}': ${v.reason}`,
    );
  }
  if (problems.length > 0) {
    console.error(
      `dependencies: ${problems.length} unused or undeclared dependenc${problems.length === 1 ? 'y' : 'ies'}`,
    );
    failed = true;
  } else console.log('dependencies: every declared dependency is imported, every import is declared');
  if (failed) process.exit(1);
}
