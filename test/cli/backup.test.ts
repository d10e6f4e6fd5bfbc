/**
 * `herald backup create` and `list` on a configured running service's data (SQLite file, or
 * PostgreSQL in the second pass): a backup holds what the API's export holds (the same configuration
 * and checksum), with or without secrets (staging: backup-stage.test.ts; bad files: backup-input.test.ts).
 */

import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import t from 'tap';
import { configure, exportNow, SECRETS } from '../backup/support.ts';
import { startService } from '../helpers/service.ts';
import { herald, serviceEnv } from './support.ts';

t.test('backup create and list while the service runs', async (t) => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'herald-cli-backup-'));
  t.teardown(() => fs.rmSync(dataDir, { recursive: true, force: true }));
  const s = await startService({}, { dataDir });
  t.teardown(() => s.stop());
  await configure(s);
  const env = await serviceEnv(dataDir);
  const backups = path.join(dataDir, 'backups');

  // While the service runs: the same export code, so the same configuration, byte for byte.
  const made = await herald(['backup', 'create', '--secrets', 'include'], env);
  t.equal(made.code, 0, made.stderr);
  const [, file] = /^Backup written: (\S+) \(\d+(?:\.\d)? KiB\)\n/.exec(made.stdout) ?? [];
  t.ok(file && path.dirname(file) === backups, `written into the backups folder: ${made.stdout}`);
  t.match(made.stdout, /It holds the secrets \(sealed with SERVICE_SECRET_KEY\) and the password hashes/);
  t.equal(fs.statSync(file!).mode & 0o777, 0o600, 'owner-only, as the service writes backups');
  const written = JSON.parse(fs.readFileSync(file!, 'utf8'));
  const api = await exportNow(s, 'include');
  t.equal(written.checksum, api.checksum, 'the checksum of what the API exports now');
  t.same(written.configuration, api.configuration, 'the same configuration');
  t.match(written, { format: 'herald-config-backup', secrets_mode: 'include', trigger: 'manual' });

  const plain = await herald(['backup', 'create'], env);
  t.equal(plain.code, 0, plain.stderr);
  t.match(plain.stdout, /Secrets and password hashes were left out/);
  const plainFile = /^Backup written: (\S+) /.exec(plain.stdout)![1]!;
  const plainText = fs.readFileSync(plainFile, 'utf8');
  t.notOk(
    plainText.includes('enc:v1:') || plainText.includes(SECRETS.api) || plainText.includes('$2'),
    'no secret, sealed or not, and no password hash',
  );
  t.equal(JSON.parse(plainText).checksum, (await exportNow(s, 'exclude')).checksum);

  const listed = await herald(['backup', 'list', '--json'], env);
  t.equal(listed.code, 0, listed.stderr);
  t.same(
    JSON.parse(listed.stdout).files.map((f: { filename: string }) => path.join(backups, f.filename)),
    [plainFile, file],
    'newest first',
  );
});
