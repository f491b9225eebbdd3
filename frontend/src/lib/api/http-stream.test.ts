import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { BackendError } from './errors';
import {
  TERMINAL_ATTACH_TIMEOUT_MS,
  WS_CLOSE_TOKEN_EXPIRED,
  WS_PROTOCOL,
  WS_RETRY_MAX_MS,
  WS_RETRY_MIN_MS,
} from './http';
import {
  type Route,
  webBackend,
  memoryStorage,
  json,
  tokens,
  signedInStorage,
  list,
  socketFactory,
} from './http.fakes';
import type { BackendEvent, ConnectionState } from './types';

describe('HttpBackend events', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  function setup(storage = signedInStorage(), route: Route = (c) => (c.url === '/api/refresh' ? json(200, tokens(2)) : json(200, { version: '1' }))) {
    const ws = socketFactory();
    const { api, calls } = webBackend(route, { storage, openSocket: ws.openSocket, wsUrl: 'ws://host/api/ws' });
    const states: ConnectionState[] = [];
    api.onConnectionChange((s) => states.push(s));
    const events: BackendEvent[] = [];
    const unsubscribe = api.subscribe((e) => events.push(e));
    return { api, calls, ws, states, events, unsubscribe };
  }

  it('passes the token as a subprotocol and delivers events', () => {
    const { ws, states, events } = setup();
    expect(ws.sockets).toHaveLength(1);
    expect(ws.sockets[0].url).toBe('ws://host/api/ws');
    expect(ws.sockets[0].protocols).toEqual([WS_PROTOCOL, 'bearer.access-1']);
    ws.sockets[0].serverOpen();
    const e = { topic: 'workspaces', type: 'updated', data: list };
    ws.sockets[0].serverSend(e);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
    ws.sockets[0].serverSend('not json');
    expect(warn).toHaveBeenCalledTimes(1);
    warn.mockRestore();
    expect(events).toEqual([e]);
    expect(states).toEqual(['disconnected', 'connecting', 'connected']);
  });

  it('reconnects with a backoff that doubles up to the cap and resets after a success', async () => {
    const { ws, states } = setup();
    const delays: number[] = [];
    for (let i = 0; i < 6; i++) {
      const before = ws.sockets.length;
      ws.sockets[before - 1].serverClose(1006);
      let waited = 0;
      while (ws.sockets.length === before) {
        await vi.advanceTimersByTimeAsync(100);
        waited += 100;
      }
      delays.push(waited);
    }
    expect(delays).toEqual([500, 1000, 2000, 4000, 5000, 5000].map((d) => Math.min(d, WS_RETRY_MAX_MS)));
    expect(states).toContain('disconnected');

    const last = ws.sockets[ws.sockets.length - 1];
    last.serverOpen();
    const before = ws.sockets.length;
    last.serverClose(1006);
    await vi.advanceTimersByTimeAsync(WS_RETRY_MIN_MS);
    expect(ws.sockets.length).toBe(before + 1);
  });

  it('refreshes the token and reconnects at once when the server closes with 4001', async () => {
    const { ws, calls, states } = setup();
    ws.sockets[0].serverOpen();
    ws.sockets[0].serverClose(WS_CLOSE_TOKEN_EXPIRED);
    await vi.waitFor(() => expect(ws.sockets).toHaveLength(2));
    expect(calls.map((c) => c.url)).toEqual(['/api/refresh']);
    expect(ws.sockets[1].protocols).toEqual([WS_PROTOCOL, 'bearer.access-2']);
    ws.sockets[1].serverOpen();
    expect(states.slice(-3)).toEqual(['disconnected', 'connecting', 'connected']);
  });

  it('stops when the refresh after 4001 is refused, and shows the login', async () => {
    const { api, ws } = setup(signedInStorage(), () => json(401, { error: 'refresh token expired' }));
    ws.sockets[0].serverOpen();
    ws.sockets[0].serverClose(WS_CLOSE_TOKEN_EXPIRED);
    await vi.waitFor(() => expect(api.auth.signedIn()).toBe(false));
    await vi.advanceTimersByTimeAsync(WS_RETRY_MAX_MS * 2);
    expect(ws.sockets).toHaveLength(1);
  });

  it('opens no socket while signed out, and opens one after login', async () => {
    const { api, ws, states } = setup(memoryStorage(), () => json(200, tokens(5)));
    expect(ws.sockets).toHaveLength(0);
    expect(states).toEqual(['disconnected']);
    await api.auth.login('pw');
    expect(ws.sockets).toHaveLength(1);
    expect(ws.sockets[0].protocols[1]).toBe('bearer.access-5');
  });

  it('closes the socket and stops reconnecting once nobody listens', async () => {
    const { ws, unsubscribe, states } = setup();
    ws.sockets[0].serverOpen();
    unsubscribe();
    expect(ws.sockets[0].closedByClient).toBe(true);
    ws.sockets[0].serverClose(1000);
    await vi.advanceTimersByTimeAsync(WS_RETRY_MAX_MS * 2);
    expect(ws.sockets).toHaveLength(1);
    expect(states[states.length - 1]).toBe('disconnected');
  });
});

