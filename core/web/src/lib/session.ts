/**
 * Who is logged in. Boot asks `GET /api/setup` (first run) and `GET /api/v1/users/me`; any 401
 * afterwards clears the user and sends the page to the login form, remembering where it was.
 */
import { useEffect, useState } from 'preact/hooks';
import { ApiError, get, post, setToken, setUnauthorizedHandler } from './api.ts';
import { LOCALES, type Locale, locale, setLocale } from './i18n.ts';
import { current, navigate } from './router.ts';
import type { User } from './types.ts';

export type SessionState = 'loading' | 'setup' | 'anonymous' | 'user' | 'offline';
interface Session {
  state: SessionState;
  user: User | null;
}

let session: Session = { state: 'loading', user: null };
const listeners = new Set<(s: Session) => void>();

function set(next: Session): void {
  session = next;
  listeners.forEach((fn) => fn(session));
}

/**
 * The account's saved language wins over the browser's (also on a fresh browser): applied when a
 * session starts or is found at boot. The switch keeps the account in step afterwards.
 */
async function followAccountLocale(user: User): Promise<void> {
  const l = user.locale as Locale;
  if (LOCALES.includes(l) && l !== locale()) await setLocale(l).catch(() => {});
}

export const sessionNow = (): Session => session;

export function useSession(): Session {
  const [s, setS] = useState(session);
  useEffect(() => {
    listeners.add(setS);
    setS(session);
    return () => {
      listeners.delete(setS);
    };
  }, []);
  return s;
}

/** The login route with a `next` pointing back at the current page (not at login itself). */
export function loginTarget(): string {
  const here = current();
  if (here.path === '/login' || here.path === '/setup') return here.full;
  return here.full === '/' ? '/login' : `/login?next=${encodeURIComponent(here.full)}`;
}

setUnauthorizedHandler(() => {
  if (session.state !== 'user') return;
  setToken(null);
  set({ state: 'anonymous', user: null });
  navigate(loginTarget(), true);
});

export async function boot(): Promise<void> {
  try {
    const { needs_setup } = await get<{ needs_setup: boolean }>('/api/setup');
    if (needs_setup) {
      set({ state: 'setup', user: null });
      return;
    }
    const user = await get<User>('/api/v1/users/me');
    await followAccountLocale(user);
    set({ state: 'user', user });
  } catch (err) {
    if (err instanceof ApiError && err.status === 401) {
      set({ state: 'anonymous', user: null });
      navigate(loginTarget(), true);
      return;
    }
    set({ state: 'offline', user: null });
  }
}

/** Stores a fresh login (from setup or the login form). */
export async function loggedIn(res: { access_token: string; user: User }): Promise<void> {
  setToken(res.access_token);
  await followAccountLocale(res.user);
  set({ state: 'user', user: res.user });
}

export function updateUser(user: User): void {
  if (session.user?.id === user.id) set({ state: 'user', user });
}

export async function logout(): Promise<void> {
  try {
    await post('/api/auth/logout');
  } finally {
    setToken(null);
    set({ state: 'anonymous', user: null });
    navigate('/login');
  }
}
