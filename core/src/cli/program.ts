/**
 * The operator's command line (`npm run herald -- <command>`, in the image `herald <command>`):
 * the commands, their options and help in the reader's language, usage errors worded likewise.
 * Every command reads the service's SERVICE_* configuration.
 */
import { Command, CommanderError, Option } from 'commander';
import { isLanguage, LANGUAGES, languageArgument, languageOfEnvironment, Messages } from './i18n.ts';
import { openSettings } from './options.ts';
import { EXIT, printError } from './output.ts';

/** Commander's titles in help texts, as this language writes them. */
const TITLES: Record<string, string> = {
  'Usage:': 'help.usage',
  'Options:': 'help.options',
  'Commands:': 'help.commands',
  'Arguments:': 'help.arguments',
  'Global Options:': 'help.global_options',
};

/**
 * A usage error of commander in this language: its code picks the sentence, the quoted names in its English text fill
 * it in.
 */
function usageMessage(err: CommanderError, m: Messages): string {
  const quoted = [...err.message.matchAll(/'([^']*)'/g)].map((x) => x[1]!);
  const english = err.message.replace(/^error: /, '');
  switch (err.code) {
    case 'commander.unknownOption':
      return m.t('usage.unknown_option', { option: quoted[0] ?? '' });
    case 'commander.unknownCommand':
      return m.t('usage.unknown_command', { command: quoted[0] ?? '' });
    case 'commander.missingArgument':
      return m.t('usage.missing_argument', { name: quoted[0] ?? '' });
    case 'commander.optionMissingArgument':
      return m.t('usage.option_missing_argument', { option: quoted[0] ?? '' });
    case 'commander.missingMandatoryOptionValue':
      return m.t('usage.mandatory_option', { option: quoted[0] ?? '' });
    case 'commander.excessArguments':
      return m.t('usage.excess_arguments');
    case 'commander.invalidArgument': {
      const allowed = /Allowed choices are (.+)\.$/.exec(english)?.[1];
      return allowed
        ? m.t('usage.invalid_choice', { option: quoted[0] ?? '', value: quoted[1] ?? '', allowed })
        : english;
    }
    default:
      return english;
  }
}

