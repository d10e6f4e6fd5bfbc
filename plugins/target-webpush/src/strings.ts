/**
 * What a send says to the user (a delivery's error on the event, the test's answer), in the
 * target's language. `host` is the push service's host name: an endpoint URL is a capability and
 * never appears whole.
 */
import type { Locale } from '@herald/plugin-api';

export interface Strings {
  noFacility: string;
  noSubscription: string;
  allGone: string;
  delivered(sent: number, total: number): string;
  removed(n: number): string;
  cut(n: number): string;
  rateLimited(host: string): string;
  serverError(host: string, status: number): string;
  unreachable(host: string, reason: string): string;
  refused(host: string): string;
  vapidRefused(host: string, status: number): string;
  tooLarge(host: string): string;
  rejected(host: string, status: number, text: string): string;
  invalidSubscription(reason: string): string;
}

const en: Strings = {
  noFacility: 'This Herald does not keep browser subscriptions, so Web Push cannot be sent; update Herald.',
  noSubscription: 'No browser is subscribed; open the account page and choose Notify this browser.',
  allGone:
    'Every subscribed browser has unsubscribed (its push service answered 404 or 410), so they were removed; open ' +
    'the account page and choose Notify this browser again.',
  delivered: (sent, total) => `Delivered to ${sent} of ${total} subscribed browsers.`,
  removed: (n) => `Removed ${n} that had unsubscribed.`,
  cut: (n) => `Cut ${n} characters to fit the 4 KB push limit.`,
  rateLimited: (host) => `The push service ${host} asks us to slow down (429).`,
  serverError: (host, status) => `The push service ${host} answered ${status}; trying again later.`,
  unreachable: (host, reason) => `Cannot reach the push service ${host}: ${reason}`,
  refused: (host) => `The outbound address policy does not allow the push service ${host}.`,
  vapidRefused: (host, status) =>
    `The push service ${host} refused Herald's VAPID signature (${status}); the browser may have subscribed with ` +
    'another key: subscribe it again on the account page.',
  tooLarge: (host) => `The push service ${host} found the notification too large (413).`,
  rejected: (host, status, text) =>
    `The push service ${host} refused the notification (${status})${text ? `: ${text}` : ''}.`,
  invalidSubscription: (reason) => `A stored browser subscription cannot be used: ${reason}`,
};

const ru: Strings = {
  noFacility: 'Эта версия Herald не хранит подписки браузеров, поэтому Web Push отправить нельзя; обновите Herald.',
  noSubscription: 'Ни один браузер не подписан; откройте страницу учётной записи и выберите «Уведомлять этот браузер».',
  allGone:
    'Все подписанные браузеры отписались (служба push ответила 404 или 410), поэтому их подписки удалены; ' +
    'откройте страницу учётной записи и снова выберите «Уведомлять этот браузер».',
  delivered: (sent, total) => `Доставлено браузерам: ${sent} из ${total}.`,
  removed: (n) => `Удалено отписавшихся: ${n}.`,
  cut: (n) => `Сокращено на ${n} символов, чтобы уложиться в предел push-сообщения в 4 КБ.`,
  rateLimited: (host) => `Служба push ${host} просит отправлять реже (429).`,
  serverError: (host, status) => `Служба push ${host} ответила ${status}; попробуем позже.`,
  unreachable: (host, reason) => `Не удаётся связаться со службой push ${host}: ${reason}`,
  refused: (host) => `Политика исходящих адресов не разрешает службу push ${host}.`,
  vapidRefused: (host, status) =>
    `Служба push ${host} отклонила подпись VAPID сервиса Herald (${status}); возможно, браузер подписан с другим ` +
    'ключом: подпишите его заново на странице учётной записи.',
  tooLarge: (host) => `Служба push ${host} сочла уведомление слишком большим (413).`,
  rejected: (host, status, text) => `Служба push ${host} отклонила уведомление (${status})${text ? `: ${text}` : ''}.`,
  invalidSubscription: (reason) => `Сохранённую подписку браузера нельзя использовать: ${reason}`,
};

export const strings = (locale: Locale): Strings => (locale === 'ru' ? ru : en);