/** A signed-in backend with one subscriber collecting its events, over a scripted socket. */
function streamSetup() {
  const ws = socketFactory();
  const { api } = webBackend(() => json(200, { version: '1' }), { openSocket: ws.openSocket, wsUrl: 'ws://host/api/ws' });
  const events: BackendEvent[] = [];
  api.subscribe((e) => events.push(e));
  return { api, ws, events, socket: () => ws.sockets[ws.sockets.length - 1] };
}

describe('HttpBackend terminal stream', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  const replay = (paneId: string, tabId: string, text: string) => ({
    topic: 'terminal',
    type: 'replay',
    data: { paneId, tabId, data: btoa(text) },
  });

  it('attach sends term.attach and resolves with the decoded replay, which subscribers do not see', async () => {
    const { api, socket, events } = streamSetup();
    socket().serverOpen();
    const attached = api.terminalAttach('p1', 'tab-1');
    expect(socket().sent).toEqual([{ type: 'term.attach', paneId: 'p1', tabId: 'tab-1' }]);
    socket().serverSend(replay('p1', 'tab-1', '$ echo hello\r\nhello\r\n'));
    await expect(attached).resolves.toEqual(new TextEncoder().encode('$ echo hello\r\nhello\r\n'));
    expect(events).toEqual([]);

    // Output that follows is an ordinary event.
    const out = { topic: 'terminal', type: 'output', data: { paneId: 'p1', tabId: 'tab-1', data: btoa('x'), resync: false } };
    socket().serverSend(out);
    expect(events).toEqual([out]);
  });

  it('attach rejects when no replay arrives within the timeout', async () => {
    const { api, socket } = streamSetup();
    socket().serverOpen();
    const attached = api.terminalAttach('p1', 'tab-1');
    const outcome = attached.then(
      () => 'resolved',
      (e: Error) => e,
    );
    await vi.advanceTimersByTimeAsync(TERMINAL_ATTACH_TIMEOUT_MS - 1);
    socket().serverSend({ topic: 'terminal', type: 'replay', data: { paneId: 'p1', tabId: 'other', data: '' } });
    await vi.advanceTimersByTimeAsync(1);
    const err = await outcome;
    expect(err).toBeInstanceOf(BackendError);
    expect((err as Error).message).toMatch(/within 10 s/);
  });

  it("takes a null replay (Go's empty []byte) as an empty screen", async () => {
    const { api, socket } = streamSetup();
    socket().serverOpen();
    const attached = api.terminalAttach('p1', 'tab-1');
    socket().serverSend({ topic: 'terminal', type: 'replay', data: { paneId: 'p1', tabId: 'tab-1', data: null } });
    await expect(attached).resolves.toEqual(new Uint8Array());
  });

  it("fails an attach at once with the server's error for that tab", async () => {
    const { api, socket, events } = streamSetup();
    socket().serverOpen();
    const attached = api.terminalAttach('p1', 'tab-9');
    const error = { topic: 'terminal', type: 'error', data: { paneId: 'p1', tabId: 'tab-9', error: 'pane "p1" has no tab "tab-9"' } };
    socket().serverSend(error);
    await expect(attached).rejects.toThrow('pane "p1" has no tab "tab-9"');
    expect(events).toEqual([error]);
  });

  it('answers attaches of one tab in order, one replay each', async () => {
    const { api, socket } = streamSetup();
    socket().serverOpen();
    const first = api.terminalAttach('p1', 'tab-1');
    const second = api.terminalAttach('p1', 'tab-1');
    socket().serverSend(replay('p1', 'tab-1', 'one'));
    socket().serverSend(replay('p1', 'tab-1', 'two'));
    expect(new TextDecoder().decode(await first)).toBe('one');
    expect(new TextDecoder().decode(await second)).toBe('two');
  });

  it('sends input, resize and detach frames in their exact shapes', async () => {
    const { api, socket } = streamSetup();
    socket().serverOpen();
    api.terminalInput('p1', 'tab-1', 'ls\r');
    api.terminalResize('p1', 'tab-1', 120, 40);
    await api.terminalDetach('p1', 'tab-1');
    expect(socket().sent).toEqual([
      { type: 'term.input', paneId: 'p1', tabId: 'tab-1', data: 'ls\r' },
      { type: 'term.resize', paneId: 'p1', tabId: 'tab-1', cols: 120, rows: 40 },
      { type: 'term.detach', paneId: 'p1', tabId: 'tab-1' },
    ]);
  });

  it('sends an attach made before the socket opened once it opens', async () => {
    const { api, socket } = streamSetup();
    const attached = api.terminalAttach('p1', 'tab-1');
    api.terminalInput('p1', 'tab-1', 'lost'); // typing with no connection goes nowhere
    expect(socket().sent).toEqual([]);
    socket().serverOpen();
    expect(socket().sent).toEqual([{ type: 'term.attach', paneId: 'p1', tabId: 'tab-1' }]);
    socket().serverSend(replay('p1', 'tab-1', 'screen'));
    await expect(attached).resolves.toEqual(new TextEncoder().encode('screen'));
  });

  it('re-attaches every attached tab after a reconnect, with its last size, and hands the replay on as a resync', async () => {
    const { api, ws, socket, events } = streamSetup();
    socket().serverOpen();
    const a = api.terminalAttach('p1', 'tab-1');
    const b = api.terminalAttach('p2', 'tab-7');
    socket().serverSend(replay('p1', 'tab-1', 'a'));
    socket().serverSend(replay('p2', 'tab-7', 'b'));
    await Promise.all([a, b]);
    api.terminalResize('p1', 'tab-1', 100, 30);
    await api.terminalDetach('p2', 'tab-7');

    socket().serverClose(1006);
    await vi.advanceTimersByTimeAsync(WS_RETRY_MIN_MS);
    expect(ws.sockets).toHaveLength(2);
    socket().serverOpen();
    expect(socket().sent).toEqual([
      { type: 'term.attach', paneId: 'p1', tabId: 'tab-1' },
      { type: 'term.resize', paneId: 'p1', tabId: 'tab-1', cols: 100, rows: 30 },
    ]);

    socket().serverSend(replay('p1', 'tab-1', 'restored'));
    socket().serverSend(replay('p2', 'tab-7', 'detached: dropped'));
    expect(events).toEqual([
      { topic: 'terminal', type: 'output', data: { paneId: 'p1', tabId: 'tab-1', data: btoa('restored'), resync: true } },
    ]);
  });

  it('an attach waiting across a reconnect gets the replay of the new connection', async () => {
    const { api, socket, events } = streamSetup();
    socket().serverOpen();
    const attached = api.terminalAttach('p1', 'tab-1');
    socket().serverClose(1006);
    await vi.advanceTimersByTimeAsync(WS_RETRY_MIN_MS);
    socket().serverOpen();
    expect(socket().sent).toEqual([{ type: 'term.attach', paneId: 'p1', tabId: 'tab-1' }]);
    socket().serverSend(replay('p1', 'tab-1', 'late'));
    await expect(attached).resolves.toEqual(new TextEncoder().encode('late'));
    expect(events).toEqual([]);
  });
});

