/**
 * What this target says to people, in English and Russian: the link label inside a message and
 * the sentences of the errors a delivery records (shown on the event and by the test endpoint).
 * Google's own error text is quoted as it came.
 */
import type { Locale } from '@herald/plugin-api';

interface Words {
  open: string;
  answered: (status: number, text: string) => string;
  credentialRejected: string;
  spaceGone: string;
  unreachable: (why: string) => string;
  refused: (why: string) => string;
  cut: (n: number) => string;
}

const EN: Words = {
  open: 'Open',
  answered: (status, text) => `Google Chat answered ${status}: ${text}`,
  credentialRejected:
    "the webhook's key or token was rejected (the webhook was deleted?); create a new webhook and replace the URL",
  spaceGone: 'the space does not exist or the webhook cannot post to it',
  unreachable: (why) => `Google Chat webhook unreachable: ${why}`,
  refused: (why) => `Google Chat webhook refused: ${why}`,
  cut: (n) => `cut ${n} characters to fit Google Chat's 4,096-character limit`,
};

const RU: Words = {
  open: 'Открыть',
  answered: (status, text) => `Google Chat ответил ${status}: ${text}`,
  credentialRejected: 'ключ или токен вебхука отклонены (вебхук удалён?); создайте новый вебхук и замените адрес',
  spaceGone: 'пространство не существует или вебхук не может в него писать',
  unreachable: (why) => `Вебхук Google Chat недоступен: ${why}`,
  refused: (why) => `Вебхук Google Chat отклонён: ${why}`,
  cut: (n) => `обрезано символов: ${n}, чтобы уложиться в предел Google Chat в 4096 символов`,
};

/** The words in `locale` (English for any language without its own). */
export const words = (locale: Locale | string): Words => (locale === 'ru' ? RU : EN);
