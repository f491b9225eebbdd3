// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import type { Backend, Extensions } from '../../lib/api';
import { desktop as desktopBackend, web as webBackend } from '../../lib/api/transports.fixture';
import { WailsBackend, type WailsApp } from '../../lib/api/wails';
import golden from '../../lib/api/testdata/Extensions.json';
import { createAppContext } from '../../lib/state/context';
import Harness from './ExtensionsTabHarness.test.svelte';

const sample: Extensions = {
  configDir: '/cfg',
  plugins: {
    dir: '/cfg/tools',
    plugins: [
      { name: 'word_count', description: 'Count words.', risk: 'read_only', file: '/cfg/tools/word_count.js', schema: {} },
      { name: 'post_note', description: 'Post.', risk: 'network_write', file: '/cfg/tools/post_note.js', schema: {}, note: 'no risk declared: counted as network_write' },
    ],
    errors: [{ file: '/cfg/tools/broken.js', line: 3, message: 'syntax error: Unexpected token )' }],
  },
  mcp: {
    file: '/cfg/mcp.json',
    exists: true,
    servers: [
      {
        name: 'files',
        transport: 'stdio',
        command: 'mcp-files',
        args: ['--root', '/srv'],
        env: { TOKEN: '••••••' },
        risk: 'read_only',
        state: 'running',
        pid: 42,
        tools: [{ name: 'mcp__files__read', tool: 'read', description: 'Read a file.', risk: 'read_only' }],
      },
      { name: 'web', transport: 'http', url: 'https://mcp.example/mcp', headers: { Authorization: '••••••' }, state: 'failed', error: 'it did not answer within 20s', tools: [] },
    ],
  },
};

function setup(which: 'plugins' | 'mcp', desktop = false) {
  const extensions: Record<string, unknown> = { get: vi.fn(async () => sample), startMcp: vi.fn(async () => sample) };
  if (desktop) extensions.openFolder = vi.fn(async () => {});
  const backend = { kind: 'web', extensions } as unknown as Backend;
  const ctx = createAppContext(backend);
  render(Harness, { ctx, which });
  return extensions as { get: ReturnType<typeof vi.fn>; startMcp: ReturnType<typeof vi.fn>; openFolder?: ReturnType<typeof vi.fn> };
}

describe('Settings → Plugins', () => {
  it('lists the plugins with their risk and the load errors with file and line', async () => {
    setup('plugins');
    await vi.waitFor(() => expect(screen.queryAllByTestId('plugin-row')).toHaveLength(2));
    const rows = screen.getAllByTestId('plugin-row');
    expect(rows.map((r) => [r.dataset.name, r.dataset.risk])).toEqual([
      ['word_count', 'read_only'],
      ['post_note', 'network_write'],
    ]);
    expect(screen.getByTestId('plugin-note').textContent).toContain('counted as network_write');
    const err = screen.getByTestId('plugin-error');
    expect(err.textContent).toContain('/cfg/tools/broken.js:3');
    expect(err.textContent).toContain('Unexpected token )');
    expect(screen.getByTestId('plugins-dir').textContent).toBe('/cfg/tools');
    expect(screen.queryByTestId('plugins-open-folder')).toBeNull(); // a browser cannot open the server's folders
  });

  it('opens the plugins folder from the desktop window', async () => {
    const api = setup('plugins', true);
    await vi.waitFor(() => expect(screen.queryAllByTestId('plugin-row')).toHaveLength(2));
    await fireEvent.click(screen.getByTestId('plugins-open-folder'));
    expect(api.openFolder).toHaveBeenCalledWith('plugins');
  });
});

describe('Settings → MCP', () => {
  it('shows servers, their state, tools and errors, secrets masked, and starts them on request', async () => {
    const api = setup('mcp');
    await vi.waitFor(() => expect(screen.queryAllByTestId('mcp-server')).toHaveLength(2));
    const [files, web] = screen.getAllByTestId('mcp-server');
    expect(files.dataset.state).toBe('running');
    expect(files.querySelector('[data-testid="mcp-tool"]')!.textContent).toContain('mcp__files__read');
    expect(web.querySelector('[data-testid="mcp-error"]')!.textContent).toContain('did not answer within 20s');
    const secrets = screen.getAllByTestId('mcp-secret').map((e) => e.textContent);
    expect(secrets).toEqual(['TOKEN: ••••••', 'Authorization: ••••••']);
    await fireEvent.click(screen.getByTestId('mcp-start'));
    await vi.waitFor(() => expect(api.startMcp).toHaveBeenCalledOnce());
  });
});

describe('backend.extensions', () => {
  it("reads and starts through the table's calls, alike on both doors, into Go's real answer", async () => {
    const d = desktopBackend({ Extensions: golden, StartMCPServers: golden });
    const w = webBackend({ Extensions: golden, StartMCPServers: golden });
    for (const { api } of [d, w]) {
      const got = await api.extensions.get();
      expect(got.plugins.plugins).toEqual([]);
      expect(got.mcp).toMatchObject({ exists: false, servers: [] });
      expect((await api.extensions.startMcp()).configDir).toBe('/config');
    }
    expect(d.sent()).toEqual([
      ['Extensions', {}],
      ['StartMCPServers', {}],
    ]);
    expect(w.sent()).toEqual(d.sent());
  });

  it('opens a folder on the desktop only', async () => {
    const OpenExtensionsFolder = vi.fn(async () => {});
    await new WailsBackend({ OpenExtensionsFolder } as unknown as WailsApp, undefined).extensions.openFolder?.('plugins');
    expect(OpenExtensionsFolder).toHaveBeenCalledWith('plugins');
    expect(webBackend({}).api.extensions.openFolder).toBeUndefined();
  });
});
