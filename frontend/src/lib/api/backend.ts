// What the UI sees of the engine, whichever door it runs through: the Backend interface and its
// sign-in. Its own module, so the transports (http.ts, wails.ts) implement it without importing
// index.ts, which imports them (no import circle); index.ts re-exports it.
import type {
  BackendEvent,
  BrowserInputEvent,
  BrowserPromptAnswer,
  BrowserTab,
  ConnectionState,
  ConvertRequest,
  Discovered,
  LaunchTemplate,
  PageInfo,
  PaneLaunch,
  PanePatch,
  PriceTable,
  Provider,
  ProviderInput,
  ProviderList,
  RemoteSession,
  SSHServer,
  SSHServerInput,
  TabInfo,
  TestResult,
  Workspace,
  WorkspaceList,
} from './types';
import type { CatalogApi } from './catalog';
import type { ChatApi } from './chat';
import type { FleetsApi } from './fleets';
import type { ExtensionsApi } from './extensions';
import type { GoalsApi } from './goals';
import type { LoginsApi } from './logins';
import type { RecipesApi } from './recipes';
import type { InboxApi } from './inbox';
import type { AgentKeysApi } from './agentKeys';
import type { ReviewApi } from './review';

/**
 * Sign-in for transports that need it (web only). The desktop has no login, so its Backend has
 * no `auth`.
 */
export interface Auth {
  /** True while tokens are held; they may still turn out to be expired on the next call. */
  signedIn(): boolean;
  /**
   * Rejects with a BackendError carrying the backend's message (and retryAfter when locked out).
   * `unlock` is the one-time code the server writes to its log when a lockout begins: with it
   * the owner gets past a lockout someone else caused.
   */
  login(password: string, unlock?: string): Promise<void>;
  logout(): void;
  /** Called whenever signedIn() changes, e.g. when a refresh fails and tokens are dropped. */
  onChange(handler: (signedIn: boolean) => void): () => void;
}

export interface Backend {
  kind: 'desktop' | 'web';
  auth?: Auth;
  version(): Promise<string>;
  /** The desktop hands the startup marks (lib/startup) to Go, which logs them; web has nothing to do. */
  reportStartup?(marks: Record<string, number>): void;
  /** The desktop logs the window's uncaught errors through Go (its webview console goes nowhere). */
  reportProblem?(message: string): void;
  /** Desktop: true when the machine has no GPU, so WebGL would be drawn in software. */
  softwareGraphics?(): Promise<boolean>;
  /** Desktop, for `make bench`: how many keys the echo probe should time (0: no probe). */
  echoProbeKeys?(): Promise<number>;
  /** Desktop, for `make bench`: the echo probe's samples, which Go logs. */
  reportEcho?(samplesMs: number[]): void;
  listWorkspaces(): Promise<WorkspaceList>;
  /** name '' lets the backend pick "Workspace N". */
  createWorkspace(name: string): Promise<Workspace>;
  renameWorkspace(id: string, name: string): Promise<Workspace>;
  /** The backend refuses deleting the last workspace. */
  /** Ends what the workspace's panes hold; busy ones reject (BackendError.busy) unless force. */
  deleteWorkspace(id: string, force?: boolean): Promise<void>;
  activateWorkspace(id: string): Promise<void>;
  /** Ends what removed panes hold; busy ones reject (BackendError.busy) unless force. */
  setGrid(id: string, rows: number, cols: number, force?: boolean): Promise<Workspace>;
  setWeights(id: string, rowWeights: number[], colWeights: number[]): Promise<Workspace>;
  swapPanes(id: string, paneA: string, paneB: string): Promise<Workspace>;
  updatePane(id: string, paneId: string, patch: PanePatch): Promise<Workspace>;
  /** Web: downloads a .json file; desktop: native save dialog (cancelling is not an error). */
  exportWorkspace(id: string): Promise<void>;
  importWorkspace(json: string): Promise<Workspace>;
  /** A workspace with a rows×cols grid (1–6 each), made active. */
  createWorkspaceGrid(name: string, rows: number, cols: number): Promise<Workspace>;

