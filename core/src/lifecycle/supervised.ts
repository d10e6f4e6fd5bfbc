/**
 * Whether something will restart this process when it exits (needed by apply-restart).
 * SERVICE_SUPERVISED wins; otherwise systemd (INVOCATION_ID / NOTIFY_SOCKET), Herald's own
 * supervisor (`npm run start:supervised`), pm2, or s6 are recognised.
 */
export function detectSupervised(
  override: boolean | undefined,
  env: NodeJS.ProcessEnv = process.env,
): { supervised: boolean; by: string } {
  if (override !== undefined) return { supervised: override, by: 'SERVICE_SUPERVISED' };
  if (env.HERALD_SUPERVISOR === '1') return { supervised: true, by: 'herald-supervisor' };
  if (env.INVOCATION_ID || env.NOTIFY_SOCKET) return { supervised: true, by: 'systemd' };
  if (env.pm_id !== undefined || env.PM2_HOME) return { supervised: true, by: 'pm2' };
  if (env.S6_SERVICE_PATH || env.S6_VERSION) return { supervised: true, by: 's6' };
  return { supervised: false, by: 'none' };
}

/** Exit code that asks a supervisor for an immediate restart (EX_TEMPFAIL). */
export const RESTART_EXIT_CODE = 75;
