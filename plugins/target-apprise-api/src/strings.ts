/**
 * What this target says to people, in English and Russian: the line that opens an update and the
 * sentences of the errors and details a delivery records. Apprise's own text is quoted as it came.
 */
import type { Locale } from '@herald/plugin-api';

interface Words {
  update: (title: string) => string;
  answered: (status: number, text: string) => string;
  noConfig: (key: string) => string;
  noValidUrls: string;
  partial: string;
  noneSent: string;
  authRejected: string;
  noApi: string;
  unreachable: (why: string) => string;
  refused: (why: string) => string;
  notified: (n: number) => string;
  cut: (n: number) => string;
}

const EN: Words = {
  update: (title) => `Update to “${title}”:`,
  answered: (status, text) => `Apprise API answered ${status}: ${text}`,
  noConfig: (key) => `no configuration is saved under the key "${key}" (or it is empty)`,
  noValidUrls: 'none of the Apprise URLs is one Apprise can notify',
  partial: 'some services got it and some did not; not retried, so those that did do not get it twice',
  noneSent: 'no service got it; retrying',
  authRejected: 'the server (or a proxy in front of it) refused the credentials; check the user name and password',
  noApi: 'no Apprise API answers /notify at this address',
  unreachable: (why) => `Apprise API unreachable: ${why}`,
  refused: (why) => `Apprise API refused: ${why}`,
  notified: (n) => `Apprise notified ${n} service${n === 1 ? '' : 's'}`,
  cut: (n) => `cut ${n} characters to fit the message limit`,
};

const RU: Words = {
  update: (title) => `Обновление к «${title}»:`,
  answered: (status, text) => `Apprise API ответил ${status}: ${text}`,
  noConfig: (key) => `под ключом «${key}» нет сохранённой конфигурации (или она пуста)`,
  noValidUrls: 'ни один из адресов Apprise не подходит для уведомления',
  partial:
    'часть сервисов получила уведомление, часть — нет; повтора не будет, чтобы получившие не получили его дважды',
  noneSent: 'ни один сервис не получил уведомление; будет повтор',
  authRejected: 'сервер (или прокси перед ним) отклонил учётные данные; проверьте имя пользователя и пароль',
  noApi: 'по этому адресу нет Apprise API с /notify',
  unreachable: (why) => `Apprise API недоступен: ${why}`,
  refused: (why) => `Apprise API отклонён: ${why}`,
  notified: (n) => `Apprise уведомил сервисов: ${n}`,
  cut: (n) => `обрезано символов: ${n}, чтобы уложиться в предел сообщения`,
};

/** The words in `locale` (English for any language without its own). */
export const words = (locale: Locale | string): Words => (locale === 'ru' ? RU : EN);

/** The line that opens a message updating an earlier one, in the target's language. */
export const updatePrefix = (locale: Locale | string, previousTitle: string): string =>
  words(locale).update(previousTitle);
