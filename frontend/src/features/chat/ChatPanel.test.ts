// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import {
  BackendError,
  normalizeChatConversation,
  normalizeChatState,
  type Backend,
  type ChatApi,
  type ChatMessage,
  type ChatState,
  type Provider,
} from '../../lib/api';
import { fakeChatApi } from '../../lib/api/chat.fixture';
import { createAppContext } from '../../lib/state/context';
import { fakeLive } from '../../lib/state/live.fixture';
import Harness from './ChatPanelHarness.test.svelte';

const WS = 'ws-1';

function msg(seq: number, source: ChatMessage['source'], text: string): ChatMessage {
  return { conversationId: WS, workspaceId: WS, seq, source, message: { role: source === 'user' ? 'user' : 'assistant', parts: [{ kind: 'text', text }] }, partial: false, createdAt: '' };
}

/** An app context whose backend has the chat calls, no providers and a fake live connection; chat synced. */
function chatContext(chat: ChatApi, live: ReturnType<typeof fakeLive>) {
  const backend = {
    kind: 'web',
    chat,
    listProviders: vi.fn(async () => ({ providers: [], defaultId: '', criticDefaultId: '', secretsBackend: 'file' })),
    ...live.backend,
  } as unknown as Backend;
  const ctx = createAppContext(backend);
  ctx.chat.sync();
  return ctx;
}

function setup(opts: { state?: Partial<ChatState>; messages?: ChatMessage[]; chat?: Partial<ChatApi> } = {}) {
  const live = fakeLive();
  // The workspace's one conversation has the workspace's id, so events name both alike.
  const chat = fakeChatApi({
    create: vi.fn(async (ws: string) => normalizeChatConversation({ conversationId: 'c-new', workspaceId: ws })),
    rename: vi.fn(async (id: string, title: string) => normalizeChatState({ conversationId: id, workspaceId: WS, title })),
    get: vi.fn(async (ws: string) => ({ messages: opts.messages ?? [], state: normalizeChatState({ workspaceId: ws, ...opts.state }) })),
    ...opts.chat,
  });
  const ctx = chatContext(chat, live);
  render(Harness, { ctx, workspaceId: WS });
  const chatEvent = (data: object) => live.emit({ topic: 'chat', type: (data as { type: string }).type, data: { workspaceId: WS, conversationId: WS, ...data } });
  return { ctx, chat, chatEvent };
}

const input = () => screen.getByTestId('chat-input') as HTMLTextAreaElement;

async function loaded() {
  await vi.waitFor(() => expect(screen.queryByText('Loading the conversation…')).toBeNull());
}

describe('ChatPanel input', () => {
  it('sends on Enter and empties the input', async () => {
    const { chat } = setup();
    await loaded();
    await fireEvent.input(input(), { target: { value: 'hello there' } });
    await fireEvent.keyDown(input(), { key: 'Enter' });
    await vi.waitFor(() => expect(chat.send).toHaveBeenCalledWith(WS, 'hello there', []));
    expect(input().value).toBe('');
  });

  it('puts the text back and shows the error when the send is refused', async () => {
    const { chat } = setup({
      chat: { send: vi.fn(async () => Promise.reject(new BackendError('the message was not sent: no provider is set up'))) },
    });
    await loaded();
    await fireEvent.input(input(), { target: { value: 'keep me' } });
    await fireEvent.click(screen.getByTestId('chat-send'));
    await vi.waitFor(() => expect(screen.getByTestId('chat-send-error').textContent).toContain('no provider is set up'));
    expect(chat.send).toHaveBeenCalledTimes(1);
    expect(input().value).toBe('keep me');
  });

  it('says when critic mode is on, with the critic placeholder', async () => {
    const { chatEvent } = setup();
    await loaded();
    expect(screen.queryByTestId('chat-critic-badge')).toBeNull();
    expect(input().placeholder).not.toBe('Critic instructions…');
    chatEvent({ type: 'state', state: normalizeChatState({ workspaceId: WS, criticMode: true }) });
    await vi.waitFor(() => expect(screen.getByTestId('chat-critic-badge').textContent).toBe('Critic mode active'));
    expect(input().placeholder).toBe('Critic instructions…');
  });

  it('tells the backend about an edit while the critic loop runs, and when it is emptied', async () => {
    const { chat } = setup({ state: { criticMode: true, running: true } });
    await loaded();
    await fireEvent.input(input(), { target: { value: 'wait, also' } });
    await vi.waitFor(() => expect(chat.setEditing).toHaveBeenCalledWith(WS, true));
    await fireEvent.input(input(), { target: { value: 'wait, also more' } });
    await fireEvent.input(input(), { target: { value: '' } });
    await vi.waitFor(() => expect(chat.setEditing).toHaveBeenLastCalledWith(WS, false));
    expect(chat.setEditing).toHaveBeenCalledTimes(2);
  });

  it('does not flag an edit outside critic mode', async () => {
    const { chat } = setup({ state: { criticMode: false, running: true } });
    await loaded();
    await fireEvent.input(input(), { target: { value: 'typing' } });
    await new Promise((r) => setTimeout(r, 20));
    expect(chat.setEditing).not.toHaveBeenCalled();
  });
});