  // Panes as the agent steers them too: the backend holds focus, maximize and launch settings,
  // and an attached UI follows its "workspaces" events.

  /** Gives the pane its workspace's focus, so the agent knows where the person is. */
  focusPane(id: string, paneId: string): Promise<Workspace>;
  /** Shows the pane alone, filling the grid, or the whole grid again (a toggle). */
  toggleMaximizePane(id: string, paneId: string): Promise<Workspace>;
  /** What a terminal pane runs (null: the person's shell); the pane's terminal restarts with it. */
  /** A pane whose terminal runs a command is refused (field "force", its busy list) unless force. */
  setPaneLaunch(id: string, paneId: string, launch: PaneLaunch | null, force?: boolean): Promise<Workspace>;
  /**
   * Turns the pane into the other kind. While a process runs in it and `force` is not set, it
   * rejects with a BackendError of field "force" whose `busy` lists what runs (when the transport
   * can say); a goal working in the pane refuses with field "paneId", force or not.
   */
  convertPane(id: string, paneId: string, req: ConvertRequest): Promise<Workspace>;
  /** The built-in launch templates, in menu order, with whether each command is installed. */
  launchTemplates(): Promise<LaunchTemplate[]>;

  /** Every provider (keys masked), the defaults, and where keys are kept. */
  listProviders(): Promise<ProviderList>;
  /**
   * id '' creates. input.apiKey absent keeps the stored key, '' removes it, a value replaces it.
   * Bad input rejects with a BackendError whose `field` names the input field.
   */
  saveProvider(id: string, input: ProviderInput): Promise<Provider>;
  deleteProvider(id: string): Promise<void>;
  /** '' = none. */
  setDefaultProviders(defaultId: string, criticDefaultId: string): Promise<ProviderList>;
  /** May take several seconds: it calls the model server. */
  testProvider(id: string): Promise<TestResult>;
  /**
   * Tests the add or edit form's values before they are saved (id: the provider being edited,
   * '' when adding; its stored key is used when the input leaves the key unchanged).
   */
  testUnsavedProvider(id: string, input: ProviderInput): Promise<TestResult>;
  /** host '' = this machine. */
  discoverProviders(host: string): Promise<Discovered[]>;
  prices(): Promise<PriceTable>;
  /** Replaces the whole table. */
  setPrices(prices: PriceTable): Promise<void>;

  // Terminals. A pane's shells keep running whoever watches them: a view attaches to see a tab's
  // output ('output' events, only for attached tabs) and detaches when it goes away.

  /** Starts the pane's first shell if it has none; resolves to all its tabs. */
  terminalOpen(paneId: string, cols: number, rows: number): Promise<TabInfo[]>;
  terminalNewTab(paneId: string, cols: number, rows: number): Promise<TabInfo>;
  terminalTabs(paneId: string): Promise<TabInfo[]>;
  /** Resolves to the scrollback to write first; 'output' events for the tab follow it. */
  terminalAttach(paneId: string, tabId: string): Promise<Uint8Array>;
  terminalDetach(paneId: string, tabId: string): Promise<void>;
  /** Fire-and-forget, as typed (xterm's onData); sent in order. */
  terminalInput(paneId: string, tabId: string, data: string): void;
  terminalResize(paneId: string, tabId: string, cols: number, rows: number): void;
  terminalRestart(paneId: string, tabId: string): Promise<void>;
  terminalCloseTab(paneId: string, tabId: string): Promise<void>;
  terminalActivate(paneId: string, tabId: string): Promise<void>;
  /** Whether what is typed in any included pane of the workspace goes to this one too. */
  terminalSetBroadcast(paneId: string, include: boolean): Promise<void>;

  // Browser panes. Each tab is a Chromium page that keeps running whoever looks at it; a view
  // watches the pane to receive 'frame' events of its active tab. Failures of the
  // fire-and-forget calls (watch, input) arrive as 'browser'/'error' events for the pane.

