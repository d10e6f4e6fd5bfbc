import pg from 'pg';
import type { Config } from '../config/config.ts';
import type { Logger } from '../logging/logger.ts';
import type { LeaderElector } from './scheduler.ts';

/** Arbitrary constant: the advisory lock id of Herald's scheduler. */
const LOCK_KEY = 7_226_371_901;
const CHECK_MS = 1000;
/** How long opening the connection may take before the check fails (the next one tries again). */
const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Leader election on PostgreSQL: the replica whose session holds `pg_try_advisory_lock` leads.
 * The lock lives as long as that session, so a dead leader's lock is freed by the server and
 * another replica takes it at its next check (within about a second).
 */
export class PgAdvisoryLeader implements LeaderElector {
  private client?: pg.Client;
  private leader = false;
  private timer?: NodeJS.Timeout;
  private stopped = false;
  /** The latest check: stop() waits for it, so a connection it is opening is closed too. */
  private checking?: Promise<void>;
  private config: Config;
  private log: Logger;
  private onChange: (leader: boolean) => void = () => {};

  constructor(config: Config, log: Logger) {
    this.config = config;
    this.log = log;
  }

  isLeader(): boolean {
    return this.leader;
  }

  private set(leader: boolean): void {
    if (leader === this.leader) return;
    this.leader = leader;
    this.onChange(leader);
  }

  /** Runs one check and keeps it for stop() (checkOnce catches its own errors). */
  private check(): Promise<void> {
    this.checking = this.checkOnce();
    return this.checking;
  }

  private async checkOnce(): Promise<void> {
    if (this.stopped) return;
    try {
      if (!this.client) {
        const c = new pg.Client({
          connectionString: this.config.databaseUrl,
          application_name: 'herald-leader',
          connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
        });
        c.on('error', (err) => {
          this.log.warn({ err }, 'leader connection lost');
          if (this.client === c) this.client = undefined;
          this.set(false);
        });
        try {
          await c.connect();
        } catch (err) {
          await c.end().catch(() => {});
          throw err;
        }
        this.client = c;
      }
      // Stopped meanwhile: stop() closes the connection; the lock is not taken any more.
      if (this.stopped) return;
      if (this.leader) await this.client.query('SELECT 1');
      else {
        const r = await this.client.query<{ ok: boolean }>('SELECT pg_try_advisory_lock($1) AS ok', [LOCK_KEY]);
        if (r.rows[0]?.ok) this.set(true);
      }
    } catch (err) {
      this.log.warn({ err }, 'leader check failed');
      await this.client?.end().catch(() => {});
      this.client = undefined;
      this.set(false);
    }
  }

  async start(onChange: (leader: boolean) => void): Promise<void> {
    this.onChange = onChange;
    await this.check();
    if (this.stopped) return;
    const loop = async () => {
      if (this.stopped) return;
      await this.check();
      if (this.stopped) return;
      this.timer = setTimeout(loop, CHECK_MS);
      this.timer.unref();
    };
    this.timer = setTimeout(loop, CHECK_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    // A check under way may be connecting: once it is done, its client is this.client and is closed below.
    await this.checking?.catch(() => {});
    if (this.client) {
      await this.client.query('SELECT pg_advisory_unlock_all()').catch(() => {});
      await this.client.end().catch(() => {});
      this.client = undefined;
    }
    this.leader = false;
  }
}
