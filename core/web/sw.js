/*
 * Herald's service worker, served by the core at /sw.js (scope: the whole site). It shows the push
 * messages of the webpush target as notifications and, on a click, brings the web client to the
 * event: an open Herald tab is focused and sent there, else a new one opens.
 *
 * A message's data is the JSON `{ title, body, url, tag, severity, lang, renotify?, test? }`
 * (plugins/target-webpush/src/payload.ts). Links are followed on this site only.
 */
/* global self */

self.addEventListener('install', () => { self.skipWaiting(); });
self.addEventListener('activate', (event) => { event.waitUntil(self.clients.claim()); });

/** `url` resolved on this site; a link to another origin keeps only its path, query and fragment. */
function onThisSite(url) {
  const scope = self.registration.scope;
  let u;
  try { u = new URL(typeof url === 'string' && url ? url : scope, scope); } catch { u = new URL(scope); }
  if (u.origin !== self.location.origin) u = new URL(u.pathname + u.search + u.hash, scope);
  return u.href;
}

self.addEventListener('push', (event) => {
  let data = {};
  if (event.data) {
    try { data = event.data.json() || {}; } catch { data = { body: event.data.text() }; }
  }
  const str = (v) => (typeof v === 'string' ? v : '');
  const tag = str(data.tag);
  const options = {
    body: str(data.body),
    lang: str(data.lang),
    data: { url: onThisSite(data.url) },
    // Critical events stay on screen until dismissed.
    requireInteraction: data.severity === 'critical',
  };
  if (tag) {
    // A later message about the same thing replaces this notification; an update alerts again.
    options.tag = tag;
    options.renotify = Boolean(data.renotify);
  }
  event.waitUntil(self.registration.showNotification(str(data.title) || 'Herald', options));
});

self.addEventListener('notificationclick', (event) => {
  event.notification.close();
  const url = (event.notification.data && event.notification.data.url) || self.registration.scope;
  event.waitUntil((async () => {
    const tabs = await self.clients.matchAll({ type: 'window', includeUncontrolled: true });
    const tab = tabs.find((c) => new URL(c.url).origin === self.location.origin);
    if (tab) {
      const focused = await tab.focus();
      try {
        await (focused || tab).navigate(url);
        return;
      } catch {
        // A tab this worker does not control cannot be navigated: open the event beside it.
      }
    }
    await self.clients.openWindow(url);
  })());
});
