/** The words this target puts into messages and errors, in the target's language (English and Russian). */
import type { Locale } from '@herald/plugin-api';

const ru = (l: Locale) => l === 'ru';

export const text = {
  /** The line that opens a plain-text body updating an earlier message (default body only). */
  updatePrefix: (l: Locale, title: string) => (ru(l) ? `Обновление к «${title}»:` : `Update to “${title}”:`),
  answered: (l: Locale, status: number, said: string) =>
    ru(l) ? `адрес ответил ${status}: ${said}` : `the endpoint answered ${status}: ${said}`,
  delivered: (l: Locale, status: number) =>
    ru(l) ? `Доставлено, адрес ответил ${status}.` : `Delivered; the endpoint answered ${status}.`,
  authHint: (l: Locale) =>
    ru(l) ? 'проверьте заголовки с учётными данными' : 'check the headers carrying the credentials',
  slowDown: (l: Locale) => (ru(l) ? 'адрес просит отправлять реже' : 'the endpoint asks to slow down'),
  unreachable: (l: Locale, why: string) =>
    ru(l) ? `не удалось связаться с адресом: ${why}` : `cannot reach the endpoint: ${why}`,
  refused: (l: Locale, why: string) =>
    ru(l)
      ? `адрес запрещён политикой исходящих соединений: ${why}`
      : `the address is refused by the outbound policy: ${why}`,
  redirect: (l: Locale) =>
    ru(l)
      ? 'адрес ответил перенаправлением; Herald не следует перенаправлениям, укажите окончательный адрес'
      : 'the endpoint answered with a redirect; Herald does not follow redirects, so give the final address',
  tooLarge: (l: Locale, max: number) =>
    ru(l) ? `шаблон тела дал больше ${max} символов` : `the body template produced more than ${max} characters`,
  badConfig: (l: Locale, fields: string) =>
    ru(l)
      ? `настройки цели неверны, проверьте поля: ${fields}`
      : `the target's configuration is invalid; check the fields: ${fields}`,
};
