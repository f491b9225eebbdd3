import type * as workspace from './gen/workspace';
import type * as panes from './gen/panes';
import type * as config from './gen/config';
import type * as browser from './gen/browser';
import { wireSecretInput } from './secretInput';
// Wire types: the exact JSON shapes the Go backend sends. Written once here; every transport and
// component uses these, so a change to the backend's JSON is a change to this one file.

export type PaneKind = 'terminal' | 'browser';

/** One cell of a workspace grid. row and col are 0-based. */
export type Pane = workspace.Pane;

/** The built-in launch templates (GET /api/launch-templates lists them with their details). */
export type LaunchTemplateId = 'shell' | 'claude' | 'codex' | 'aider' | 'python' | 'custom';

/**
 * What a terminal pane launches: a command with its arguments, working directory and
 * environment, stored with the workspace. A template fills in its command and arguments.
 */
export type PaneLaunch = workspace.Launch;

/** A ready-made launch, as the backend lists them, in menu order. */
export interface LaunchTemplate {
  id: string;
  name: string;
  /** '' for the shell and for "custom" (the person gives one). */
  command: string;
  args?: string[];
  /** How to install the command when it is missing. */
  install?: string;
  /** An agent template's provider protocol ('anthropic', 'openai'): a key can be assigned to it. */
  wire?: string;
  /** Whether the command is found on this machine. */
  installed: boolean;
}

/** Turning a pane into the other kind. */
export type ConvertRequest = panes.ConvertRequest;

/** A template list as the UI uses it: Go's nil slice (null) is none; missing fields filled in. */
export function normalizeLaunchTemplates(raw: unknown): LaunchTemplate[] {
  // A bare list, or one wrapped as {templates: [...]} like the other list answers.
  if (raw && typeof raw === 'object' && !Array.isArray(raw)) raw = (raw as { templates?: unknown }).templates;
  if (!Array.isArray(raw)) return [];
  return raw
    .filter((t): t is Partial<LaunchTemplate> => typeof t === 'object' && t !== null && typeof t.id === 'string')
    .map((t) => ({
      id: String(t.id),
      name: typeof t.name === 'string' && t.name ? t.name : String(t.id),
      command: typeof t.command === 'string' ? t.command : '',
      ...(Array.isArray(t.args) && t.args.length ? { args: t.args.map(String) } : {}),
      ...(typeof t.install === 'string' && t.install ? { install: t.install } : {}),
      ...(typeof t.wire === 'string' && t.wire ? { wire: t.wire } : {}),
      // A backend that does not say is taken at its word that the command is there.
      installed: t.installed !== false,
    }));
}

/** The exact body of a convert call: the fields that are set, force only when true. */
export function wireConvertRequest(req: ConvertRequest): ConvertRequest {
  const wire: ConvertRequest = { kind: req.kind };
  if (req.url) wire.url = req.url;
  if (req.template) wire.template = req.template;
  if (req.force) wire.force = true;
  return wire;
}

/** A workspace: a rows×cols grid holding exactly rows*cols panes. Weights are CSS `fr` values. */
export type Workspace = workspace.Workspace;

/** All workspaces, ordered by position, and the one the user is looking at. */
export type WorkspaceList = workspace.List;

/**
 * Every backend change is pushed as an envelope. For topic 'workspaces' the data is the full
 * WorkspaceList snapshot after the change.
 */
export interface BackendEvent {
  topic: string;
  type: string;
  data: unknown;
}

export type WorkspaceEventType = 'created' | 'updated' | 'deleted' | 'activated' | 'imported';

/** State of the live event stream (web only; the desktop is always connected). */
export type ConnectionState = 'connected' | 'connecting' | 'disconnected';

export interface PanePatch {
  kind?: PaneKind;
  label?: string;
}

/** Grid bounds enforced by the backend; the UI offers exactly this range. */
export const MIN_GRID = 1;
export const MAX_GRID = 6;

// ---- model providers ------------------------------------------------------------------------

/** The two wire protocols: OpenAI Chat Completions (and every compatible server), Anthropic Messages. */
export type ProviderKind = 'openai' | 'anthropic';

/** The wire's kind as a ProviderKind (the backend knows only these two). */
export function providerKind(kind: string): ProviderKind {
  return kind === 'anthropic' ? 'anthropic' : 'openai';
}

/**
 * The base URL the backend uses when a provider leaves its own empty. Mirrors defaultBaseURL in
 * backend/config/providers.go; the UI only shows it as a placeholder.
 */
