// The config dir's extensions: JavaScript tool plugins (tools/*.js) and MCP servers (mcp.json),
// as Settings → Plugins and Settings → MCP show them. The Backend exposes one implementation as
// `backend.extensions`. Env and header values of MCP servers never reach the frontend: the Go
// side masks them.
import { callWails } from './errors';
import type { JsonRequest, Risk } from './goals';

export interface PluginInfo {
  name: string;
  description: string;
  risk: Risk;
  /** The file it was loaded from. */
  file: string;
  /** Its parameters' JSON schema, as the model is shown it. */
  schema: unknown;
  /** What was assumed, e.g. a missing risk counted as network_write. */
  note?: string;
}

export interface PluginLoadError {
  file: string;
  /** 0 when the error has no line (a field that is missing). */
  line?: number;
  field?: string;
  message: string;
}

export interface PluginStatus {
  /** The tools dir the plugins are read from. */
  dir: string;
  plugins: PluginInfo[];
  errors: PluginLoadError[];
}

export type McpState = 'not_started' | 'starting' | 'running' | 'failed' | 'exited' | 'disabled' | 'invalid';

export interface McpTool {
  /** As the model is offered it: mcp__SERVER__TOOL. */
  name: string;
  /** As the server names it. */
  tool: string;
  description: string;
  risk: Risk;
}

export interface McpServer {
  name: string;
  transport?: 'stdio' | 'http';
  command?: string;
  args?: string[];
  url?: string;
  /** Variable names with masked values. */
  env?: Record<string, string>;
  /** Header names with masked values. */
  headers?: Record<string, string>;
  risk?: Risk;
  state: McpState;
  error?: string;
  pid?: number;
  tools: McpTool[];
  toolErrors?: string[];
}

export interface McpStatus {
  /** The mcp.json path. */
  file: string;
  exists: boolean;
  /** The file as a whole did not load (not JSON): its line and what is wrong. */
  error?: string;
  servers: McpServer[];
}

export interface Extensions {
  configDir: string;
  plugins: PluginStatus;
  mcp: McpStatus;
}

export interface ExtensionsApi {
  /** Reads the plugins and MCP servers (re-reading the files if they changed); starts nothing. */
  get(): Promise<Extensions>;
  /** Starts every MCP server now (failed ones again) and returns the new state. */
  startMcp(): Promise<Extensions>;
  /** Desktop only: opens the plugins folder or the folder of mcp.json in the file manager. */
  openFolder?(which: 'plugins' | 'mcp'): Promise<void>;
}

const arr = <T>(v: unknown): T[] => (Array.isArray(v) ? (v as T[]) : []);

/** Fills the lists Go may send as null, so the views can map over them. */
export function normalizeExtensions(raw: unknown): Extensions {
  const e = (raw ?? {}) as Partial<Extensions>;
  const plugins = (e.plugins ?? {}) as Partial<PluginStatus>;
  const mcp = (e.mcp ?? {}) as Partial<McpStatus>;
  return {
    configDir: e.configDir ?? '',
    plugins: { dir: plugins.dir ?? '', plugins: arr(plugins.plugins), errors: arr(plugins.errors) },
    mcp: {
      file: mcp.file ?? '',
      exists: Boolean(mcp.exists),
      error: mcp.error || undefined,
      servers: arr<McpServer>(mcp.servers).map((s) => ({ ...s, tools: arr(s.tools) })),
    },
  };
}

export class HttpExtensions implements ExtensionsApi {
  constructor(private readonly json: JsonRequest) {}

  async get() {
    return normalizeExtensions(await this.json('GET', '/api/extensions'));
  }
  async startMcp() {
    return normalizeExtensions(await this.json('POST', '/api/extensions/mcp/start'));
  }
}

/** The bound Go methods (app_extensions.go). */
export interface WailsExtensionMethods {
  Extensions(): Promise<unknown>;
  StartMCPServers(): Promise<unknown>;
  OpenExtensionsFolder(which: string): Promise<void>;
}

export class WailsExtensions implements ExtensionsApi {
  constructor(private readonly app: WailsExtensionMethods) {}

  async get() {
    return normalizeExtensions(await callWails(() => this.app.Extensions()));
  }
  async startMcp() {
    return normalizeExtensions(await callWails(() => this.app.StartMCPServers()));
  }
  openFolder(which: 'plugins' | 'mcp') {
    return callWails(() => this.app.OpenExtensionsFolder(which));
  }
}
