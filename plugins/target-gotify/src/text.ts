/** The words this target puts into messages and errors, in the target's language (English and Russian). */
import type { Locale } from '@herald/plugin-api';

const ru = (l: Locale) => l === 'ru';

export const text = {
  /** The line that opens a message updating an earlier one. */
  updatePrefix: (l: Locale, title: string) => (ru(l) ? `Обновление к «${title}»:` : `Update to “${title}”:`),
  answered: (l: Locale, status: number, said: string) =>
    ru(l) ? `Gotify ответил ${status}: ${said}` : `Gotify answered ${status}: ${said}`,
  tokenRejected: (l: Locale) =>
    ru(l)
      ? 'токен приложения не принят; создайте приложение в Gotify (Apps) и вставьте его токен'
      : 'the application token was rejected; create an application in Gotify (Apps) and paste its token',
  notFound: (l: Locale) =>
    ru(l)
      ? 'по этому адресу нет API Gotify; проверьте адрес сервера (и путь, если Gotify стоит за прокси)'
      : 'there is no Gotify API at this address; check the server address (and its path when Gotify is behind a proxy)',
  slowDown: (l: Locale) => (ru(l) ? 'сервер просит отправлять реже' : 'the server asks to slow down'),
  unreachable: (l: Locale, why: string) =>
    ru(l) ? `не удалось связаться с сервером Gotify: ${why}` : `cannot reach the Gotify server: ${why}`,
  refused: (l: Locale, why: string) =>
    ru(l)
      ? `адрес сервера Gotify запрещён политикой исходящих соединений: ${why}`
      : `the Gotify server address is refused by the outbound policy: ${why}`,
  redirect: (l: Locale) =>
    ru(l)
      ? 'сервер Gotify ответил перенаправлением; Herald не следует перенаправлениям, укажите окончательный адрес ' +
        'сервера (например, https:// вместо http://)'
      : 'the Gotify server answered with a redirect; Herald does not follow redirects, so give the final server ' +
        'address (e.g. https:// instead of http://)',
  badConfig: (l: Locale, fields: string) =>
    ru(l)
      ? `настройки цели неверны, проверьте поля: ${fields}`
      : `the target's configuration is invalid; check the fields: ${fields}`,
};