/** Builds the program; `done` receives each action's exit code. */
export function buildProgram(m: Messages, done: (code: number) => void): Command {
  const t = m.t.bind(m);
  const program = new Command('herald');
  program
    .description(t('help.program'))
    .addOption(new Option('--lang <language>', t('help.lang')).choices(LANGUAGES))
    .option('--migrate', t('help.migrate'))
    .helpOption('-h, --help', t('help.help_option'))
    .helpCommand('help [command]', t('help.help_command'))
    .configureHelp({
      styleTitle: (s: string) => (TITLES[s] ? t(TITLES[s]) : s),
      optionDescription: (o: Option) => {
        const extra: string[] = [];
        if (o.argChoices) extra.push(t('help.choices', { values: o.argChoices.join(', ') }));
        if (o.defaultValue !== undefined && typeof o.defaultValue !== 'boolean')
          extra.push(t('help.default', { value: String(o.defaultValue) }));
        return extra.length ? `${o.description} (${extra.join('; ')})` : o.description;
      },
      sortSubcommands: false,
    })
    .configureOutput({
      // Usage errors are printed in the reader's language by run() below.
      outputError: () => {},
    })
    .exitOverride()
    .showSuggestionAfterError(false)
    .addHelpText('after', `\n${t('help.after_program')}`);

  const act =
    <A extends unknown[]>(fn: (...args: A) => Promise<number | void> | number | void) =>
    async (...args: A) => {
      openSettings.migrate = Boolean(program.opts().migrate);
      done((await fn(...args)) ?? EXIT.ok);
    };

  // user
  const user = program.command('user').description(t('help.user'));
  user
    .command('list')
    .description(t('help.user_list'))
    .option('--json', t('help.json'))
    .action(act(async (o: { json?: boolean }) => (await import('./users.ts')).listUsers(m, o)));
  user
    .command('create')
    .description(t('help.user_create'))
    .argument('<email>', t('help.email'))
    .option('--admin', t('help.admin'))
    .option('--password-stdin', t('help.password_stdin'))
    .addOption(new Option('--locale <language>', t('help.locale')).choices(LANGUAGES))
    .action(
      act(async (email: string, o: { admin?: boolean; passwordStdin?: boolean; locale?: string }) =>
        (await import('./users.ts')).createUserCommand(m, email, o),
      ),
    );
  user
    .command('reset-password')
    .description(t('help.user_reset'))
    .argument('<email>', t('help.email'))
    .option('--password-stdin', t('help.password_stdin'))
    .action(
      act(async (email: string, o: { passwordStdin?: boolean }) =>
        (await import('./users.ts')).resetPassword(m, email, o),
      ),
    );
  user
    .command('activate')
    .description(t('help.user_activate'))
    .argument('<email>', t('help.email'))
    .action(act(async (email: string) => (await import('./users.ts')).setActive(m, email, true)));
  user
    .command('deactivate')
    .description(t('help.user_deactivate'))
    .argument('<email>', t('help.email'))
    .action(act(async (email: string) => (await import('./users.ts')).setActive(m, email, false)));
  user
    .command('revoke-sessions')
    .description(t('help.user_revoke'))
    .argument('<email>', t('help.email'))
    .action(act(async (email: string) => (await import('./users.ts')).revokeSessions(m, email)));

  program
    .command('doctor')
    .description(t('help.doctor'))
    .option('--json', t('help.json'))
    .action(act(async (o: { json?: boolean }) => (await import('./doctor.ts')).runDoctor(m, o)));

  // backup
  const backup = program.command('backup').description(t('help.backup'));
  backup
    .command('create')
    .description(t('help.backup_create'))
    .addOption(new Option('--secrets <mode>', t('help.secrets')).choices(['exclude', 'include']).default('exclude'))
    .action(act(async (o: { secrets?: string }) => (await import('./backup.ts')).createBackup(m, o)));
  backup
    .command('list')
    .description(t('help.backup_list'))
    .option('--json', t('help.json'))
    .action(act(async (o: { json?: boolean }) => (await import('./backup.ts')).listBackupFiles(m, o)));
  backup
    .command('stage')
    .description(t('help.backup_stage'))
    .argument('<file>', t('help.backup_file'))
    .addOption(
      new Option('--conflict-mode <mode>', t('help.conflict_mode'))
        .choices(['fail', 'overwrite', 'skip'])
        .default('fail'),
    )
    .action(
      act(async (file: string, o: { conflictMode?: string }) => (await import('./backup.ts')).stageBackup(m, file, o)),
    );
  backup
    .command('unstage')
    .description(t('help.backup_unstage'))
    .action(act(async () => (await import('./backup.ts')).unstageBackup(m)));

  // events
  const events = program.command('events').description(t('help.events'));
  events
    .command('prune')
    .description(t('help.events_prune'))
    .requiredOption('--before <date>', t('help.before'))
    .option('--url <url>', t('help.prune_url'))
    .option('--local', t('help.prune_local'))
    .addHelpText('after', `\n${t('help.events_prune_after')}`)
    .action(
      act(async (o: { before: string; url?: string; local?: boolean }) =>
        (await import('./events.ts')).pruneEvents(m, o),
      ),
    );
  events
    .command('stats')
    .description(t('help.events_stats'))
    .option('--json', t('help.json'))
    .action(act(async (o: { json?: boolean }) => (await import('./events.ts')).eventStats(m, o)));

  // plugin: the plugin directory (SERVICE_PLUGIN_DIR).
  const plugin = program.command('plugin').description(t('help.plugin'));
  plugin
    .command('list')
    .description(t('help.plugin_list'))
    .option('--json', t('help.json'))
    .action(act(async (o: { json?: boolean }) => (await import('./plugins.ts')).listPluginDir(m, o)));
  plugin
    .command('install')
    .description(t('help.plugin_install'))
    .argument('<spec>', t('help.plugin_spec'))
    .action(act(async (spec: string) => (await import('./plugins.ts')).installPluginCommand(m, spec)));
  plugin
    .command('remove')
    .description(t('help.plugin_remove'))
    .argument('<name>', t('help.plugin_name'))
    .action(act(async (name: string) => (await import('./plugins.ts')).removePluginCommand(m, name)));
  return program;
}

/** Runs one command line; resolves with the exit code. */
export async function run(argv: string[]): Promise<number> {
  const asked = languageArgument(argv);
  const m = new Messages(isLanguage(asked) ? asked : languageOfEnvironment(process.env));
  let code: number = EXIT.ok;
  const program = buildProgram(m, (c) => {
    code = c;
  });
  try {
    await program.parseAsync(argv, { from: 'user' });
  } catch (err) {
    if (err instanceof CommanderError) {
      // Help and version output end the run too; their code is commander's (0, or 1 for a group without its
      // subcommand).
      if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help')
        return err.exitCode;
      process.stderr.write(`herald: ${usageMessage(err, m)}\n${m.t('usage.see_help')}\n`);
      return EXIT.usage;
    }
    return await printError(err, m);
  }
  return code;
}