describe('ChatPanel conversation', () => {
  it('streams a reply, then shows the stored message with its badge', async () => {
    const { chatEvent } = setup({ messages: [msg(1, 'user', 'hi')] });
    await loaded();
    chatEvent({ type: 'loop_started', source: 'actor' });
    chatEvent({ type: 'message_started', source: 'actor', turn: 't1' });
    chatEvent({ type: 'message_delta', source: 'actor', turn: 't1', text: 'Hel' });
    chatEvent({ type: 'message_delta', source: 'actor', turn: 't1', text: 'lo **there**' });
    await vi.waitFor(() => expect(screen.getByTestId('chat-streaming')).toBeTruthy());
    expect(screen.getByTestId('chat-stop')).toBeTruthy();
    const streaming = screen.getAllByTestId('chat-message').find((m) => m.dataset.streaming === 'true')!;
    expect(streaming.querySelector('strong')?.textContent).toBe('there');
    chatEvent({ type: 'message_finished', source: 'actor', turn: 't1', message: msg(2, 'actor', 'Hello **there**') });
    chatEvent({ type: 'loop_stopped', reason: 'done' });
    await vi.waitFor(() => expect(screen.queryByTestId('chat-stop')).toBeNull());
    const badges = screen.getAllByTestId('chat-badge').map((b) => b.textContent);
    expect(badges).toEqual(['You', 'Actor']);
  });

  it('stops the loop with the Stop button', async () => {
    const { chat } = setup({ state: { running: true, turn: 'actor' } });
    await loaded();
    await fireEvent.click(screen.getByTestId('chat-stop'));
    expect(chat.stop).toHaveBeenCalledWith(WS);
  });

  it('offers Resume when something is due and nothing runs', async () => {
    const { chat } = setup({ state: { next: 'critic' }, messages: [msg(1, 'user', 'a'), msg(2, 'actor', 'b')] });
    await vi.waitFor(() => expect(screen.getByTestId('chat-resume').textContent).toContain('critic review'));
    await fireEvent.click(screen.getByTestId('chat-resume'));
    expect(chat.resume).toHaveBeenCalledWith(WS);
  });

  it('clears only after the confirmation', async () => {
    const { chat } = setup({ messages: [msg(1, 'user', 'a')] });
    await loaded();
    await fireEvent.click(screen.getByTestId('chat-clear'));
    await fireEvent.click(screen.getByTestId('confirm-cancel'));
    expect(chat.clear).not.toHaveBeenCalled();
    await fireEvent.click(screen.getByTestId('chat-clear'));
    await fireEvent.click(screen.getByTestId('confirm-ok'));
    await vi.waitFor(() => expect(chat.clear).toHaveBeenCalledWith(WS));
  });

  it('shows the model text escaped', async () => {
    setup({ messages: [msg(1, 'actor', 'try <img src=x onerror=alert(1)> and `<b>`')] });
    await loaded();
    const text = screen.getByTestId('chat-text');
    expect(text.querySelector('img')).toBeNull();
    expect(text.textContent).toContain('<img src=x onerror=alert(1)>');
  });
});