  /** Opens a tab (at url; '' = blank) if the pane has none, sets the viewport; resolves to all its tabs. */
  browserOpen(paneId: string, url: string, width: number, height: number): Promise<BrowserTab[]>;
  browserTabs(paneId: string): Promise<BrowserTab[]>;
  /** The new tab becomes the pane's active one. */
  browserNewTab(paneId: string, url: string): Promise<BrowserTab>;
  browserCloseTab(paneId: string, tabId: string): Promise<void>;
  browserActivate(paneId: string, tabId: string): Promise<BrowserTab>;
  /** Waits for the page to load (the backend gives up waiting after 30 s, not failing). */
  browserNavigate(paneId: string, url: string): Promise<PageInfo>;
  browserBack(paneId: string): Promise<PageInfo>;
  browserForward(paneId: string): Promise<PageInfo>;
  browserReload(paneId: string): Promise<PageInfo>;
  /** The pages' size in CSS pixels (every tab of the pane). */
  browserViewport(paneId: string, width: number, height: number): Promise<void>;
  /** Recreates the active tab (after a crash) at its last URL. */
  browserReconnect(paneId: string): Promise<BrowserTab>;
  /** Starts 'frame' events for the pane; kept across reconnects until browserUnwatch. */
  browserWatch(paneId: string): void;
  browserUnwatch(paneId: string): void;
  /** Fire-and-forget, sent in order. */
  browserInput(paneId: string, event: BrowserInputEvent): void;
  /** Answers the question the active tab's page asks (its `prompt`). */
  browserAnswerPrompt(paneId: string, answer: BrowserPromptAnswer): Promise<void>;

  // SSH servers. Passwords travel from the form to the backend and never back.

  listSSHServers(): Promise<SSHServer[]>;
  /**
   * id '' creates. input.password absent keeps the stored one, '' removes it, a value replaces
   * it. Bad input rejects with a BackendError whose `field` names the input field.
   */
  saveSSHServer(id: string, input: SSHServerInput): Promise<SSHServer>;
  deleteSSHServer(id: string): Promise<void>;
  /** A new tab in the pane, connected to the server inside the pane's tmux session there. */
  terminalOpenSSH(paneId: string, serverId: string, cols: number, rows: number): Promise<TabInfo>;
  /** One-shot ssh: rejects with ssh's own error text when the server cannot be reached. */
  remoteSessions(serverId: string): Promise<RemoteSession[]>;
  killRemoteSession(serverId: string, name: string): Promise<void>;

  /** The Goal Runner: goals, their steps and events, approvals, the tool registry. */
  goals: GoalsApi;
  /** Personas, skills, task and pane templates from the config dir, and its problems. */
  catalog: CatalogApi;
  /** The chat panel: one conversation per workspace, actor–critic mode. */
  chat: ChatApi;
  /** Browser recipes: listed, run and deleted from a browser pane's menu. */
  recipes: RecipesApi;
  /** Saved logins (Settings → Logins); passwords only through reveal. */
  logins: LoginsApi;
  /** Fleets: many goals as one job, with dependencies; the Fleet Dashboard and Composer. */
  fleets: FleetsApi;
  /** The config dir's tool plugins and MCP servers (Settings → Plugins, Settings → MCP). */
  extensions: ExtensionsApi;
  /** A task's or goal's branch as a diff, review comments sent back to its agent, landing. */
  review: ReviewApi;
  /** What waits for the person across workspaces, most urgent first (absent: no inbox). */
  inbox?: InboxApi;
  /** Which provider's key each agent template's panes use (absent: not offered). */
  agentKeys?: AgentKeysApi;

  /**
   * Desktop only: tells the Go side whether the window has the focus. There the Go side shows
   * goal notifications through the desktop's notification service (the webview has none), and
   * only while the window does not have the focus. Absent under `serve`.
   */
  windowFocused?(focused: boolean): Promise<void>;

  /** Returns the unsubscribe function. */
  subscribe(handler: (e: BackendEvent) => void): () => void;
  onConnectionChange?(handler: (s: ConnectionState) => void): () => void;
}
