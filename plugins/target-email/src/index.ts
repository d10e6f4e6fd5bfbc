/**
 * @herald/target-email: delivers notifications as multipart (plain text + HTML) email through
 * an SMTP submission server, over STARTTLS, implicit TLS or, if asked, plain SMTP.
 */

import type { SendResult } from '@herald/plugin-api';
import { ConfigError, defineTarget, NOT_SUPPORTED, PLUGIN_API_VERSION } from '@herald/plugin-api';
import enLocale from '../locales/en.json' with { type: 'json' };
import ruLocale from '../locales/ru.json' with { type: 'json' };
import { composeMail, composeReply, messageIdOf } from './compose.ts';
import { configSchema } from './config.ts';
import { toSendError, toStartError } from './smtp-errors.ts';
import { SmtpSender } from './smtp-sender.ts';

export { composeMail, composeReply, subjectOf } from './compose.ts';
export type { EmailTargetConfig } from './config.ts';
export { configSchema } from './config.ts';

export default defineTarget({
  manifest: {
    id: 'email',
    kind: 'target',
    apiVersion: PLUGIN_API_VERSION,
    displayName: 'Email',
    locales: { en: enLocale, ru: ruLocale },
    description: 'Sends notifications as email through an SMTP server.',
    configSchema,
    limits: { maxMessageLength: 100_000, formats: ['html'], overflow: 'truncate' },
  },
  // The check create() makes at start, made when the config is saved too.
  validateConfig: (cfg) =>
    cfg.password && !cfg.username
      ? [
          {
            path: '/username',
            message: 'is required when a password is set',
            code: 'required',
            detail: 'A password is set without a username; set the SMTP username too, or remove the password.',
          },
        ]
      : [],
  create(ctx) {
    const cfg = ctx.config;
    if (cfg.password && !cfg.username) throw new ConfigError('a password is set without a username');
    const sender = new SmtpSender(cfg, ctx.http, ctx.log);
    return {
      async start() {
        if (cfg.username && cfg.security === 'none')
          ctx.log.warn({ host: cfg.host }, 'smtp login over an unencrypted connection');
        try {
          await sender.verify();
        } catch (err) {
          throw toStartError(err, cfg.password);
        }
      },
      async send(message, { signal }): Promise<SendResult> {
        const mail = composeMail(cfg, message);
        try {
          const info = await sender.send(mail, signal);
          return {
            remoteId: info.messageId,
            detail: info.rejected.length ? `refused recipients: ${info.rejected.join(', ')}` : undefined,
            // Later events about the same thing are sent in reply to this mail (see reply).
            messageRef: { message_id: messageIdOf(info.messageId) ?? mail.messageId },
          };
        } catch (err) {
          throw toSendError(err, cfg.password);
        }
      },
      // A sent mail cannot be changed: a later event about the same thing is a reply in the
      // thread of the first mail (In-Reply-To and References name its Message-ID).
      async reply({ previous, message }, { signal }): Promise<SendResult | typeof NOT_SUPPORTED> {
        const root = messageIdOf(previous.messageRef.message_id);
        if (!root) return NOT_SUPPORTED;
        const mail = composeReply(cfg, message, root);
        try {
          const info = await sender.send(mail, signal);
          return {
            remoteId: info.messageId,
            detail: info.rejected.length ? `refused recipients: ${info.rejected.join(', ')}` : undefined,
            messageRef: { message_id: messageIdOf(info.messageId) ?? mail.messageId },
          };
        } catch (err) {
          throw toSendError(err, cfg.password);
        }
      },
      stop() {
        sender.close();
      },
    };
  },
});