describe('ChatPanel settings', () => {
  it('offers the saved providers for the actor and the critic, and saves each choice in its own field', async () => {
    const { ctx, chat } = setup({ state: { settings: { ...normalizeChatState({}).settings, criticProvider: 'gone' } } });
    await loaded();
    const provider = (id: string, name: string) => ({ id, name, model: `${id}-model`, updatedAt: '2025-01-01T00:00:00Z' }) as Provider;
    ctx.providers.applyList({ providers: [provider('p1', 'One'), provider('p2', 'Two')], defaultId: 'p1', criticDefaultId: 'p1', secretsBackend: 'file' });
    await fireEvent.click(screen.getByTestId('chat-settings-toggle'));
    const actor = (await screen.findByTestId('chat-provider')) as HTMLSelectElement;
    const critic = screen.getByTestId('chat-critic-provider') as HTMLSelectElement;
    const labels = (sel: HTMLSelectElement) => [...sel.options].map((o) => o.textContent);
    expect(labels(actor)).toEqual(['Default (One)', 'One · p1-model', 'Two · p2-model']);
    // A critic provider that is no longer saved still shows, as what is chosen.
    expect(labels(critic)).toEqual(['Same as the actor', 'One · p1-model', 'Two · p2-model', 'gone']);
    expect(critic.value).toBe('gone');
    await fireEvent.change(actor, { target: { value: 'p2' } });
    await vi.waitFor(() => expect(chat.setSettings).toHaveBeenCalledWith(WS, expect.objectContaining({ provider: 'p2', criticProvider: 'gone' })));
    await fireEvent.change(critic, { target: { value: 'p1' } });
    await vi.waitFor(() => expect(chat.setSettings).toHaveBeenLastCalledWith(WS, expect.objectContaining({ criticProvider: 'p1' })));
  });
});

describe('ChatPanel workspaces', () => {
  it('shows each workspace its own conversation and keeps each one its draft', async () => {
    const live = fakeLive();
    const chat = fakeChatApi({
      get: vi.fn(async (ws: string) => ({ messages: [{ ...msg(1, 'user', `only in ${ws}`), workspaceId: ws }], state: normalizeChatState({ workspaceId: ws }) })),
    });
    const ctx = chatContext(chat, live);
    const { rerender } = render(Harness, { ctx, workspaceId: 'one' });
    await vi.waitFor(() => expect(screen.getByTestId('chat-text').textContent).toBe('only in one'));
    await fireEvent.input(input(), { target: { value: 'draft for one' } });

    await rerender({ ctx, workspaceId: 'two' });
    await vi.waitFor(() => expect(screen.getByTestId('chat-text').textContent).toBe('only in two'));
    expect(input().value).toBe('');
    // An event of the other workspace does not show here.
    live.emit({ topic: 'chat', type: 'message_finished', data: { workspaceId: 'one', conversationId: 'one', type: 'message_finished', source: 'user', message: { ...msg(2, 'user', 'late for one'), workspaceId: 'one' } } });
    await new Promise((r) => setTimeout(r, 10));
    expect(screen.getAllByTestId('chat-text').map((e) => e.textContent)).toEqual(['only in two']);

    await rerender({ ctx, workspaceId: 'one' });
    await vi.waitFor(() => expect(screen.getAllByTestId('chat-text').map((e) => e.textContent)).toEqual(['only in one', 'late for one']));
    expect(input().value).toBe('draft for one');
  });
});

