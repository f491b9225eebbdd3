// The config dir's extensions: JavaScript tool plugins (tools/*.js) and MCP servers (mcp.json),
// as Settings → Plugins and Settings → MCP show them. Their types are generated from Go
// (gen/plugins.ts, gen/mcp.ts); the Backend exposes the calls of the table as
// `backend.extensions`. Env and header values of MCP servers never reach the frontend: the Go
// side masks them.
import type * as api from './gen/api';
import type * as mcp from './gen/mcp';
import type * as plugins from './gen/plugins';
import type { Risk } from './goals';
import type { Call } from './table';

/** Go's risk is its wire text, one of the ladder's. */
type WithRisk<T> = Omit<T, 'risk'> & { risk: Risk };

export type PluginInfo = WithRisk<plugins.Plugin>;
export type PluginLoadError = plugins.LoadError;
export type PluginStatus = Omit<plugins.Status, 'plugins'> & { plugins: PluginInfo[] };

export type McpState = 'not_started' | 'starting' | 'running' | 'failed' | 'exited' | 'disabled' | 'invalid';
export type McpTool = WithRisk<mcp.ToolInfo>;
export type McpServer = Omit<mcp.ServerStatus, 'risk' | 'state' | 'tools' | 'transport'> & {
  transport: 'stdio' | 'http';
  risk?: Risk;
  state: McpState;
  tools: McpTool[];
};
export type McpStatus = Omit<mcp.Status, 'servers'> & { servers: McpServer[] };
export type Extensions = Omit<api.Extensions, 'plugins' | 'mcp'> & { plugins: PluginStatus; mcp: McpStatus };

export interface ExtensionsApi {
  /** Reads the plugins and MCP servers (re-reading the files if they changed); starts nothing. */
  get(): Promise<Extensions>;
  /** Starts every MCP server now (failed ones again) and returns the new state. */
  startMcp(): Promise<Extensions>;
  /** Desktop only: opens the plugins folder or the folder of mcp.json in the file manager. */
  openFolder?(which: 'plugins' | 'mcp'): Promise<void>;
}

/** Go's answer read as the UI's narrower type: the same JSON. */
const asExtensions = (e: api.Extensions) => e as unknown as Extensions;

/** The extensions' calls over a transport's Call; the desktop also opens their folders. */
export class ExtensionsCalls implements ExtensionsApi {
  readonly openFolder?: (which: 'plugins' | 'mcp') => Promise<void>;

  constructor(
    private readonly call: Call,
    openFolder?: (which: 'plugins' | 'mcp') => Promise<void>,
  ) {
    if (openFolder) this.openFolder = openFolder;
  }

  async get() {
    return asExtensions(await this.call('Extensions', {}));
  }
  async startMcp() {
    return asExtensions(await this.call('StartMCPServers', {}));
  }
}
