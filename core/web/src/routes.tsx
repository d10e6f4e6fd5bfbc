/** Every page of the client, its nav group and who may see it. */
import type { FunctionComponent } from 'preact';
import { OverviewPage } from './pages/overview.tsx';
import { lazyPage } from './ui/lazy.tsx';

export interface Route {
  path: string;
  label: string;
  group: 'main' | 'relay' | 'assistant' | 'admin';
  admin?: boolean;
  nav?: boolean;
  page: FunctionComponent<{ params: Record<string, string> }>;
}

/** The chat pages carry the markdown renderer and sanitizer, the heaviest code: loaded on first visit. */
const ChatsPage = lazyPage(() => import('./pages/assistant/chats.tsx').then((m) => m.ChatsPage));
/** Scheduled actions: a page few visits need, loaded on first visit. */
const ActionsPage = lazyPage(() => import('./pages/relay/actions.tsx').then((m) => m.ActionsPage));

/**
 * Every page but the overview loads on its first visit (each its own chunk, shared code in common
 * chunks), so the first download is the shell, the overview and one language.
 */
const ProvidersPage = lazyPage(() => import('./pages/relay/providers.tsx').then((m) => m.ProvidersPage));
const TrackersPage = lazyPage(() => import('./pages/relay/trackers.tsx').then((m) => m.TrackersPage));
const TargetsPage = lazyPage(() => import('./pages/relay/targets.tsx').then((m) => m.TargetsPage));
const BotsPage = lazyPage(() => import('./pages/relay/bots.tsx').then((m) => m.BotsPage));
const EventsPage = lazyPage(() => import('./pages/relay/events.tsx').then((m) => m.EventsPage));
const DeferredPage = lazyPage(() => import('./pages/relay/deferred.tsx').then((m) => m.DeferredPage));
const TemplatesPage = lazyPage(() => import('./pages/relay/templates.tsx').then((m) => m.TemplatesPage));
const MonitoringPage = lazyPage(() => import('./pages/relay/monitoring.tsx').then((m) => m.MonitoringPage));
const BackupsPage = lazyPage(() => import('./pages/relay/backups.tsx').then((m) => m.BackupsPage));
const SkillsPage = lazyPage(() => import('./pages/assistant/skills.tsx').then((m) => m.SkillsPage));
const ContextPage = lazyPage(() => import('./pages/assistant/context.tsx').then((m) => m.ContextPage));
const MemoryPage = lazyPage(() => import('./pages/assistant/memory.tsx').then((m) => m.MemoryPage));
const DocumentsPage = lazyPage(() => import('./pages/assistant/documents.tsx').then((m) => m.DocumentsPage));
const ReportsPage = lazyPage(() => import('./pages/assistant/reports.tsx').then((m) => m.ReportsPage));
const UsersPage = lazyPage(() => import('./pages/admin/users.tsx').then((m) => m.UsersPage));
const GeneralSkillsPage = lazyPage(() => import('./pages/admin/general-skills.tsx').then((m) => m.GeneralSkillsPage));
const PrimaryContextPage = lazyPage(() =>
  import('./pages/admin/primary-context.tsx').then((m) => m.PrimaryContextPage),
);
const SettingsPage = lazyPage(() => import('./pages/admin/settings.tsx').then((m) => m.SettingsPage));
const UsagePage = lazyPage(() => import('./pages/admin/usage.tsx').then((m) => m.UsagePage));
const OutboundPage = lazyPage(() => import('./pages/admin/outbound.tsx').then((m) => m.OutboundPage));
const AccountPage = lazyPage(() => import('./pages/account.tsx').then((m) => m.AccountPage));

/** `label` is a locale key. Order is the nav order. */
export const ROUTES: Route[] = [
  { path: '/', label: 'nav.overview', group: 'main', page: OverviewPage },
  { path: '/chats', label: 'nav.chats', group: 'assistant', page: ChatsPage },
  { path: '/chats/:id', label: 'nav.chats', group: 'assistant', nav: false, page: ChatsPage },
  { path: '/skills', label: 'nav.skills', group: 'assistant', page: SkillsPage },
  { path: '/context', label: 'nav.context', group: 'assistant', page: ContextPage },
  { path: '/memory', label: 'nav.memory', group: 'assistant', page: MemoryPage },
  { path: '/documents', label: 'nav.documents', group: 'assistant', page: DocumentsPage },
  { path: '/reports', label: 'nav.reports', group: 'assistant', page: ReportsPage },
  { path: '/providers', label: 'nav.providers', group: 'relay', page: ProvidersPage },
  { path: '/trackers', label: 'nav.trackers', group: 'relay', page: TrackersPage },
  { path: '/targets', label: 'nav.targets', group: 'relay', page: TargetsPage },
  { path: '/bots', label: 'nav.bots', group: 'relay', page: BotsPage },
  { path: '/events', label: 'nav.events', group: 'relay', page: EventsPage },
  { path: '/deferred', label: 'nav.deferred', group: 'relay', page: DeferredPage },
  { path: '/actions', label: 'nav.actions', group: 'relay', page: ActionsPage },
  { path: '/templates', label: 'nav.templates', group: 'relay', page: TemplatesPage },
  { path: '/monitoring', label: 'nav.monitoring', group: 'relay', page: MonitoringPage },
  { path: '/backups', label: 'nav.backups', group: 'relay', admin: true, page: BackupsPage },
  { path: '/admin/users', label: 'nav.users', group: 'admin', admin: true, page: UsersPage },
  { path: '/admin/skills', label: 'nav.general_skills', group: 'admin', admin: true, page: GeneralSkillsPage },
  { path: '/admin/context', label: 'nav.primary_context', group: 'admin', admin: true, page: PrimaryContextPage },
  { path: '/admin/settings', label: 'nav.settings', group: 'admin', admin: true, page: SettingsPage },
  { path: '/admin/usage', label: 'nav.usage', group: 'admin', admin: true, page: UsagePage },
  { path: '/admin/outbound', label: 'nav.outbound', group: 'admin', admin: true, page: OutboundPage },
  { path: '/account', label: 'nav.account', group: 'main', nav: false, page: AccountPage },
];
