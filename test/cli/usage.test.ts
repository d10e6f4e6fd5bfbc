/**
 * The command line's own surface, without a database: help of every command in English and
 * Russian (the language from --lang, else LC_ALL / LC_MESSAGES / LANG), and usage errors and a
 * refused configuration answered with their message and exit code before anything is opened.
 */
import t from 'tap';
import { herald, serviceEnv } from './support.ts';

t.test('--help on every command, in English and Russian', async (t) => {
  // Every command of the program, in both languages, in this process (each run below costs a Node start).
  const { buildProgram } = await import('../../core/src/cli/program.ts');
  const { Messages } = await import('../../core/src/cli/i18n.ts');
  type Cmd = { name(): string; commands: readonly Cmd[]; helpInformation(): string; description(): string };
  const leaves = (c: Cmd, path: string[] = []): [string[], Cmd][] =>
    c.commands
      .filter((x) => x.name() !== 'help')
      .flatMap((x) =>
        x.commands.length ? leaves(x, [...path, x.name()]) : [[[...path, x.name()], x] as [string[], Cmd]],
      );
  for (const lang of ['en', 'ru'] as const) {
    const m = new Messages(lang);
    const all = leaves(buildProgram(m, () => {}) as unknown as Cmd);
    t.same(
      all.map(([p]) => p.join(' ')).sort(),
      [
        'backup create',
        'backup list',
        'backup stage',
        'backup unstage',
        'doctor',
        'events prune',
        'events stats',
        'plugin install',
        'plugin list',
        'plugin remove',
        'user activate',
        'user create',
        'user deactivate',
        'user list',
        'user reset-password',
        'user revoke-sessions',
      ],
      `${lang}: the commands`,
    );
    for (const [p, c] of all) {
      const help = c.helpInformation();
      t.match(
        help,
        new RegExp(`^${lang === 'en' ? 'Usage' : 'Использование'}: herald ${p.join(' ')} `),
        `${lang}: ${p.join(' ')} has a usage line`,
      );
      t.ok(
        c.description().length > 20 && help.includes(c.description().slice(0, 20)),
        `${lang}: ${p.join(' ')} is described`,
      );
      t.notOk(
        /\b(help|user|backup|events|doctor|usage|plugin)\.[a-z_]+/.test(help),
        `${lang}: ${p.join(' ')} has no missing string`,
      );
    }
  }

  const env = await serviceEnv('/nonexistent-herald-data');
  const top = await herald(['--help'], env);
  t.equal(top.code, 0);
  t.match(top.stdout, /^Usage: herald \[options\] \[command\]\n/);
  for (const c of ['user', 'doctor', 'backup', 'events']) t.match(top.stdout, new RegExp(`\\n  ${c}\\b`), `lists ${c}`);
  const ru = await herald(['user', 'create', '--help'], { ...env, LC_ALL: 'ru_RU.UTF-8' });
  t.equal(ru.code, 0);
  t.match(ru.stdout, /^Использование: herald user create \[options\] <email>\n\nсоздать пользователя/);
  t.match(ru.stdout, /Параметры:\n/);
  t.match(ru.stdout, /--password-stdin +прочитать пароль со стандартного ввода/);
  const en = await herald(['--lang', 'en', 'backup', 'create', '--help'], { ...env, LC_ALL: 'ru_RU.UTF-8' });
  t.match(
    en.stdout,
    /--secrets <mode> [\s\S]*\(one of:\s+exclude, include; default: exclude\)/,
    '--lang wins over the environment',
  );
});

t.test('usage errors and a refused configuration: the message and the exit code', async (t) => {
  const env = await serviceEnv('/nonexistent-herald-data');
  const badEmail = await herald(['user', 'create', 'not-an-address', '--password-stdin'], env, 'good password here\n');
  t.equal(badEmail.code, 2);
  t.equal(badEmail.stderr, 'herald: not-an-address is not an email address.\n');
  const unknownOption = await herald(['user', 'list', '--everything'], { ...env, LANG: 'ru_RU.UTF-8' });
  t.equal(unknownOption.code, 2);
  t.equal(
    unknownOption.stderr,
    'herald: неизвестный параметр --everything\nСправка: herald --help или herald <команда> --help.\n',
  );
  const badChoice = await herald(['backup', 'create', '--secrets', 'some'], env);
  t.equal(badChoice.code, 2);
  t.equal(
    badChoice.stderr,
    'herald: some is not allowed for --secrets <mode>; use one of: exclude, include\nSee herald --help, or herald ' +
      '<command> --help.\n',
  );
  const badConfig = await herald(['user', 'list'], { ...env, SERVICE_SECRET_KEY: 'changeme' });
  t.equal(badConfig.code, 1);
  t.match(badConfig.stderr, /^herald: the configuration is refused: SERVICE_SECRET_KEY /, "the service's own refusal");
});
