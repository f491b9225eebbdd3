import { describe, expect, it, vi } from 'vitest';
import { normalizeChatState, type Backend, type BackendEvent, type ChatApi, type ChatMessage, type ChatView, type ConnectionState } from '../api';
import { ChatStore } from './chat.svelte';

function msg(ws: string, seq: number, text: string, source: ChatMessage['source'] = 'user'): ChatMessage {
  return { workspaceId: ws, seq, source, message: { role: 'user', parts: [{ kind: 'text', text }] }, partial: false, createdAt: '' };
}

function view(ws: string, messages: ChatMessage[], over = {}): ChatView {
  return { messages, state: normalizeChatState({ workspaceId: ws, ...over }) };
}

function fakeBackend(chat: Partial<ChatApi> = {}) {
  let emit: (e: BackendEvent) => void = () => {};
  let setConn: (s: ConnectionState) => void = () => {};
  const api: ChatApi = {
    get: vi.fn(async (ws: string) => view(ws, [msg(ws, 1, `hello ${ws}`)])),
    send: vi.fn(async () => {}),
    stop: vi.fn(async () => {}),
    resume: vi.fn(async () => {}),
    clear: vi.fn(async () => {}),
    setCritic: vi.fn(async (ws: string, on: boolean) => normalizeChatState({ workspaceId: ws, criticMode: on })),
    setSettings: vi.fn(async (ws: string) => normalizeChatState({ workspaceId: ws })),
    setEditing: vi.fn(async () => {}),
    answerApproval: vi.fn(async () => ({}) as never),
    ...chat,
  };
  const backend = {
    chat: api,
    subscribe: (h: (e: BackendEvent) => void) => {
      emit = h;
      return () => {};
    },
    onConnectionChange: (h: (s: ConnectionState) => void) => {
      setConn = h;
      return () => {};
    },
  } as unknown as Backend;
  const chatEvent = (data: object) => emit({ topic: 'chat', type: (data as { type: string }).type, data });
  return { backend, api, chatEvent, setConn: (s: ConnectionState) => setConn(s) };
}

