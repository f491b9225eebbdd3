import { describe, expect, it, vi } from 'vitest';
import {
  normalizeChatConversation,
  normalizeChatState,
  type Backend,
  type ChatApi,
  type ChatConversation,
  type ChatMessage,
  type ChatView,
  type TestResult,
} from '../api';
import { fakeChatApi } from '../api/chat.fixture';
import { ChatStore } from './chat.svelte';
import { fakeLive } from './live.fixture';

function msg(ws: string, seq: number, text: string, source: ChatMessage['source'] = 'user'): ChatMessage {
  return { conversationId: ws, workspaceId: ws, seq, source, message: { role: 'user', parts: [{ kind: 'text', text }] }, partial: false, createdAt: '' };
}

function view(ws: string, messages: ChatMessage[], over = {}): ChatView {
  return { messages, state: normalizeChatState({ workspaceId: ws, ...over }) };
}

function conversation(id: string, ws = 'w', over: Partial<ChatConversation> = {}): ChatConversation {
  return { ...normalizeChatConversation({ conversationId: id, workspaceId: ws }), ...over };
}

// In the older tests below one id names both a workspace and its conversation: events carry
// the workspace's id as their conversation's unless they say otherwise.
function fakeBackend(chat: Partial<ChatApi> = {}, testProvider?: (id: string) => Promise<TestResult>) {
  const live = fakeLive();
  const api = fakeChatApi({
    list: vi.fn(async (ws: string) => [conversation(`${ws}-c1`, ws)]),
    rename: vi.fn(async (id: string, title: string) => normalizeChatState({ conversationId: id, workspaceId: 'w', title })),
    get: vi.fn(async (ws: string) => view(ws, [msg(ws, 1, `hello ${ws}`)])),
    ...chat,
  });
  const backend = {
    chat: api,
    testProvider: testProvider ?? (async () => ({ ok: true, message: '', latencyMs: 1, models: [] })),
    ...live.backend,
  } as unknown as Backend;
  const chatEvent = (data: object) => {
    const d = data as { type: string; workspaceId: string; conversationId?: string };
    live.emit({ topic: 'chat', type: d.type, data: { ...d, conversationId: d.conversationId ?? d.workspaceId } });
  };
  return { backend, api, chatEvent, setConn: live.setConn };
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

  it("reads a workspace's list, shows the newest conversation, and keeps each conversation its own history", async () => {
    const { backend, api, chatEvent } = fakeBackend({
      list: vi.fn(async () => [conversation('c2', 'w', { title: 'Deploy' }), conversation('c1', 'w', { title: 'Build' })]),
      get: vi.fn(async (id: string) => view(id, [msg(id, 1, `only in ${id}`)])),
    });
    const store = new ChatStore(backend, () => {});
    store.sync();
    store.openWorkspace('w');
    await vi.waitFor(() => expect(store.conversation('c2').loaded).toBe(true));
    expect(store.selectedIn('w')).toBe('c2');
    expect(store.list('w').map((c) => c.title)).toEqual(['Deploy', 'Build']);
    // c1 is not shown yet: its events wait for its first read.
    chatEvent({ workspaceId: 'w', conversationId: 'c1', type: 'message_finished', source: 'user', message: msg('c1', 2, 'early') });
    expect(store.conversations.c1).toBeUndefined();
    store.select('w', 'c1');
    await vi.waitFor(() => expect(store.conversation('c1').loaded).toBe(true));
    chatEvent({ workspaceId: 'w', conversationId: 'c2', type: 'message_started', source: 'actor', turn: 't' });
    chatEvent({ workspaceId: 'w', conversationId: 'c2', type: 'message_delta', source: 'actor', turn: 't', text: 'for c2' });
    expect(store.conversation('c1').messages.map((m) => m.message.parts[0])).toEqual([{ kind: 'text', text: 'only in c1' }]);
    expect(store.conversation('c1').streaming).toEqual([]);
    expect(store.conversation('c2').streaming.map((s) => s.text)).toEqual(['for c2']);
    expect(store.conversation('c1').state.running).toBe(false);
    expect(api.list).toHaveBeenCalledTimes(1);
  });

  it('takes the list an event carries, moving the panel off a conversation deleted elsewhere', async () => {
    const { backend, chatEvent } = fakeBackend({ list: vi.fn(async () => [conversation('c2'), conversation('c1')]) });
    const store = new ChatStore(backend, () => {});
    store.sync();
    await store.loadList('w');
    expect(store.selectedIn('w')).toBe('c2');
    chatEvent({ workspaceId: 'w', type: 'conversations_changed', conversations: [conversation('c1', 'w', { title: 'Kept', running: true })] });
    expect(store.selectedIn('w')).toBe('c1');
    expect(store.list('w')[0]).toMatchObject({ title: 'Kept', running: true });
    // A workspace whose list was never read ignores it: its first read has it all.
    chatEvent({ workspaceId: 'other', type: 'conversations_changed', conversations: [conversation('x', 'other')] });
    expect(store.lists.other).toBeUndefined();
  });

  it('starts, renames and deletes conversations, showing the next one after a delete', async () => {
    const lists = [[conversation('c1', 'w', { messages: 3 })], [conversation('fresh')]];
    const { backend, api } = fakeBackend({ list: vi.fn(async () => lists.shift() ?? []) });
    const store = new ChatStore(backend, () => {});
    await store.loadList('w');
    const made = await store.create('w', { title: 'Second' });
    expect(api.create).toHaveBeenCalledWith('w', { title: 'Second' });
    expect(store.selectedIn('w')).toBe(made.conversationId);
    expect(store.list('w').map((c) => c.conversationId)).toEqual([made.conversationId, 'c1']);
    await store.rename('c1', 'Build log');
    expect(store.list('w').find((c) => c.conversationId === 'c1')?.title).toBe('Build log');
    await store.remove('w', made.conversationId);
    expect(api.remove).toHaveBeenCalledWith(made.conversationId);
    expect(store.selectedIn('w')).toBe('c1');
    // Deleting the last one: the backend starts a fresh conversation, which the panel shows.
    await store.remove('w', 'c1');
    expect(store.selectedIn('w')).toBe('fresh');
  });

  it("lists a provider's models for the picker, and rejects with the provider's message", async () => {
    const test = vi.fn(async (id: string): Promise<TestResult> =>
      id === 'p1' ? { ok: true, message: 'connected', latencyMs: 3, models: ['small-1b', 'big-70b'] } : { ok: false, message: 'key refused', latencyMs: 3 },
    );
    const { backend } = fakeBackend({}, test);
    const store = new ChatStore(backend, () => {});
    await expect(store.listModels('p1')).resolves.toEqual(['small-1b', 'big-70b']);
    expect(store.models.p1).toEqual(['small-1b', 'big-70b']);
    await expect(store.listModels('p2')).rejects.toThrow('key refused');
  });

  it('knows a workspace waits for an approval from any of its conversations', async () => {
    const { backend, chatEvent } = fakeBackend({ list: vi.fn(async () => [conversation('c2'), conversation('c1')]) });
    const store = new ChatStore(backend, () => {});
    store.sync();
    await store.loadList('w');
    expect(store.waitingIn('w')).toBe(false);
    const approval = { id: 'q1', workspaceId: 'w', conversationId: 'c1', callId: 'c', tool: 'http_post', args: {}, risk: 'network_write', reason: 'r', status: 'pending', createdAt: '' };
    chatEvent({ workspaceId: 'w', conversationId: 'c1', type: 'approval_requested', approval });
    expect(store.waitingIn('w')).toBe(true);
    // Another conversation of the workspace stopping leaves c1's question open.
    chatEvent({ workspaceId: 'w', conversationId: 'c2', type: 'loop_stopped', reason: 'done' });
    expect(store.waitingIn('w')).toBe(true);
    chatEvent({ workspaceId: 'w', conversationId: 'c1', type: 'loop_stopped', reason: 'stopped' });
    expect(store.waitingIn('w')).toBe(false);
  });
});
