/**
 * What this target says to people, in English and Russian: the words inside a card and the
 * sentences of the errors a delivery records (shown on the event and by the test endpoint).
 * The service's own error text is quoted as Teams sent it.
 */
import type { Locale } from '@herald/plugin-api';

interface Words {
  open: string;
  update: (title: string) => string;
  answered: (status: number, text: string) => string;
  signatureRejected: string;
  workflowGone: string;
  unreachable: (why: string) => string;
  refused: (why: string) => string;
  cut: (n: number) => string;
}

const EN: Words = {
  open: 'Open',
  update: (title) => `Update to “${title}”:`,
  answered: (status, text) => `Teams answered ${status}: ${text}`,
  signatureRejected: "the webhook URL or its signature was rejected; copy the workflow's URL again",
  workflowGone: 'the workflow or its trigger does not exist (deleted, or turned off?)',
  unreachable: (why) => `Teams webhook unreachable: ${why}`,
  refused: (why) => `Teams webhook refused: ${why}`,
  cut: (n) => `cut ${n} characters to fit the Teams message limit`,
};

const RU: Words = {
  open: 'Открыть',
  update: (title) => `Обновление к «${title}»:`,
  answered: (status, text) => `Teams ответил ${status}: ${text}`,
  signatureRejected: 'адрес вебхука или его подпись отклонены; скопируйте адрес рабочего процесса заново',
  workflowGone: 'рабочий процесс или его триггер не существует (удалён или выключен?)',
  unreachable: (why) => `Вебхук Teams недоступен: ${why}`,
  refused: (why) => `Вебхук Teams отклонён: ${why}`,
  cut: (n) => `обрезано символов: ${n}, чтобы уложиться в предел сообщения Teams`,
};

/** The words in `locale` (English for any language without its own). */
export const words = (locale: Locale | string): Words => (locale === 'ru' ? RU : EN);

/** The line that opens a message updating an earlier one, in the target's language. */
export const updatePrefix = (locale: Locale | string, previousTitle: string): string =>
  words(locale).update(previousTitle);
