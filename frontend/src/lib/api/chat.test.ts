// The chat's calls as both transports send them, read from the answers Go really gives:
// testdata/*.json is written by backend/api's TestGoldenGoalAndChatAnswers from a real engine
// whose conversation answered once.
import { describe, expect, it } from 'vitest';
import { BackendError } from './errors';
import { desktop, sentOn, web, type Golden } from './golden.fakes';
import type { ChatSettings } from './chat';
import chatView from './testdata/Chat.json';
import chatConversations from './testdata/ChatConversations.json';
import chatCreate from './testdata/ChatCreate.json';
import chatSetCritic from './testdata/ChatSetCritic.json';
import answerApproval from './testdata/AnswerApproval.json';

const golden: Golden = {
  Chat: chatView,
  ChatConversations: chatConversations,
  ChatCreate: chatCreate,
  ChatRename: chatSetCritic,
  ChatSetCritic: chatSetCritic,
  ChatSetSettings: chatSetCritic,
  ChatAnswerApproval: answerApproval,
};

const settings: ChatSettings = {
  provider: 'prov-1',
  model: 'big',
  persona: 'engineer',
  skills: ['tdd'],
  criticProvider: '',
  iterationCap: 4,
  askAbove: 'write_local',
};

describe('the chat calls on both transports', () => {
  it('sends each chat call as its name and one JSON object of arguments, alike on both doors', async () => {
    const d = desktop(golden);
    const w = web(golden);
    for (const { chat } of [d.api, w.api]) {
      await chat.list('ws-1');
      await chat.create('ws-1', { title: 'Deploy notes' });
      await chat.create('ws-1', { settings });
      await chat.rename('chat-1', 'Deploy');
      await chat.remove('chat-1');
      await chat.get('chat-1');
      await chat.send('chat-1', 'hello', [{ mediaType: 'image/png', data: 'AAEC' }]);
      await chat.stop('chat-1');
      await chat.resume('chat-1');
      await chat.clear('chat-1');
      await chat.setCritic('chat-1', true);
      await chat.setSettings('chat-1', settings);
      await chat.setEditing('chat-1', true);
      await chat.answerApproval('appr-1', 'allow_once', '');
    }
    const want = [
      ['ChatConversations', { workspaceId: 'ws-1' }],
      ['ChatCreate', { workspaceId: 'ws-1', input: { title: 'Deploy notes' } }],
      ['ChatCreate', { workspaceId: 'ws-1', input: { title: '', settings } }],
      ['ChatRename', { conversationId: 'chat-1', title: 'Deploy' }],
      ['ChatDelete', { conversationId: 'chat-1' }],
      ['Chat', { conversationId: 'chat-1' }],
      ['ChatSend', { conversationId: 'chat-1', text: 'hello', images: [{ mediaType: 'image/png', data: 'AAEC' }] }],
      ['ChatStop', { conversationId: 'chat-1' }],
      ['ChatResume', { conversationId: 'chat-1' }],
      ['ChatClear', { conversationId: 'chat-1' }],
      ['ChatSetCritic', { conversationId: 'chat-1', on: true }],
      ['ChatSetSettings', { conversationId: 'chat-1', settings }],
      ['ChatSetEditing', { conversationId: 'chat-1', editing: true }],
      ['ChatAnswerApproval', { id: 'appr-1', status: 'allow_once', reason: '' }],
    ];
    const sent = sentOn(d, w);
    // The desktop's binding gets the object itself; undefined settings never reach the wire.
    expect(JSON.parse(JSON.stringify(sent.desktop))).toEqual(want);
    expect(sent.web).toEqual(want);
  });

  it("reads Go's real answers into the chat panel's types", async () => {
    for (const { api } of [desktop(golden), web(golden)]) {
      const [first] = await api.chat.list('ws-0');
      expect(first).toMatchObject({ conversationId: 'chat-0', workspaceId: 'ws-0', messages: 0, running: false });
      expect(first.settings).toMatchObject({ askAbove: 'read_only', iterationCap: 10, skills: [] });

      const view = await api.chat.get('chat-0');
      expect(view.messages.map((m) => [m.source, m.message.role, m.message.parts[0]])).toEqual([
        ['user', 'user', { kind: 'text', text: 'Hello' }],
        ['actor', 'assistant', { kind: 'text', text: 'Hello! How can I help?' }],
      ]);
      // Go omits `partial` when false; the UI's type has it.
      expect(view.messages.map((m) => m.partial)).toEqual([false, false]);
      expect(view.state).toMatchObject({ running: false, queued: 0, approvals: [], criticMode: false });

      expect((await api.chat.setCritic('chat-0', true)).criticMode).toBe(true);
      expect((await api.chat.create('ws-0', { title: 'Deploy notes' })).conversationId).toBe('chat-0');
    }
  });

  it('turns a message that could not be sent into a BackendError with its field, alike on both doors', async () => {
    const refusal = { status: 409, body: { error: 'the message was not sent: no provider: add one in Settings → Providers', field: 'provider', text: 'hello' } };
    for (const { api } of [desktop(golden, refusal), web(golden, refusal)]) {
      const err = await api.chat.send('chat-0', 'hello', []).catch((e) => e);
      expect(err).toBeInstanceOf(BackendError);
      expect(err.message).toBe(refusal.body.error);
      expect(err.field).toBe('provider');
    }
  });
});
