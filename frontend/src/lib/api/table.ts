// The calls of the Go table (backend/api), written once for both transports. A transport only
// says how a call travels: the desktop through the one Wails binding App.Call(name, args), the
// web as POST /api/rpc/{name}. The names, arguments and results are gen/calls.ts, generated
// from the Go declarations, so a call renamed or reshaped in Go fails the type check here.
import { AgentKeysCalls } from './agentKeys';
import { CatalogCalls, type CatalogKind, type CatalogPath } from './catalog';
import { ChatCalls } from './chat';
import { ExtensionsCalls } from './extensions';
import { FleetsCalls } from './fleets';
import type { Calls } from './gen/calls';
import { GoalsCalls } from './goals';
import { InboxCalls } from './inbox';
import { LoginsCalls } from './logins';
import { RecipesCalls } from './recipes';
import { ReviewCalls } from './review';
import type {
  BrowserPromptAnswer,
  BrowserTab,
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
import {
  normalizeBrowserTab,
  normalizeBrowserTabs,
  normalizeLaunchTemplates,
  normalizePageInfo,
  normalizeRemoteSessions,
  normalizeSSHServer,
  normalizeSSHServers,
  normalizeTab,
  normalizeTabs,
  wireConvertRequest,
  wireProviderInput,
  wireSSHInput,
} from './types';

export type { Calls } from './gen/calls';
export { CALL_NAMES } from './gen/calls';
export type CallName = keyof Calls;
export type CallArgs<N extends CallName> = Calls[N]['args'];
export type CallResult<N extends CallName> = Calls[N]['result'];

/** How one transport runs a call of the table. */
export type Call = <N extends CallName>(name: N, args: CallArgs<N>) => Promise<CallResult<N>>;

/** What a transport does its own way in the domains' calls; the rest travels as calls of the table. */
export interface TransportOwn {
  /** Opens a config file where the person works (the desktop); absent: the table's CatalogPath says where it is. */
  openCatalogPath?: (kind: CatalogKind, id: string) => Promise<CatalogPath>;
  /** Whether revealing a saved password asks for the server's login password again. */
  revealNeedsPassword: boolean;
  saveFleetFile: (name: string, yaml: string) => Promise<void>;
  openExtensionsFolder?: (which: 'plugins' | 'mcp') => Promise<void>;
}

/** The Backend methods that are calls of the table, over a transport's Call. */
export abstract class TableBackend {
  protected abstract call: Call;

  readonly goals: GoalsCalls;
  readonly catalog: CatalogCalls;
  readonly chat: ChatCalls;
  readonly recipes: RecipesCalls;
  readonly logins: LoginsCalls;
  readonly fleets: FleetsCalls;
  readonly extensions: ExtensionsCalls;
  readonly review: ReviewCalls;
  readonly inbox: InboxCalls;
  readonly agentKeys: AgentKeysCalls;

  protected constructor(own: TransportOwn) {
    // A transport's call is its own field, set only after this constructor: look it up per call.
    const call: Call = (name, args) => this.call(name, args);
    this.goals = new GoalsCalls(call);
    this.catalog = new CatalogCalls(call, own.openCatalogPath);
    this.chat = new ChatCalls(call);
    this.recipes = new RecipesCalls(call);
    this.logins = new LoginsCalls(call, own.revealNeedsPassword);
    this.fleets = new FleetsCalls(call, own.saveFleetFile);
    this.extensions = new ExtensionsCalls(call, own.openExtensionsFolder);
    this.review = new ReviewCalls(call);
    this.inbox = new InboxCalls(call);
    this.agentKeys = new AgentKeysCalls(call);
  }

  async version(): Promise<string> {
    return (await this.call('Version', {})).version;
  }
  listWorkspaces(): Promise<WorkspaceList> {
    return this.call('ListWorkspaces', {});
  }
  /** name '' lets the backend pick "Workspace N". */
  createWorkspace(name: string): Promise<Workspace> {
    return this.call('CreateWorkspace', { name });
  }
  /** A workspace with a rows×cols grid (1–6 each), made active. */
  createWorkspaceGrid(name: string, rows: number, cols: number): Promise<Workspace> {
    return this.call('CreateWorkspace', { name, rows, cols });
  }
  renameWorkspace(id: string, name: string): Promise<Workspace> {
    return this.call('RenameWorkspace', { id, name });
  }
  /**
   * The backend refuses deleting the last workspace. Ends what the workspace's panes hold; busy
   * ones reject (BackendError.busy) unless force.
   */
  deleteWorkspace(id: string, force = false): Promise<void> {
    return this.call('DeleteWorkspace', { id, force });
  }
  activateWorkspace(id: string): Promise<void> {
    return this.call('ActivateWorkspace', { id });
  }
  /** Ends what removed panes hold; busy ones reject (BackendError.busy) unless force. */
  setGrid(id: string, rows: number, cols: number, force = false): Promise<Workspace> {
    return this.call('SetGrid', { id, rows, cols, force });
  }
  setWeights(id: string, rowWeights: number[], colWeights: number[]): Promise<Workspace> {
    return this.call('SetWeights', { id, rowWeights, colWeights });
  }
  swapPanes(id: string, paneA: string, paneB: string): Promise<Workspace> {
    return this.call('SwapPanes', { id, paneA, paneB });
  }
  updatePane(id: string, paneId: string, patch: PanePatch): Promise<Workspace> {
    return this.call('UpdatePane', { id, paneId, ...patch });
  }

  // Panes as the agent steers them too: the backend holds focus, maximize and launch settings,
  // and an attached UI follows its "workspaces" events.

  /** Gives the pane its workspace's focus, so the agent knows where the person is. */
  focusPane(id: string, paneId: string): Promise<Workspace> {
    return this.call('FocusPane', { id, paneId });
  }
  /** Shows the pane alone, filling the grid, or the whole grid again (a toggle). */
  toggleMaximizePane(id: string, paneId: string): Promise<Workspace> {
    return this.call('ToggleMaximizePane', { id, paneId });
  }
  /**
   * What a terminal pane runs (null: the person's shell); the pane's terminal restarts with it.
   * A pane whose terminal runs a command is refused (field "force", its busy list) unless force.
   */
  setPaneLaunch(id: string, paneId: string, launch: PaneLaunch | null, force = false): Promise<Workspace> {
    return this.call('SetPaneLaunch', { id, paneId, launch, force });
  }
  /**
   * Turns the pane into the other kind. While a process runs in it and `force` is not set, it
   * rejects with a BackendError of field "force" whose `busy` lists what runs (when the transport
   * can say); a goal working in the pane refuses with field "paneId", force or not.
   */
  convertPane(id: string, paneId: string, req: ConvertRequest): Promise<Workspace> {
    return this.call('ConvertPane', { id, paneId, req: wireConvertRequest(req) });
  }
  /** An export file's text; `serve` also takes the raw file at POST /api/workspaces/import. */
  importWorkspace(text: string): Promise<Workspace> {
    return this.call('ImportWorkspace', { text });
  }
  /** The built-in launch templates, in menu order, with whether each command is installed. */
  async launchTemplates(): Promise<LaunchTemplate[]> {
    return normalizeLaunchTemplates(await this.call('LaunchTemplates', {}));
  }

  /** Every provider (keys masked), the defaults, and where keys are kept. */
  listProviders(): Promise<ProviderList> {
    return this.call('ListProviders', {});
  }
  /**
   * id '' creates. input.apiKey absent keeps the stored key, '' removes it, a value replaces it.
   * Bad input rejects with a BackendError whose `field` names the input field.
   */
  saveProvider(id: string, input: ProviderInput): Promise<Provider> {
    return this.call('SaveProvider', { id, input: wireProviderInput(input) });
  }
  deleteProvider(id: string): Promise<void> {
    return this.call('DeleteProvider', { id });
  }
  /** '' = none. */
  setDefaultProviders(defaultId: string, criticDefaultId: string): Promise<ProviderList> {
    return this.call('SetDefaultProviders', { defaultId, criticDefaultId });
  }
  /** May take several seconds: it calls the model server. */
  testProvider(id: string): Promise<TestResult> {
    return this.call('TestProvider', { id });
  }
  /**
   * Tests the add or edit form's values before they are saved (id: the provider being edited,
   * '' when adding; its stored key is used when the input leaves the key unchanged).
   */
  testUnsavedProvider(id: string, input: ProviderInput): Promise<TestResult> {
    return this.call('TestUnsavedProvider', { id, input: wireProviderInput(input) });
  }
  /** host '' = this machine. */
  async discoverProviders(host: string): Promise<Discovered[]> {
    return (await this.call('DiscoverProviders', { host })).servers;
  }
  async prices(): Promise<PriceTable> {
    return (await this.call('Prices', {})).prices;
  }
  /** Replaces the whole table. */
  setPrices(prices: PriceTable): Promise<void> {
    return this.call('SetPrices', { prices });
  }

  /** Starts the pane's first shell if it has none; resolves to all its tabs. */
  async terminalOpen(paneId: string, cols: number, rows: number): Promise<TabInfo[]> {
    return normalizeTabs((await this.call('TerminalOpen', { paneId, cols, rows })).tabs);
  }
  async terminalNewTab(paneId: string, cols: number, rows: number): Promise<TabInfo> {
    return normalizeTab(await this.call('TerminalNewTab', { paneId, cols, rows }));
  }
  async terminalTabs(paneId: string): Promise<TabInfo[]> {
    return normalizeTabs((await this.call('TerminalTabs', { paneId })).tabs);
  }
  terminalRestart(paneId: string, tabId: string): Promise<void> {
    return this.call('TerminalRestart', { paneId, tabId });
  }
  terminalCloseTab(paneId: string, tabId: string): Promise<void> {
    return this.call('TerminalCloseTab', { paneId, tabId });
  }
  terminalActivate(paneId: string, tabId: string): Promise<void> {
    return this.call('TerminalActivate', { paneId, tabId });
  }
  /** Whether what is typed in any included pane of the workspace goes to this one too. */
  terminalSetBroadcast(paneId: string, include: boolean): Promise<void> {
    return this.call('TerminalSetBroadcast', { paneId, include });
  }

  // SSH servers. Passwords travel from the form to the backend and never back.

  async listSSHServers(): Promise<SSHServer[]> {
    return normalizeSSHServers((await this.call('ListSSHServers', {})).servers);
  }
  /**
   * id '' creates. input.password absent keeps the stored one, '' removes it, a value replaces
   * it. Bad input rejects with a BackendError whose `field` names the input field.
   */
  async saveSSHServer(id: string, input: SSHServerInput): Promise<SSHServer> {
    return normalizeSSHServer(await this.call('SaveSSHServer', { id, input: wireSSHInput(input) }));
  }
  deleteSSHServer(id: string): Promise<void> {
    return this.call('DeleteSSHServer', { id });
  }
  /** A new tab in the pane, connected to the server inside the pane's tmux session there. */
  async terminalOpenSSH(paneId: string, serverId: string, cols: number, rows: number): Promise<TabInfo> {
    return normalizeTab(await this.call('TerminalOpenSSH', { paneId, serverId, cols, rows }));
  }
  /** One-shot ssh: rejects with ssh's own error text when the server cannot be reached. */
  async remoteSessions(serverId: string): Promise<RemoteSession[]> {
    return normalizeRemoteSessions((await this.call('RemoteSessions', { id: serverId })).sessions);
  }
  killRemoteSession(serverId: string, name: string): Promise<void> {
    return this.call('KillRemoteSession', { id: serverId, name });
  }

  // ---- browser panes (their screencast and input are the transports' streams) ----
  /** Opens a tab (at url; '' = blank) if the pane has none, sets the viewport; resolves to all its tabs. */
  async browserOpen(paneId: string, url: string, width: number, height: number): Promise<BrowserTab[]> {
    return normalizeBrowserTabs((await this.call('BrowserOpen', { paneId, url, width, height })).tabs);
  }
  async browserTabs(paneId: string): Promise<BrowserTab[]> {
    return normalizeBrowserTabs((await this.call('BrowserTabs', { paneId })).tabs);
  }
  /** The new tab becomes the pane's active one. */
  async browserNewTab(paneId: string, url: string): Promise<BrowserTab> {
    return normalizeBrowserTab(await this.call('BrowserNewTab', { paneId, url }));
  }
  browserCloseTab(paneId: string, tabId: string): Promise<void> {
    return this.call('BrowserCloseTab', { paneId, tabId });
  }
  async browserActivate(paneId: string, tabId: string): Promise<BrowserTab> {
    return normalizeBrowserTab(await this.call('BrowserActivate', { paneId, tabId }));
  }
  /** Waits for the page to load (the backend gives up waiting after 30 s, not failing). */
  async browserNavigate(paneId: string, url: string): Promise<PageInfo> {
    return normalizePageInfo(await this.call('BrowserNavigate', { paneId, url }));
  }
  async browserBack(paneId: string): Promise<PageInfo> {
    return normalizePageInfo(await this.call('BrowserBack', { paneId }));
  }
  async browserForward(paneId: string): Promise<PageInfo> {
    return normalizePageInfo(await this.call('BrowserForward', { paneId }));
  }
  async browserReload(paneId: string): Promise<PageInfo> {
    return normalizePageInfo(await this.call('BrowserReload', { paneId }));
  }
  /** The pages' size in CSS pixels (every tab of the pane). */
  browserViewport(paneId: string, width: number, height: number): Promise<void> {
    return this.call('BrowserViewport', { paneId, width, height });
  }
  /** Recreates the active tab (after a crash) at its last URL. */
  async browserReconnect(paneId: string): Promise<BrowserTab> {
    return normalizeBrowserTab(await this.call('BrowserReconnect', { paneId }));
  }
  /** Answers the question the active tab's page asks (its `prompt`). */
  browserAnswerPrompt(paneId: string, answer: BrowserPromptAnswer): Promise<void> {
    return this.call('BrowserAnswerPrompt', { paneId, answer });
  }
}
