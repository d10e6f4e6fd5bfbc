/** Every page of the client, its nav group and who may see it. */
import type { FunctionComponent } from 'preact';
import { OverviewPage } from './pages/overview.tsx';
import { ProvidersPage } from './pages/relay/providers.tsx';
import { TrackersPage } from './pages/relay/trackers.tsx';
import { TargetsPage } from './pages/relay/targets.tsx';
import { BotsPage } from './pages/relay/bots.tsx';
import { EventsPage } from './pages/relay/events.tsx';
import { DeferredPage } from './pages/relay/deferred.tsx';
import { TemplatesPage } from './pages/relay/templates.tsx';
import { MonitoringPage } from './pages/relay/monitoring.tsx';
import { BackupsPage } from './pages/relay/backups.tsx';
import { lazyPage } from './ui/lazy.tsx';
import { SkillsPage } from './pages/assistant/skills.tsx';
import { ContextPage } from './pages/assistant/context.tsx';
import { MemoryPage } from './pages/assistant/memory.tsx';
import { DocumentsPage } from './pages/assistant/documents.tsx';
import { ReportsPage } from './pages/assistant/reports.tsx';
import { UsersPage } from './pages/admin/users.tsx';
import { GeneralSkillsPage } from './pages/admin/general-skills.tsx';
import { PrimaryContextPage } from './pages/admin/primary-context.tsx';
import { SettingsPage } from './pages/admin/settings.tsx';
import { UsagePage } from './pages/admin/usage.tsx';
import { AccountPage } from './pages/account.tsx';

export interface Route { path: string; label: string; group: 'main' | 'relay' | 'assistant' | 'admin'; admin?: boolean; nav?: boolean; page: FunctionComponent<{ params: Record<string, string> }> }

/** The chat pages carry the markdown renderer and sanitizer, the heaviest code: loaded on first visit. */
const ChatsPage = lazyPage(() => import('./pages/assistant/chats.tsx').then((m) => m.ChatsPage));
/** Scheduled actions: a page few visits need, loaded on first visit. */
const ActionsPage = lazyPage(() => import('./pages/relay/actions.tsx').then((m) => m.ActionsPage));

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
  { path: '/account', label: 'nav.account', group: 'main', nav: false, page: AccountPage },
];
