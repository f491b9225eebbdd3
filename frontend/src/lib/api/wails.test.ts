import { describe, expect, it, vi } from 'vitest';
import { BackendError } from './errors';
import { WAILS_EVENT, WailsBackend, type WailsApp, type WailsRuntime } from './wails';

function fakeApp(over: Partial<WailsApp> = {}): WailsApp {
  const unused = () => Promise.reject('not used in this test');
  return {
    Version: unused,
    ListWorkspaces: unused,
    CreateWorkspace: unused,
    RenameWorkspace: unused,
    DeleteWorkspace: unused,
    ActivateWorkspace: unused,
    SetGrid: unused,
    SetWeights: unused,
    SwapPanes: unused,
    UpdatePane: unused,
    ExportWorkspace: unused,
    ImportWorkspace: unused,
    ...over,
  } as WailsApp;
}

describe('WailsBackend', () => {
  it("turns Wails' plain-string rejections into Errors with the same message", async () => {
    const api = new WailsBackend(fakeApp({ SetGrid: () => Promise.reject('cols: must be between 1 and 6, got 0') }), undefined);
    const err = await api.setGrid('w1', 1, 0).catch((e) => e);
    expect(err).toBeInstanceOf(BackendError);
    expect(err.message).toBe('cols: must be between 1 and 6, got 0');
  });

  it('passes empty strings for the parts of a pane patch that stay unchanged', async () => {
    const UpdatePane = vi.fn(async () => ({}) as never);
    const api = new WailsBackend(fakeApp({ UpdatePane }), undefined);
    await api.updatePane('w1', 'p1', { label: 'logs' });
    await api.updatePane('w1', 'p1', { kind: 'browser' });
    expect(UpdatePane.mock.calls).toEqual([
      ['w1', 'p1', '', 'logs'],
      ['w1', 'p1', 'browser', ''],
    ]);
  });

  it('treats a cancelled save dialog as done, not as an error', async () => {
    const api = new WailsBackend(fakeApp({ ExportWorkspace: async () => '' }), undefined);
    await expect(api.exportWorkspace('w1')).resolves.toBeUndefined();
  });

  it('subscribes to the backend event and hands back the unsubscribe', () => {
    const off = vi.fn();
    let registered: ((...data: any[]) => void) | undefined;
    const runtime: WailsRuntime = {
      EventsOn: vi.fn((name: string, cb: (...data: any[]) => void) => {
        expect(name).toBe(WAILS_EVENT);
        registered = cb;
        return off;
      }),
    };
    const api = new WailsBackend(fakeApp(), runtime);
    const seen: unknown[] = [];
    const unsubscribe = api.subscribe((e) => seen.push(e));
    registered?.({ topic: 'workspaces', type: 'activated', data: { workspaces: [], activeId: '' } });
    expect(seen).toEqual([{ topic: 'workspaces', type: 'activated', data: { workspaces: [], activeId: '' } }]);
    unsubscribe();
    expect(off).toHaveBeenCalled();
  });
});
