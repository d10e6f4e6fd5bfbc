import { MikroORM, PostgreSqlDriver } from '@mikro-orm/postgresql';
import type { MikroORM as BaseORM } from '@mikro-orm/core';
import type { Config } from '../config/config.ts';
import type { Logger } from '../logging/logger.ts';

/** PostgreSQL backend for several replicas. */
export async function openPostgres(config: Config, log: Logger, entities: unknown[]): Promise<BaseORM> {
  const orm = await MikroORM.init({
    driver: PostgreSqlDriver,
    clientUrl: config.databaseUrl,
    entities: entities as never,
    debug: config.debug ? ['query', 'query-params'] : false,
    logger: (msg: string) => log.debug({ sql: msg }, 'sql'),
    allowGlobalContext: false,
  });
  return orm as unknown as BaseORM;
}
