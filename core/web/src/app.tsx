/** The app: boot, the auth gate, and the sidebar layout around the current page. */
import { useEffect, useRef, useState } from 'preact/hooks';
import { onLocale, t } from './lib/i18n.ts';
import { connectLive } from './lib/live.ts';
import { match, navigate, useLocation } from './lib/router.ts';
import { boot, loginTarget, logout, useSession } from './lib/session.ts';
import type { User } from './lib/types.ts';
import { LoginPage, SetupPage } from './pages/auth/auth-pages.tsx';
import { ROUTES, type Route } from './routes.tsx';
import { Button, Empty, Loading } from './ui/basics.tsx';
import { Icon } from './ui/icons.tsx';
import { LanguageSwitch } from './ui/language.tsx';
import { Toasts } from './ui/toast.tsx';

export function App() {
  const [, rerender] = useState(0);
  useEffect(() => onLocale(() => rerender((n) => n + 1)), []);
  useEffect(() => {
    void boot();
  }, []);
  const session = useSession();
  const loc = useLocation();
  useEffect(() => {
    // Logged out anywhere but the login form: go there, remembering the page to come back to.
    if (session.state === 'anonymous' && loc.path !== '/login') navigate(loginTarget(), true);
    // Logged in on the login form (a login just made, or an old tab): on to the page it was opened for.
    if (session.state === 'user' && loc.path === '/login') {
      const next = loc.query.get('next');
      navigate(next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/login') ? next : '/', true);
    }
  }, [session.state, loc.path]);

  let body;
  if (session.state === 'loading')
    body = (
      <main class="auth">
        <Loading />
      </main>
    );
  else if (session.state === 'offline')
    body = (
      <main class="auth">
        <div class="card auth-card">
          <p>{t('errors.offline')}</p>
          <Button onClick={() => location.reload()}>{t('common.retry')}</Button>
        </div>
      </main>
    );
  else if (session.state === 'setup') body = <SetupPage />;
  else if (!session.user) body = <LoginPage />;
  else body = <Shell user={session.user} path={loc.path === '/login' ? '/' : loc.path} />;
  return (
    <>
      {body}
      <Toasts />
    </>
  );
}

function resolve(path: string, user: User): { route: Route; params: Record<string, string> } | null {
  for (const route of ROUTES) {
    const params = match(route.path, path);
    if (params && (!route.admin || user.role === 'admin')) return { route, params };
  }
  return null;
}

const GROUPS = ['main', 'assistant', 'relay', 'admin'] as const;

function Shell({ user, path }: { user: User; path: string }) {
  const [open, setOpen] = useState(false);
  const main = useRef<HTMLElement>(null);
  const found = resolve(path, user);
  useEffect(() => {
    setOpen(false);
    // Move focus to the new page's heading so keyboard and screen-reader users land on it
    // (unless the change came from inside the page, where focus already is).
    const h = main.current?.querySelector<HTMLElement>('#page-title');
    if (h && !main.current?.contains(document.activeElement)) h.focus({ preventScroll: true });
  }, [path]);
  // One live connection per tab while signed in: pages refetch on its hints instead of polling.
  useEffect(() => connectLive(), [user.id]);
  const Page = found?.route.page;
  const active = (r: Route) => (r.path === '/' ? path === '/' : path === r.path || path.startsWith(`${r.path}/`));
  return (
    <div class={`layout${open ? ' nav-open' : ''}`}>
      <a
        class="skip"
        href="#main"
        onClick={(e) => {
          e.preventDefault();
          main.current?.focus();
        }}
      >
        {t('nav.skip')}
      </a>
      <header class="topbar">
        <button
          type="button"
          class="icon-btn"
          aria-controls="sidebar"
          aria-expanded={open}
          aria-label={t('nav.menu')}
          onClick={() => setOpen(!open)}
        >
          <Icon name={open ? 'close' : 'menu'} />
        </button>
        <span class="brand">
          <Icon name="logo" />
          {t('app.name')}
        </span>
      </header>
      <nav id="sidebar" class="sidebar" aria-label={t('nav.main')}>
        <div class="brand">
          <Icon name="logo" size={22} />
          <span>{t('app.name')}</span>
        </div>
        <div class="nav-groups">
          {GROUPS.map((g) => {
            const items = ROUTES.filter((r) => r.group === g && r.nav !== false && (!r.admin || user.role === 'admin'));
            if (!items.length) return null;
            return (
              <div class="nav-group" key={g}>
                {g !== 'main' && <div class="nav-title">{t(`nav.group_${g}`)}</div>}
                {items.map((r) => (
                  <a
                    key={r.path}
                    href={`#${r.path}`}
                    class={active(r) ? 'active' : ''}
                    aria-current={active(r) ? 'page' : undefined}
                  >
                    {t(r.label)}
                  </a>
                ))}
              </div>
            );
          })}
        </div>
        <div class="sidebar-foot">
          <a class="who" href="#/account" title={t('nav.account')} data-testid="account-link">
            <span class="avatar" aria-hidden="true">
              {user.email.slice(0, 1).toUpperCase()}
            </span>
            <span class="who-mail">{user.email}</span>
          </a>
          <div class="row">
            <LanguageSwitch />
            <Button small variant="ghost" onClick={() => void logout()}>
              {t('auth.logout')}
            </Button>
          </div>
        </div>
      </nav>
      <div class="scrim" onClick={() => setOpen(false)} aria-hidden="true" />
      <main id="main" class="main" ref={main} tabIndex={-1}>
        {Page ? <Page key={found!.route.label} params={found!.params} /> : <Empty>{t('errors.not_found_page')}</Empty>}
      </main>
    </div>
  );
}
