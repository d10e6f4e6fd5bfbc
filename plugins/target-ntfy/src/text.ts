/** The words this target puts into messages and errors, in the target's language (English and Russian). */
import type { Locale } from '@herald/plugin-api';

const ru = (l: Locale) => l === 'ru';

export const text = {
  /** The line that opens a message updating an earlier one. */
  updatePrefix: (l: Locale, title: string) => (ru(l) ? `Обновление к «${title}»:` : `Update to “${title}”:`),
  /** The marker ending each piece of a message split to fit ntfy's 4,096 bytes. */
  part: (l: Locale, k: number, n: number) => (ru(l) ? `(часть ${k} из ${n})` : `(part ${k} of ${n})`),
  /** The delivery's detail for a message the plugin sent in pieces. */
  pieces: (l: Locale, n: number, max: number) =>
    ru(l)
      ? `Доставлено ${n} сообщениями ntfy, каждое не больше ${max} байт.`
      : `Delivered as ${n} ntfy messages of at most ${max} bytes each.`,
  answered: (l: Locale, status: number, said: string) =>
    ru(l) ? `ntfy ответил ${status}: ${said}` : `ntfy answered ${status}: ${said}`,
  authRejected: (l: Locale) =>
    ru(l)
      ? 'сервер не принял учётные данные или не разрешает публиковать в этот топик; проверьте токен доступа или имя ' +
        'пользователя и пароль'
      : 'the server rejected the credentials or does not allow publishing to this topic; check the access token or ' +
        'the user name and password',
  quota: (l: Locale) =>
    ru(l)
      ? 'дневная квота сообщений исчерпана, Herald отправит сообщение после её сброса в 00:00 UTC'
      : 'the daily message quota is used up; Herald sends the message once it resets at 00:00 UTC',
  slowDown: (l: Locale) => (ru(l) ? 'сервер просит отправлять реже' : 'the server asks to slow down'),
  tooLarge: (l: Locale) =>
    ru(l) ? 'сообщение длиннее, чем принимает сервер' : 'the message is longer than the server accepts',
  unreachable: (l: Locale, why: string) =>
    ru(l) ? `не удалось связаться с сервером ntfy: ${why}` : `cannot reach the ntfy server: ${why}`,
  refused: (l: Locale, why: string) =>
    ru(l)
      ? `адрес сервера ntfy запрещён политикой исходящих соединений: ${why}`
      : `the ntfy server address is refused by the outbound policy: ${why}`,
  redirect: (l: Locale) =>
    ru(l)
      ? 'сервер ntfy ответил перенаправлением; Herald не следует перенаправлениям, укажите окончательный адрес ' +
        'сервера (например, https:// вместо http://)'
      : 'the ntfy server answered with a redirect; Herald does not follow redirects, so give the final server ' +
        'address (e.g. https:// instead of http://)',
  badConfig: (l: Locale, fields: string) =>
    ru(l)
      ? `настройки цели неверны, проверьте поля: ${fields}`
      : `the target's configuration is invalid; check the fields: ${fields}`,
};