describe('HttpBackend browser stream', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('sends watch, input and unwatch frames in their exact shapes, and hands frames to subscribers', () => {
    const { api, socket, events } = streamSetup();
    socket().serverOpen();
    api.browserWatch('p1');
    api.browserInput('p1', { type: 'mousedown', x: 10.5, y: 20, button: 'left' });
    api.browserInput('p1', { type: 'keydown', key: 'a', code: 'KeyA', shift: true });
    api.browserUnwatch('p1');
    expect(socket().sent).toEqual([
      { type: 'browser.watch', paneId: 'p1' },
      { type: 'browser.input', paneId: 'p1', event: { type: 'mousedown', x: 10.5, y: 20, button: 'left' } },
      { type: 'browser.input', paneId: 'p1', event: { type: 'keydown', key: 'a', code: 'KeyA', shift: true } },
      { type: 'browser.unwatch', paneId: 'p1' },
    ]);
    const frame = { topic: 'browser', type: 'frame', data: { paneId: 'p1', tabId: 'btab-1', data: '/9j/', width: 800, height: 600 } };
    socket().serverSend(frame);
    const error = { topic: 'browser', type: 'error', data: { paneId: 'p1', error: 'no such pane' } };
    socket().serverSend(error);
    expect(events).toEqual([frame, error]);
  });

  it('watches again after a reconnect the panes still watched, and drops input while down', async () => {
    const { api, ws, socket } = streamSetup();
    api.browserWatch('p1'); // before the socket opened: sent when it opens
    socket().serverOpen();
    api.browserWatch('p2');
    api.browserWatch('p3');
    api.browserUnwatch('p3');
    expect(socket().sent.map((m) => `${m.type} ${m.paneId}`)).toEqual([
      'browser.watch p1',
      'browser.watch p2',
      'browser.watch p3',
      'browser.unwatch p3',
    ]);

    socket().serverClose(1006);
    api.browserInput('p1', { type: 'text', text: 'lost' });
    await vi.advanceTimersByTimeAsync(WS_RETRY_MIN_MS);
    expect(ws.sockets).toHaveLength(2);
    expect(socket().sent).toEqual([]);
    socket().serverOpen();
    expect(socket().sent).toEqual([
      { type: 'browser.watch', paneId: 'p1' },
      { type: 'browser.watch', paneId: 'p2' },
    ]);
  });
});

// ---- SSH servers ----------------------------------------------------------------------------

