/**
 * What this target says to people, in English and Russian: the line that opens an update and the
 * sentences of the errors a delivery records (shown on the event and by the test endpoint). The
 * REST API's own error text is quoted as it came.
 */
import type { Locale } from '@herald/plugin-api';

interface Words {
  update: (title: string) => string;
  answered: (status: number, text: string) => string;
  proxyRefused: string;
  noApi: string;
  rateLimited: string;
  unreachable: (why: string) => string;
  refused: (why: string) => string;
  cut: (n: number) => string;
  notDelivered: (list: string) => string;
}

const EN: Words = {
  update: (title) => `Update to “${title}”:`,
  answered: (status, text) => `signal-cli REST API answered ${status}: ${text}`,
  proxyRefused: 'the server (or a proxy in front of it) refused the request; check its address and access rules',
  noApi: 'no signal-cli REST API answers /v2/send at this address',
  rateLimited:
    'Signal limits this sender; solve the challenge through /v1/accounts/{number}/rate-limit-challenge if it persists',
  unreachable: (why) => `signal-cli REST API unreachable: ${why}`,
  refused: (why) => `signal-cli REST API refused: ${why}`,
  cut: (n) => `cut ${n} characters to fit Signal's 2,000-byte message text`,
  notDelivered: (list) => `not delivered to ${list}`,
};

const RU: Words = {
  update: (title) => `Обновление к «${title}»:`,
  answered: (status, text) => `signal-cli REST API ответил ${status}: ${text}`,
  proxyRefused: 'сервер (или прокси перед ним) отклонил запрос; проверьте его адрес и правила доступа',
  noApi: 'по этому адресу нет signal-cli REST API с /v2/send',
  rateLimited:
    'Signal ограничивает этого отправителя; если это не проходит, пройдите проверку через ' +
    '/v1/accounts/{number}/rate-limit-challenge',
  unreachable: (why) => `signal-cli REST API недоступен: ${why}`,
  refused: (why) => `signal-cli REST API отклонён: ${why}`,
  cut: (n) => `обрезано символов: ${n}, чтобы уложиться в 2000 байт текста сообщения Signal`,
  notDelivered: (list) => `не доставлено: ${list}`,
};

/** The words in `locale` (English for any language without its own). */
export const words = (locale: Locale | string): Words => (locale === 'ru' ? RU : EN);

/** The line that opens a message updating an earlier one, in the target's language. */
export const updatePrefix = (locale: Locale | string, previousTitle: string): string =>
  words(locale).update(previousTitle);
