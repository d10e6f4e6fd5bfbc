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
// Usage: node scripts/lint/boundaries.ts [root]. Prints one line per violation, exits 1 if any.
import fs from 'node:fs';
import path from 'node:path';
import { isBuiltin } from 'node:module';
import { parseSync } from 'oxc-parser';

export interface Violation { file: string; line: number; specifier: string; reason: string }

export const CONTRACT = new Set(['@herald/plugin-api', '@herald/plugin-api/testing', '@herald/core/plugin-api', '@herald/core/plugin-api/testing']);
const CORE_PACKAGE = '@herald/core';
const CONTRACT_PACKAGE = '@herald/plugin-api';
const PLUGIN_FOLDERS = ['plugins', 'test/fixtures/plugins'];
const SOURCE = /\.(ts|tsx|mts|cts|js|mjs|cjs|jsx)$/;
const SKIP_DIRS = new Set(['node_modules', 'dist', '.git']);

interface Pkg { dir: string; name: string; deps: Set<string> }

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

/** Every module specifier a file names: imports, re-exports, `import('x')` and `import('x').T` types. */
export function importsOf(file: string, code: string): { specifier: string; line: number }[] {
  const { program } = parseSync(file, code, { sourceType: 'module' });
  const found: { specifier: string; line: number }[] = [];
  const lineOf = (offset: number) => code.slice(0, offset).split('\n').length;
  const literal = (node: any): string | null => {
    if (!node) return null;
    if (typeof node.value === 'string' && (node.type === 'Literal' || node.type === 'StringLiteral')) return node.value;
    if (node.type === 'TSLiteralType') return literal(node.literal);
    if (node.type === 'TemplateLiteral' && node.expressions.length === 0) return node.quasis[0]?.value?.cooked ?? null;
    return null;
  };
  const walk = (node: any): void => {
    if (!node || typeof node !== 'object') return;
    if (Array.isArray(node)) { for (const n of node) walk(n); return; }
    let source: any = null;
    switch (node.type) {
      case 'ImportDeclaration': case 'ExportNamedDeclaration': case 'ExportAllDeclaration': case 'ImportExpression':
        source = node.source; break;
      case 'TSImportType': source = node.source ?? node.argument; break;
      case 'TSExternalModuleReference': source = node.expression; break;
    }
    const specifier = literal(source);
    if (specifier !== null) found.push({ specifier, line: lineOf(node.start) });
    for (const key of Object.keys(node)) {
      if (key !== 'parent' && typeof node[key] === 'object') walk(node[key]);
    }
  };
  walk(program);
  return found;
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
  const local = (specifier: string) => specifier.startsWith('.') || path.isAbsolute(specifier) || specifier.startsWith('file:');
  const target = (specifier: string, file: string) =>
    specifier.startsWith('file:') ? new URL(specifier).pathname : path.resolve(path.dirname(file), specifier);

  // 1. Plugins: the contract, builtins, declared dependencies, their own files.
  for (const plugin of plugins) {
    scan(plugin.dir, (specifier, file) => {
      if (CONTRACT.has(specifier) || isBuiltin(specifier)) return null;
      if (local(specifier)) {
        return inside(plugin.dir, target(specifier, file)) ? null
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
    if (local(specifier)) return inside(contractDir, target(specifier, file)) ? null : 'the contract imports only its own files';
    const name = packageOf(specifier);
    if (name === CORE_PACKAGE) return 'the contract does not import the core';
    return isPluginName(name) ? 'the contract does not import a plugin' : null;
  });
  return violations;
}

if (import.meta.main) {
  const root = process.argv[2] ?? path.resolve(import.meta.dirname, '../..');
  const violations = checkBoundaries(root);
  for (const v of violations) console.error(`${v.file}:${v.line}: import '${v.specifier}': ${v.reason}`);
  if (violations.length > 0) {
    console.error(`boundaries: ${violations.length} import(s) cross a package boundary`);
    process.exit(1);
  }
  console.log('boundaries: plugins, contract and core keep to their imports');
}