export const DEFAULT_BASE_URL: Readonly<Record<ProviderKind, string>> = {
  openai: 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};

/** A configured model endpoint. The API key never reaches the UI: only whether one is set and a hint. */
export type Provider = config.Provider;

/** An add or an edit. */
export type ProviderInput = config.ProviderInput;

/** Where the backend keeps API keys. */
export type SecretsBackend = 'keyring' | 'file';

/**
 * Every provider plus the defaults for agents and critics ('' = none). Also the data of every
 * event on the 'providers' topic.
 */
export type ProviderList = config.ProviderList;

/** What "Test connection" reports. */
export type TestResult = config.TestResult;

/** A model server found by "Discover" (Ollama, LM Studio, vLLM, local). */
export type Discovered = config.Discovered;

/** USD per million tokens. The cache prices are for input read from / written to the provider's prompt cache; 0 or absent: the input price. */
export type Price = config.Price;

/** Model name → price. */
export type PriceTable = Record<string, Price>;

/** The exact ProviderInput to send: the known fields, and apiKey only when the caller set it. */
export function wireProviderInput(input: ProviderInput): ProviderInput {
  return wireSecretInput(input, ['name', 'kind', 'baseUrl', 'model', 'visionModel', 'temperature', 'maxTokens', 'thinking', 'contextWindow'], 'apiKey');
}

// ---- terminals ------------------------------------------------------------------------------

/** The event topic of terminal tabs, their output and broadcast flags. */
export const TERMINAL_TOPIC = 'terminal';

/** One shell (PTY) of a terminal pane; a pane holds one or more. */
export interface TabInfo {
  paneId: string;
  tabId: string;
  title: string;
  running: boolean;
  /** null while running, or when the exit status is unknown. */
  exitCode: number | null;
  cols: number;
  rows: number;
  /** Started inside a Landlock sandbox. */
  confined: boolean;
  /** The tab the pane shows. */
  active: boolean;
  /** user@host:port of an SSH tab; '' for a local shell. */
  remote: string;
  /** 0 when not running. */
  pid: number;
  /** The pane is included in broadcast input (a pane-wide flag, repeated on each tab). */
  broadcast?: boolean;
}

export type TabEventKind = 'opened' | 'closed' | 'exited' | 'restarted' | 'title' | 'activated';

/** Data of a `terminal`/`tab` event. */
export interface TabEventData {
  kind: TabEventKind;
  tab: TabInfo;
}

/** Data of a `terminal`/`output` event: only for tabs this client attached. */
export interface OutputEventData {
  paneId: string;
  tabId: string;
  /** base64 of the raw bytes. */
  data: string;
  /** The view fell behind: reset the screen, then write `data` (a full replay with a marker). */
  resync: boolean;
}

/** Data of a `terminal`/`broadcast` event. */
export interface BroadcastEventData {
  paneId: string;
  include: boolean;
}

/**
 * A TabInfo as the UI uses it. Go leaves out empty optional fields (exitCode, remote, pid), so
 * every transport passes tabs through here.
 */
export function normalizeTab(raw: unknown): TabInfo {
  const t = (raw ?? {}) as Partial<TabInfo>;
  return {
    ...paneTabFields(t),
    title: typeof t.title === 'string' ? t.title : '',
    running: t.running === true,
    exitCode: typeof t.exitCode === 'number' ? t.exitCode : null,
    cols: typeof t.cols === 'number' ? t.cols : 0,
    rows: typeof t.rows === 'number' ? t.rows : 0,
    confined: t.confined === true,
    remote: typeof t.remote === 'string' ? t.remote : '',
    pid: typeof t.pid === 'number' ? t.pid : 0,
  };
}

/** What every tab of a pane has, terminal or browser: which pane and tab it is, and whether the pane shows it. */
function paneTabFields(t: { paneId?: string; tabId?: string; active?: boolean }) {
  return { paneId: String(t.paneId ?? ''), tabId: String(t.tabId ?? ''), active: t.active === true };
}

export function normalizeTabs(raw: unknown): TabInfo[] {
  return Array.isArray(raw) ? raw.map(normalizeTab) : [];
}

// ---- browser panes --------------------------------------------------------------------------

/** The event topic of browser tabs, screencast frames and browser errors. */
export const BROWSER_TOPIC = 'browser';

