import { describe, expect, it } from 'vitest';
import type { ChatMessage, ChatPart } from '../../lib/api';
import { emptyConversation, type Conversation } from '../../lib/state/chatFold';
import { chatItems } from './items';

function m(seq: number, source: ChatMessage['source'], parts: ChatPart[], role: ChatMessage['message']['role'] = 'assistant', partial = false): ChatMessage {
  return { conversationId: 'w', workspaceId: 'w', seq, source, message: { role, parts }, partial, createdAt: '' };
}
const text = (t: string): ChatPart => ({ kind: 'text', text: t });

function conv(over: Partial<Conversation>): Conversation {
  return { ...emptyConversation('w'), loaded: true, ...over };
}

describe('chatItems', () => {
  it('pairs tool calls with their stored results and hides the tool message itself', () => {
    const img = { mediaType: 'image/png', data: 'iVBO' };
    const items = chatItems(
      conv({
        messages: [
          m(1, 'user', [text('look'), { kind: 'image', image: img }], 'user'),
          m(2, 'actor', [
            { kind: 'reasoning', text: 'plan' },
            text('Looking.'),
            { kind: 'tool_call', toolCall: { id: 'c1', name: 'browser_screenshot', args: { pane_id: 'p1' } } },
          ]),
          m(3, 'actor', [{ kind: 'tool_result', toolResult: { callId: 'c1', name: 'browser_screenshot', text: 'shot', images: [img] } }], 'tool'),
          m(4, 'actor', [text('Done.')]),
        ],
        tools: { c1: { callId: 'c1', name: 'browser_screenshot', args: {}, running: false, durationMs: 40 } },
      }),
    );
    expect(items.map((i) => i.kind + ':' + i.key)).toEqual(['message:m-1', 'message:m-2', 'message:m-4']);
    const [user, actor] = items;
    expect(user.kind === 'message' && user.images).toEqual([img]);
    if (actor.kind !== 'message') throw new Error('not a message');
    expect(actor.reasoning).toBe('plan');
    expect(actor.text).toBe('Looking.');
    expect(actor.calls).toEqual([
      { callId: 'c1', name: 'browser_screenshot', args: { pane_id: 'p1' }, argsError: undefined, result: { text: 'shot', isError: false, images: [img] }, running: false, durationMs: 40 },
    ]);
  });

  it('shows a running call, then its live result before the tool message is stored', () => {
    const call = m(1, 'actor', [{ kind: 'tool_call', toolCall: { id: 'c1', name: 't', rawArgs: '{bad', argsError: 'not JSON' } }]);
    let items = chatItems(conv({ messages: [call], tools: { c1: { callId: 'c1', name: 't', args: {}, running: true } } }));
    let view = items[0].kind === 'message' ? items[0].calls[0] : undefined;
    expect(view).toMatchObject({ running: true, result: undefined, args: '{bad', argsError: 'not JSON' });
    items = chatItems(conv({ messages: [call], tools: { c1: { callId: 'c1', name: 't', args: {}, running: false, result: 'boom', isError: true } } }));
    view = items[0].kind === 'message' ? items[0].calls[0] : undefined;
    expect(view).toMatchObject({ running: false, result: { text: 'boom', isError: true, images: [] } });
  });

  it('turns the critic /done into a marker, notes into notes, and keeps feedback as a critic message', () => {
    const items = chatItems(
      conv({
        messages: [
          m(1, 'user', [text('write')], 'user'),
          m(2, 'actor', [text('draft')]),
          m(3, 'critic', [text('add a title')]),
          m(4, 'actor', [text('titled draft')]),
          m(5, 'critic', [{ kind: 'reasoning', text: 'fine now' }, text(' /done\n')]),
          m(6, 'note', [text('Stopped: the critic reviewed 10 times')]),
        ],
        verdicts: { 3: { done: false, seq: 3, iteration: 1, cap: 10 }, 5: { done: true, seq: 5, iteration: 2, cap: 10 } },
      }),
    );
    expect(items.map((i) => (i.kind === 'message' ? `${i.source}` : i.kind))).toEqual(['user', 'actor', 'critic', 'actor', 'done', 'note']);
    expect(items[2].kind === 'message' && items[2].verdict?.iteration).toBe(1);
    expect(items[4]).toMatchObject({ kind: 'done', reasoning: 'fine now', verdict: { iteration: 2 } });
    expect(items[5]).toMatchObject({ kind: 'note', text: 'Stopped: the critic reviewed 10 times' });
  });

  it('places notices where they arrived and streaming replies last', () => {
    const items = chatItems(
      conv({
        messages: [m(1, 'user', [text('a')], 'user'), m(2, 'actor', [text('b')])],
        notices: [
          { id: 7, text: 'trimmed', afterSeq: 1 },
          { id: 8, text: 'later', afterSeq: 9 },
        ],
        streaming: [{ turn: 't', source: 'critic', text: 'review…', reasoning: '' }],
      }),
    );
    expect(items.map((i) => i.key)).toEqual(['m-1', 'notice-7', 'm-2', 'notice-8', 'turn-t']);
    expect(items[4]).toMatchObject({ kind: 'message', source: 'critic', streaming: true, text: 'review…' });
  });

  it('shows results whose call is missing rather than hiding them', () => {
    const items = chatItems(
      conv({ messages: [m(1, 'actor', [{ kind: 'tool_result', toolResult: { callId: 'x', name: 'gone', text: 'interrupted', isError: true } }], 'tool')] }),
    );
    expect(items).toMatchObject([{ kind: 'results', calls: [{ name: 'gone', result: { text: 'interrupted', isError: true } }] }]);
  });
});
