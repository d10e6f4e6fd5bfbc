/** The words this target puts into messages and errors, in the target's language (English and Russian). */
import type { Locale } from '@herald/plugin-api';

const ru = (l: Locale) => l === 'ru';

export const text = {
  /** The line that opens a message updating an earlier one. */
  updatePrefix: (l: Locale, title: string) => (ru(l) ? `Обновление к «${title}»:` : `Update to “${title}”:`),
  answered: (l: Locale, status: number, said: string) =>
    ru(l) ? `Pushover ответил ${status}: ${said}` : `Pushover answered ${status}: ${said}`,
  refusedMessage: (l: Locale, said: string) =>
    ru(l) ? `Pushover не принял сообщение: ${said}` : `Pushover did not accept the message: ${said}`,
  tokenRejected: (l: Locale) =>
    ru(l)
      ? 'токен приложения не принят; проверьте API-токен на странице приложения на pushover.net'
      : "the application token was rejected; check the API token on your application's page at pushover.net",
  userRejected: (l: Locale) =>
    ru(l)
      ? 'ключ пользователя не принят; проверьте ключ пользователя или группы на панели Pushover'
      : 'the user key was rejected; check the user or group key on your Pushover dashboard',
  monthlyLimit: (l: Locale) =>
    ru(l)
      ? 'месячный лимит сообщений приложения исчерпан, Herald отправит сообщение после его сброса'
      : "the application's monthly message limit is reached; Herald sends the message once it resets",
  unreachable: (l: Locale, why: string) =>
    ru(l) ? `не удалось связаться с API Pushover: ${why}` : `cannot reach the Pushover API: ${why}`,
  refused: (l: Locale, why: string) =>
    ru(l)
      ? `адрес API Pushover запрещён политикой исходящих соединений: ${why}`
      : `the Pushover API address is refused by the outbound policy: ${why}`,
  redirect: (l: Locale) =>
    ru(l)
      ? 'API Pushover ответил перенаправлением; Herald не следует перенаправлениям, проверьте адрес API'
      : 'the Pushover API answered with a redirect; Herald does not follow redirects, so check the API address',
  remaining: (l: Locale, n: string) =>
    ru(l)
      ? `Доставлено; у приложения осталось сообщений в этом месяце: ${n}.`
      : `Delivered; the application has ${n} messages left this month.`,
  badConfig: (l: Locale, fields: string) =>
    ru(l)
      ? `настройки цели неверны, проверьте поля: ${fields}`
      : `the target's configuration is invalid; check the fields: ${fields}`,
};