/**
 * One page (a Chromium target) of a browser pane; a pane holds one or more. `crashed`: the
 * renderer died (the pane offers Reconnect); `discarded`: idle in the background and unloaded;
 * `active`: the tab the pane shows. `prompt` is the question the page waits on the person for,
 * null if none (Go leaves it out).
 */
export type BrowserTab = Omit<browser.TabInfo, 'prompt'> & { prompt: BrowserPrompt | null };

/** What a page asks the person (the agent never answers these): HTTP sign-in or a bad certificate. */
export type BrowserPrompt = Omit<browser.Prompt, 'kind'> & { kind: 'auth' | 'certificate' };

/** The person's answer: go on (with credentials for auth), or not. */
export type BrowserPromptAnswer = browser.PromptAnswer;

/** Where a tab is after a navigation (navigate, back, forward, reload); status absent when unknown. */
export type PageInfo = Omit<browser.PageInfo, 'prompt'>;

/** The input types backend/browser/input.go accepts. */
export type BrowserInputType =
  | 'mousemove'
  | 'mousedown'
  | 'mouseup'
  | 'click'
  | 'dblclick'
  | 'wheel'
  | 'keydown'
  | 'keyup'
  | 'text';

/**
 * One input from the person looking at a browser pane, forwarded to the page as a trusted
 * DevTools input event. x and y are CSS pixels of the page's viewport; key and code are DOM
 * KeyboardEvent values. Absent fields are zero / false on the Go side.
 */
export interface BrowserInputEvent {
  type: BrowserInputType;
  x?: number;
  y?: number;
  button?: 'left' | 'middle' | 'right';
  /** DOM MouseEvent.buttons, for moves while dragging. */
  buttons?: number;
  deltaX?: number;
  deltaY?: number;
  key?: string;
  code?: string;
  text?: string;
  alt?: boolean;
  ctrl?: boolean;
  meta?: boolean;
  shift?: boolean;
}

/** Data of a `browser`/`frame` event: one JPEG of a watched pane's active tab. */
export interface BrowserFrame {
  paneId: string;
  tabId: string;
  /** base64 of the JPEG. */
  data: string;
  /** The viewport the frame shows, in CSS pixels. */
  width: number;
  height: number;
  scrollX: number;
  scrollY: number;
}

/** Kinds of `browser` tab events (the envelope's type repeats the kind). */
export type BrowserEventKind =
  | 'opened'
  | 'closed'
  | 'activated'
  | 'url'
  | 'title'
  | 'loading'
  | 'crashed'
  | 'reconnected'
  | 'discarded'
  | 'download'
  | 'dialog'
  | 'prompt';

/** A BrowserTab as the UI uses it, whatever the transport left out. */
export function normalizeBrowserTab(raw: unknown): BrowserTab {
  const t = (raw ?? {}) as Partial<BrowserTab>;
  return {
    ...paneTabFields(t),
    workspaceId: typeof t.workspaceId === 'string' ? t.workspaceId : '',
    url: typeof t.url === 'string' ? t.url : '',
    title: typeof t.title === 'string' ? t.title : '',
    loading: t.loading === true,
    crashed: t.crashed === true,
    discarded: t.discarded === true,
    canGoBack: t.canGoBack === true,
    canGoForward: t.canGoForward === true,
    prompt: normalizePrompt(t.prompt),
  };
}

function normalizePrompt(raw: unknown): BrowserPrompt | null {
  const p = raw as Partial<BrowserPrompt> | null | undefined;
  if (!p || (p.kind !== 'auth' && p.kind !== 'certificate')) return null;
  return {
    kind: p.kind,
    url: String(p.url ?? ''),
    realm: p.realm,
    scheme: p.scheme,
    proxy: p.proxy === true,
    error: p.error,
  };
}

export function normalizeBrowserTabs(raw: unknown): BrowserTab[] {
  return Array.isArray(raw) ? raw.map(normalizeBrowserTab) : [];
}

export function normalizePageInfo(raw: unknown): PageInfo {
  const p = (raw ?? {}) as Partial<PageInfo>;
  const page: PageInfo = {
    tabId: String(p.tabId ?? ''),
    url: typeof p.url === 'string' ? p.url : '',
    title: typeof p.title === 'string' ? p.title : '',
    loading: p.loading === true,
  };
  if (typeof p.status === 'number' && p.status > 0) page.status = p.status;
  if (p.download === true) page.download = true;
  return page;
}

// SSH servers' wire types live in ssh-types.ts; every type of the API is exported from here.
export * from './ssh-types';