describe('ChatStore', () => {
  it('keeps each workspace its own conversation', async () => {
    const { backend, chatEvent } = fakeBackend();
    const store = new ChatStore(backend, () => {});
    store.sync();
    await Promise.all([store.load('a'), store.load('b')]);
    chatEvent({ workspaceId: 'a', type: 'message_started', source: 'actor', turn: 't1' });
    chatEvent({ workspaceId: 'a', type: 'message_delta', source: 'actor', turn: 't1', text: 'for a' });
    chatEvent({ workspaceId: 'b', type: 'message_finished', source: 'user', message: msg('b', 2, 'second b') });
    expect(store.conversation('a').streaming.map((s) => s.text)).toEqual(['for a']);
    expect(store.conversation('a').messages.map((m) => m.seq)).toEqual([1]);
    expect(store.conversation('b').streaming).toEqual([]);
    expect(store.conversation('b').messages.map((m) => m.seq)).toEqual([1, 2]);
    expect(store.conversation('b').state.running).toBe(false);
    expect(store.conversation('a').state.running).toBe(true);
  });

  it('knows which other workspaces wait for a chat approval, read or not', () => {
    const { backend, chatEvent } = fakeBackend();
    const store = new ChatStore(backend, () => {});
    store.sync();
    const approval = (id: string, workspaceId: string) => ({ id, workspaceId, callId: 'c', tool: 'browser_type', args: {}, risk: 'network_write', reason: 'typing into a password field', status: 'pending', createdAt: '' });
    chatEvent({ workspaceId: 'z', type: 'approval_requested', approval: approval('q1', 'z') });
    chatEvent({ workspaceId: 'y', type: 'approval_requested', approval: approval('q2', 'y') });
    expect(store.askingElsewhere('y')).toEqual(['z']);
    expect(store.askingElsewhere(undefined).sort()).toEqual(['y', 'z']);
    chatEvent({ workspaceId: 'z', type: 'approval_resolved', approval: { ...approval('q1', 'z'), status: 'deny' } });
    chatEvent({ workspaceId: 'y', type: 'loop_stopped', reason: 'stopped' });
    expect(store.askingElsewhere(undefined)).toEqual([]);
  });

  it('ignores events of a workspace it never read, and reads it when opened', async () => {
    const { backend, api, chatEvent } = fakeBackend();
    const store = new ChatStore(backend, () => {});
    store.sync();
    chatEvent({ workspaceId: 'z', type: 'message_delta', source: 'actor', turn: 't', text: 'x' });
    expect(store.conversations.z).toBeUndefined();
    store.open('z');
    store.open('z');
    await vi.waitFor(() => expect(store.conversation('z').loaded).toBe(true));
    expect(api.get).toHaveBeenCalledTimes(1);
  });

  it('reads again when a loop stops, to learn what Resume would do', async () => {
    const { backend, api, chatEvent } = fakeBackend();
    const store = new ChatStore(backend, () => {});
    store.sync();
    await store.load('a');
    chatEvent({ workspaceId: 'a', type: 'loop_started' });
    (api.get as ReturnType<typeof vi.fn>).mockResolvedValueOnce(view('a', [msg('a', 1, 'x'), msg('a', 2, 'partial', 'actor')], { next: 'actor' }));
    chatEvent({ workspaceId: 'a', type: 'loop_stopped', reason: 'stopped', text: 'stopped by the user' });
    await vi.waitFor(() => expect(store.conversation('a').state.next).toBe('actor'));
    expect(store.conversation('a').messages.map((m) => m.seq)).toEqual([1, 2]);
    expect(store.conversation('a').stopped?.reason).toBe('stopped');
  });

  it('takes the state a stop carries without reading the conversation again', async () => {
    const { backend, api, chatEvent } = fakeBackend();
    const store = new ChatStore(backend, () => {});
    store.sync();
    await store.load('a');
    const reads = (api.get as ReturnType<typeof vi.fn>).mock.calls.length;
    chatEvent({ workspaceId: 'a', type: 'loop_started' });
    const after = { ...store.conversation('a').state, running: false, next: 'critic' as const };
    chatEvent({ workspaceId: 'a', type: 'loop_stopped', reason: 'stopped', text: 'stopped by the user', state: after });
    expect(store.conversation('a').state.next).toBe('critic');
    expect(store.conversation('a').state.running).toBe(false);
    expect(api.get).toHaveBeenCalledTimes(reads);
  });

  it('re-reads shown conversations when the connection comes back, and records failures', async () => {
    const { backend, api, setConn } = fakeBackend();
    const store = new ChatStore(backend, () => {});
    store.sync();
    await store.load('a');
    (api.get as ReturnType<typeof vi.fn>).mockRejectedValueOnce(new Error('server gone'));
    setConn('connected');
    await vi.waitFor(() => expect(store.loadErrors.a).toBe('server gone'));
    await store.load('a');
    expect(store.loadErrors.a).toBeUndefined();
  });

  it('sends the editing flag only on changes, and never after the message it belongs to', async () => {
    let release: () => void = () => {};
    const order: string[] = [];
    const { backend, api } = fakeBackend({
      setEditing: vi.fn(async (_ws: string, editing: boolean) => {
        if (editing) await new Promise<void>((r) => (release = r));
        order.push(`editing:${editing}`);
      }),
      send: vi.fn(async (_ws: string, text: string) => {
        order.push(`send:${text}`);
      }),
    });
    const store = new ChatStore(backend, () => {});
    await store.load('a');
    store.noteEditing('a', false); // the backend says false already: nothing to send
    store.noteEditing('a', true);
    store.noteEditing('a', true);
    const sent = store.send('a', 'hi', []);
    await Promise.resolve();
    expect(order).toEqual([]); // the send waits for the slow editing call
    release();
    await sent;
    expect(order).toEqual(['editing:true', 'send:hi']);
    expect(api.setEditing).toHaveBeenCalledTimes(1);
    // After a send the backend's flag is off: emptying the input sends nothing more.
    store.noteEditing('a', false);
    expect(api.setEditing).toHaveBeenCalledTimes(1);
  });

  it('rejects a failed send with the backend error', async () => {
    const { backend } = fakeBackend({ send: vi.fn(async () => Promise.reject(new Error('no provider'))) });
    const store = new ChatStore(backend, () => {});
    await expect(store.send('a', 'x', [])).rejects.toThrow('no provider');
  });
});
