/**
 * `npm run mutate [-- name...]`: runs Stryker once per module of stryker.config.mjs (all of them, or
 * the ones named), each mutating only its files against only its tests, and prints the score of
 * each with its surviving mutants. A module's JSON report goes to test-output/mutation/<name>.json.
 */
import { Stryker } from '@stryker-mutator/core';
import config, { modules } from '../../stryker.config.mjs';

const asked = process.argv.slice(2);
const unknown = asked.filter((n) => !modules.some((m) => m.name === n));
if (unknown.length) {
  console.error(`Unknown module(s): ${unknown.join(', ')}. Modules: ${modules.map((m) => m.name).join(', ')}.`);
  process.exit(2);
}
const chosen = asked.length ? modules.filter((m) => asked.includes(m.name)) : modules;

interface Row {
  name: string;
  killed: number;
  survived: number;
  noCoverage: number;
  timeout: number;
  errors: number;
  score: number;
  minutes: number;
}
const rows: Row[] = [];
for (const m of chosen) {
  const started = Date.now();
  console.log(`\n=== ${m.name}: ${m.mutate.join(', ')} against ${m.tests.join(', ')}`);
  // The config file is read as the base; these override it for the module.
  const results = await new Stryker({
    mutate: m.mutate,
    tap: { ...config.tap, testFiles: m.tests },
    jsonReporter: { fileName: `test-output/mutation/${m.name}.json` },
    // A sandbox folder per module, so that two modules can be run at once from two shells.
    tempDirName: `${config.tempDirName}/${m.name}`,
  }).runMutationTest();
  const count = (...s: string[]) => results.filter((r) => s.includes(r.status)).length;
  const killed = count('Killed'),
    timeout = count('Timeout'),
    survived = count('Survived'),
    noCoverage = count('NoCoverage');
  const errors = count('RuntimeError', 'CompileError');
  const valid = killed + timeout + survived + noCoverage;
  rows.push({
    name: m.name,
    killed,
    survived,
    noCoverage,
    timeout,
    errors,
    score: valid ? (100 * (killed + timeout)) / valid : 100,
    minutes: (Date.now() - started) / 60_000,
  });
  for (const r of results.filter((x) => x.status === 'Survived' || x.status === 'NoCoverage')) {
    const where = `${r.fileName}:${r.location.start.line}:${r.location.start.column + 1}`;
    console.log(`  ${r.status} ${where} ${r.mutatorName}: ${JSON.stringify(r.replacement ?? '')}`);
  }
}
console.log('\nmodule            score   killed  timeout survived no-cov  errors  minutes');
for (const r of rows) {
  const counts = [
    String(r.killed).padStart(7),
    String(r.timeout).padStart(8),
    String(r.survived).padStart(8),
    String(r.noCoverage).padStart(6),
    String(r.errors).padStart(7),
    r.minutes.toFixed(1).padStart(8),
  ];
  console.log(`${r.name.padEnd(17)} ${r.score.toFixed(1).padStart(5)} % ${counts.join(' ')}`);
}
