// What the UI sees of the engine, whichever door it runs through: the Backend interface and its
// sign-in. Its own module, so the transports (http.ts, wails.ts) implement it without importing
// index.ts, which imports them (no import circle); index.ts re-exports it.
import type { BackendEvent, BrowserInputEvent, ConnectionState } from './types';
import type { TableBackend } from './table';
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

/**
 * The Backend methods that are calls of the table: declared and documented once, on TableBackend
 * (table.ts), which both transports extend.
 */
type TableMethods = Omit<TableBackend, 'goals' | 'catalog' | 'chat' | 'recipes' | 'logins' | 'fleets' | 'extensions' | 'review' | 'inbox' | 'agentKeys'>;

export interface Backend extends TableMethods {
  kind: 'desktop' | 'web';
  auth?: Auth;
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
  /** Web: downloads a .json file; desktop: native save dialog (cancelling is not an error). */
  exportWorkspace(id: string): Promise<void>;

  // Terminals. A pane's shells keep running whoever watches them: a view attaches to see a tab's
  // output ('output' events, only for attached tabs) and detaches when it goes away.

  /** Resolves to the scrollback to write first; 'output' events for the tab follow it. */
  terminalAttach(paneId: string, tabId: string): Promise<Uint8Array>;
  terminalDetach(paneId: string, tabId: string): Promise<void>;
  /** Fire-and-forget, as typed (xterm's onData); sent in order. */
  terminalInput(paneId: string, tabId: string, data: string): void;
  terminalResize(paneId: string, tabId: string, cols: number, rows: number): void;

  // Browser panes. Each tab is a Chromium page that keeps running whoever looks at it; a view
  // watches the pane to receive 'frame' events of its active tab. Failures of the
  // fire-and-forget calls (watch, input) arrive as 'browser'/'error' events for the pane.

  /** Starts 'frame' events for the pane; kept across reconnects until browserUnwatch. */
  browserWatch(paneId: string): void;
  browserUnwatch(paneId: string): void;
  /** Fire-and-forget, sent in order. */
  browserInput(paneId: string, event: BrowserInputEvent): void;

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
