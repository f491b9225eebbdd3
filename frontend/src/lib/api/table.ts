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
  createWorkspace(name: string): Promise<Workspace> {
    return this.call('CreateWorkspace', { name });
  }
  createWorkspaceGrid(name: string, rows: number, cols: number): Promise<Workspace> {
    return this.call('CreateWorkspace', { name, rows, cols });
  }
  renameWorkspace(id: string, name: string): Promise<Workspace> {
    return this.call('RenameWorkspace', { id, name });
  }
  deleteWorkspace(id: string, force = false): Promise<void> {
    return this.call('DeleteWorkspace', { id, force });
  }
  activateWorkspace(id: string): Promise<void> {
    return this.call('ActivateWorkspace', { id });
  }
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
  focusPane(id: string, paneId: string): Promise<Workspace> {
    return this.call('FocusPane', { id, paneId });
  }
  toggleMaximizePane(id: string, paneId: string): Promise<Workspace> {
    return this.call('ToggleMaximizePane', { id, paneId });
  }
  setPaneLaunch(id: string, paneId: string, launch: PaneLaunch | null, force = false): Promise<Workspace> {
    return this.call('SetPaneLaunch', { id, paneId, launch, force });
  }
  convertPane(id: string, paneId: string, req: ConvertRequest): Promise<Workspace> {
    return this.call('ConvertPane', { id, paneId, req: wireConvertRequest(req) });
  }
  /** An export file's text; `serve` also takes the raw file at POST /api/workspaces/import. */
  importWorkspace(text: string): Promise<Workspace> {
    return this.call('ImportWorkspace', { text });
  }
  async launchTemplates(): Promise<LaunchTemplate[]> {
    return normalizeLaunchTemplates(await this.call('LaunchTemplates', {}));
  }

  listProviders(): Promise<ProviderList> {
    return this.call('ListProviders', {});
  }
  saveProvider(id: string, input: ProviderInput): Promise<Provider> {
    return this.call('SaveProvider', { id, input: wireProviderInput(input) });
  }
  deleteProvider(id: string): Promise<void> {
    return this.call('DeleteProvider', { id });
  }
  setDefaultProviders(defaultId: string, criticDefaultId: string): Promise<ProviderList> {
    return this.call('SetDefaultProviders', { defaultId, criticDefaultId });
  }
  testProvider(id: string): Promise<TestResult> {
    return this.call('TestProvider', { id });
  }
  testUnsavedProvider(id: string, input: ProviderInput): Promise<TestResult> {
    return this.call('TestUnsavedProvider', { id, input: wireProviderInput(input) });
  }
  async discoverProviders(host: string): Promise<Discovered[]> {
    return (await this.call('DiscoverProviders', { host })).servers;
  }
  async prices(): Promise<PriceTable> {
    return (await this.call('Prices', {})).prices;
  }
  setPrices(prices: PriceTable): Promise<void> {
    return this.call('SetPrices', { prices });
  }

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
  terminalSetBroadcast(paneId: string, include: boolean): Promise<void> {
    return this.call('TerminalSetBroadcast', { paneId, include });
  }

  async listSSHServers(): Promise<SSHServer[]> {
    return normalizeSSHServers((await this.call('ListSSHServers', {})).servers);
  }
  async saveSSHServer(id: string, input: SSHServerInput): Promise<SSHServer> {
    return normalizeSSHServer(await this.call('SaveSSHServer', { id, input: wireSSHInput(input) }));
  }
  deleteSSHServer(id: string): Promise<void> {
    return this.call('DeleteSSHServer', { id });
  }
  async terminalOpenSSH(paneId: string, serverId: string, cols: number, rows: number): Promise<TabInfo> {
    return normalizeTab(await this.call('TerminalOpenSSH', { paneId, serverId, cols, rows }));
  }
  async remoteSessions(serverId: string): Promise<RemoteSession[]> {
    return normalizeRemoteSessions((await this.call('RemoteSessions', { id: serverId })).sessions);
  }
  killRemoteSession(serverId: string, name: string): Promise<void> {
    return this.call('KillRemoteSession', { id: serverId, name });
  }

  // ---- browser panes (their screencast and input are the transports' streams) ----
  async browserOpen(paneId: string, url: string, width: number, height: number): Promise<BrowserTab[]> {
    return normalizeBrowserTabs((await this.call('BrowserOpen', { paneId, url, width, height })).tabs);
  }
  async browserTabs(paneId: string): Promise<BrowserTab[]> {
    return normalizeBrowserTabs((await this.call('BrowserTabs', { paneId })).tabs);
  }
  async browserNewTab(paneId: string, url: string): Promise<BrowserTab> {
    return normalizeBrowserTab(await this.call('BrowserNewTab', { paneId, url }));
  }
  browserCloseTab(paneId: string, tabId: string): Promise<void> {
    return this.call('BrowserCloseTab', { paneId, tabId });
  }
  async browserActivate(paneId: string, tabId: string): Promise<BrowserTab> {
    return normalizeBrowserTab(await this.call('BrowserActivate', { paneId, tabId }));
  }
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
  browserViewport(paneId: string, width: number, height: number): Promise<void> {
    return this.call('BrowserViewport', { paneId, width, height });
  }
  async browserReconnect(paneId: string): Promise<BrowserTab> {
    return normalizeBrowserTab(await this.call('BrowserReconnect', { paneId }));
  }
  browserAnswerPrompt(paneId: string, answer: BrowserPromptAnswer): Promise<void> {
    return this.call('BrowserAnswerPrompt', { paneId, answer });
  }
}