describe('ChatPanel conversations', () => {
  it('starts a conversation and switches between them, each with its own messages', async () => {
    const convs = [normalizeChatConversation({ conversationId: 'c1', workspaceId: WS, title: 'Build', messages: 1 })];
    const { chat, ctx } = setup({
      chat: {
        list: vi.fn(async () => convs),
        create: vi.fn(async () => normalizeChatConversation({ conversationId: 'c2', workspaceId: WS })),
        get: vi.fn(async (id: string) => ({
          messages: id === 'c1' ? [{ ...msg(1, 'user', 'about the build'), conversationId: 'c1' }] : [],
          state: normalizeChatState({ conversationId: id, workspaceId: WS }),
        })),
      },
    });
    await vi.waitFor(() => expect(screen.getByTestId('chat-text').textContent).toBe('about the build'));
    expect(screen.getByTestId('chat-conversation-title').textContent).toBe('Build');
    await fireEvent.click(screen.getByTestId('chat-new'));
    await vi.waitFor(() => expect(screen.queryByTestId('chat-text')).toBeNull());
    expect(screen.getByTestId('chat-panel').dataset.conversation).toBe('c2');
    expect(screen.getByTestId('chat-conversation-title').textContent).toBe('New conversation');
    expect(chat.create).toHaveBeenCalledWith(WS, {});
    await fireEvent.click(screen.getByTestId('chat-conversation-toggle'));
    const picks = screen.getAllByTestId('chat-conversation-pick');
    expect(picks.map((p) => p.textContent?.trim())).toEqual(['New conversation', 'Build']);
    await fireEvent.click(picks[1]);
    await vi.waitFor(() => expect(screen.getByTestId('chat-text').textContent).toBe('about the build'));
    expect(ctx.chat.selectedIn(WS)).toBe('c1');
  });

  it('asks before deleting a conversation that has messages, and renames in place', async () => {
    const { chat, ctx } = setup({
      chat: {
        list: vi.fn(async () => [
          normalizeChatConversation({ conversationId: 'c1', workspaceId: WS, title: 'Build', messages: 4 }),
          normalizeChatConversation({ conversationId: 'c0', workspaceId: WS, title: 'Old' }),
        ]),
      },
    });
    await vi.waitFor(() => expect(screen.getByTestId('chat-conversation-title').textContent).toBe('Build'));
    await fireEvent.click(screen.getByTestId('chat-conversation-toggle'));
    await fireEvent.click(screen.getAllByTestId('chat-rename')[0]);
    const title = screen.getByTestId('chat-rename-input') as HTMLInputElement;
    await fireEvent.input(title, { target: { value: 'Build log' } });
    await fireEvent.keyDown(title, { key: 'Enter' });
    await vi.waitFor(() => expect(chat.rename).toHaveBeenCalledWith('c1', 'Build log'));
    await vi.waitFor(() => expect(screen.queryByTestId('chat-rename-input')).toBeNull());

    const asked = vi.spyOn(ctx.dialogs, 'confirm').mockResolvedValueOnce(false).mockResolvedValueOnce(true);
    await fireEvent.click(screen.getAllByTestId('chat-delete')[0]);
    await vi.waitFor(() => expect(asked).toHaveBeenCalledTimes(1));
    expect(asked.mock.calls[0][0].message).toContain('4 messages');
    expect(chat.remove).not.toHaveBeenCalled();
    await fireEvent.click(screen.getAllByTestId('chat-delete')[0]);
    await vi.waitFor(() => expect(chat.remove).toHaveBeenCalledWith('c1'));
    await vi.waitFor(() => expect(ctx.chat.selectedIn(WS)).toBe('c0'));
    // An empty conversation goes without asking (the list stays open).
    await fireEvent.click(screen.getAllByTestId('chat-delete')[0]);
    await vi.waitFor(() => expect(chat.remove).toHaveBeenCalledWith('c0'));
    expect(asked).toHaveBeenCalledTimes(2);
  });
});
