import { getContext, setContext } from 'svelte';
import { InboxStore } from '../../features/inbox/inbox.svelte';
import type { Backend } from '../api';
import { BrowserStore } from './browsers.svelte';
import { CatalogStore } from './catalog.svelte';
import { ChatStore } from './chat.svelte';
import { Dialogs } from './dialogs.svelte';
import { ExtensionsStore } from './extensions.svelte';
import { inboxNotifierFor, notifierFor } from './desktopNotify';
import { FleetStore } from './fleets.svelte';
import { GoalStore } from './goals.svelte';
import { LoginStore } from './logins.svelte';
import { Notices } from './notices.svelte';
import { PaneStore } from './panes.svelte';
import { ProviderStore } from './providers.svelte';
import { RecipeStore } from './recipes.svelte';
import { Session } from './session.svelte';
import { SSHStore } from './ssh.svelte';
import { TerminalPrefs } from './terminalPrefs.svelte';
import { ThemePrefs } from './theme.svelte';
import { TerminalStore } from './terminals.svelte';
import { UiState } from './ui.svelte';
import { WorkspaceStore } from './workspaces.svelte';

/** Everything the components share, made once per app and handed down through Svelte context. */
export interface AppContext {
  session: Session;
  workspaces: WorkspaceStore;
  /** Focus, maximize, convert and launch of panes: the state the agent steers too. */
  panes: PaneStore;
  providers: ProviderStore;
  terminals: TerminalStore;
  browsers: BrowserStore;
  ssh: SSHStore;
  goals: GoalStore;
  /** Fleets, and the Fleet Dashboard's own state (open, Composer, chosen fleet). */
  fleets: FleetStore;
  chat: ChatStore;
  /** Browser recipes (the browser pane's menu) and saved logins (Settings → Logins). */
  recipes: RecipeStore;
  logins: LoginStore;
  /** Personas, skills, task and pane templates (loaded when first needed). */
  catalog: CatalogStore;
  /** The config dir's tool plugins and MCP servers (Settings → Plugins, → MCP). */
  extensions: ExtensionsStore;
  terminalPrefs: TerminalPrefs;
  theme: ThemePrefs;
  notices: Notices;
  dialogs: Dialogs;
  ui: UiState;
  /** What waits for the person across workspaces, and the Inbox panel. */
  inbox: InboxStore;
}

const KEY = Symbol('clusterspace.app');

export function createAppContext(backend: Backend): AppContext {
  const notices = new Notices();
  const dialogs = new Dialogs();
  const workspaces = new WorkspaceStore(backend, notices.report, (title, busy) =>
    dialogs.confirm({
      title,
      message: 'Still at work in the panes this removes (their shells and pages end with them):',
      items: busy.map((p) => `${p.label}: ${p.busy.join(', ')}`),
      confirmLabel: 'End it and remove',
    }),
  );
  return {
    session: new Session(backend),
    workspaces,
    panes: new PaneStore(backend, workspaces, dialogs, notices.report),
    providers: new ProviderStore(backend),
    terminals: new TerminalStore(backend, notices.report),
    browsers: new BrowserStore(backend),
    ssh: new SSHStore(backend),
    goals: new GoalStore(backend, notices.report, notifierFor(backend)),
    fleets: new FleetStore(backend),
    chat: new ChatStore(backend, notices.report),
    recipes: new RecipeStore(backend),
    logins: new LoginStore(backend),
    catalog: new CatalogStore(backend),
    extensions: new ExtensionsStore(backend),
    terminalPrefs: new TerminalPrefs(),
    theme: new ThemePrefs(),
    notices,
    dialogs,
    ui: new UiState(),
    inbox: new InboxStore(backend, inboxNotifierFor(backend)),
  };
}

export function setAppContext(ctx: AppContext): AppContext {
  return setContext(KEY, ctx);
}

export function getAppContext(): AppContext {
  const ctx = getContext<AppContext | undefined>(KEY);
  if (!ctx) throw new Error('getAppContext called outside <App>: the app context is missing');
  return ctx;
}
