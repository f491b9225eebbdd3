import { describe, expect, it } from 'vitest';
import { normalizeChatState, type ChatEvent, type ChatMessage, type ChatState } from '../api';
import { applyView, emptyConversation, foldEvent, mergeMessages, readMark, type Conversation } from './chatFold';

const WS = 'ws-1';

function msg(seq: number, source: ChatMessage['source'], text: string, over: Partial<ChatMessage> = {}): ChatMessage {
  return {
    conversationId: WS,
    workspaceId: WS,
    seq,
    source,
    message: { role: source === 'user' ? 'user' : 'assistant', parts: [{ kind: 'text', text }] },
    partial: false,
    createdAt: '2025-01-01T00:00:00Z',
    ...over,
  };
}

function state(over: Partial<ChatState> = {}): ChatState {
  return { ...normalizeChatState({ workspaceId: WS }), ...over };
}

function ev(type: string, over: Partial<ChatEvent> = {}): ChatEvent {
  return { workspaceId: WS, type, at: '', ...over };
}

function fold(c: Conversation, ...events: ChatEvent[]): Conversation {
  return events.reduce(foldEvent, c);
}

function loaded(messages: ChatMessage[] = [], st: Partial<ChatState> = {}): Conversation {
  const c = emptyConversation(WS);
  return applyView(c, { messages, state: state(st) }, readMark(c)).conversation;
}

describe('foldEvent: streaming', () => {
  it('appends deltas to the streaming message of their turn, reasoning apart', () => {
    const c = fold(
      loaded([msg(1, 'user', 'hi')]),
      ev('loop_started', { source: 'actor' }),
      ev('message_started', { source: 'actor', turn: 't1' }),
      ev('message_delta', { source: 'actor', turn: 't1', text: 'think ', reasoning: true }),
      ev('message_delta', { source: 'actor', turn: 't1', text: 'Hel' }),
      ev('message_delta', { source: 'actor', turn: 't1', text: 'lo' }),
      ev('message_delta', { source: 'actor', turn: 't1', text: 'more', reasoning: true }),
    );
    expect(c.streaming).toEqual([{ turn: 't1', source: 'actor', text: 'Hello', reasoning: 'think more' }]);
    expect(c.state.running).toBe(true);
    expect(c.state.turn).toBe('actor');
    expect(c.messages).toHaveLength(1);
  });

  it('replaces the streaming message with the stored one when it finishes', () => {
    const c = fold(
      loaded([msg(1, 'user', 'hi')]),
      ev('message_started', { source: 'actor', turn: 't1' }),
      ev('message_delta', { source: 'actor', turn: 't1', text: 'Hello' }),
      ev('message_started', { source: 'critic', turn: 't0' }), // another turn's stream is left alone
      ev('message_finished', { source: 'actor', turn: 't1', message: msg(2, 'actor', 'Hello') }),
    );
    expect(c.streaming.map((s) => s.turn)).toEqual(['t0']);
    expect(c.messages.map((m) => m.seq)).toEqual([1, 2]);
    expect(c.messages[1].message.parts).toEqual([{ kind: 'text', text: 'Hello' }]);
  });

  it('drops a stream that finished with nothing stored, and starts one from a delta whose start was missed', () => {
    let c = fold(loaded(), ev('message_started', { source: 'critic', turn: 't1' }), ev('message_finished', { source: 'critic', turn: 't1' }));
    expect(c.streaming).toEqual([]);
    expect(c.messages).toEqual([]);
    c = fold(c, ev('message_delta', { source: 'critic', turn: 't2', text: 'late' }));
    expect(c.streaming).toEqual([{ turn: 't2', source: 'critic', text: 'late', reasoning: '' }]);
  });

  it('stores each message once, in seq order, whatever order they arrive in', () => {
    const c = fold(
      loaded([msg(1, 'user', 'a')]),
      ev('message_finished', { source: 'actor', message: msg(3, 'actor', 'c') }),
      ev('message_finished', { source: 'user', message: msg(2, 'user', 'b') }),
      ev('message_finished', { source: 'actor', message: msg(3, 'actor', 'c') }),
    );
    expect(c.messages.map((m) => m.seq)).toEqual([1, 2, 3]);
  });
});

describe('foldEvent: the loop and its state', () => {
  it('follows a loop from start to stop, with tools, verdicts and notices', () => {
    const c = fold(
      loaded([msg(1, 'user', 'hi')], { next: 'actor' }),
      ev('loop_started', { source: 'actor' }),
      ev('tool_started', { tool: { callId: 'c1', name: 'read_terminal', args: { pane_id: 'p' } } }),
      ev('tool_finished', { tool: { callId: 'c1', name: 'read_terminal', args: { pane_id: 'p' }, result: 'ok', durationMs: 12 } }),
      ev('message_finished', { source: 'critic', message: msg(2, 'critic', 'fix it') }),
      ev('critic_verdict', { source: 'critic', verdict: { done: false, seq: 2, iteration: 1, cap: 10 } }),
      ev('notice', { text: 'history trimmed' }),
      ev('loop_stopped', { reason: 'iteration_cap', text: 'Stopped: cap' }),
    );
    expect(c.tools.c1).toMatchObject({ running: false, result: 'ok', durationMs: 12 });
    expect(c.verdicts[2]).toEqual({ done: false, seq: 2, iteration: 1, cap: 10 });
    expect(c.notices.map((n) => [n.text, n.afterSeq])).toEqual([['history trimmed', 2]]);
    expect(c.state.running).toBe(false);
    expect(c.state.turn).toBeUndefined();
    expect(c.stopped).toEqual({ reason: 'iteration_cap', text: 'Stopped: cap' });
    // A new loop forgets why the last one stopped.
    expect(fold(c, ev('loop_started')).stopped).toBeUndefined();
  });

  it('shows the loop guard\'s decisions as notices, and its halt as why the loop stopped', () => {
    const block = 'GUARD: blocked read_file — you made this exact call 3 times and got the same result each time.';
    const c = fold(
      loaded([msg(1, 'user', 'hi')], { next: 'actor' }),
      ev('loop_started', { source: 'actor' }),
      ev('guard', { source: 'actor', text: block, guard: { action: 'block', rule: 'repeat', tool: 'read_file', message: block } }),
      ev('loop_stopped', { reason: 'guard', text: 'Stopped: the loop guard halted the tool calls.' }),
    );
    expect(c.notices.map((n) => n.text)).toEqual([block]);
    expect(c.stopped).toEqual({ reason: 'guard', text: 'Stopped: the loop guard halted the tool calls.' });
  });

  it('counts queued messages until the loop stores them', () => {
    let c = fold(loaded(), ev('loop_started'), ev('queued', { source: 'user', text: 'one' }), ev('queued', { source: 'user', text: 'two' }));
    expect(c.state.queued).toBe(2);
    c = fold(c, ev('message_finished', { source: 'user', message: msg(5, 'user', 'one') }));
    expect(c.state.queued).toBe(1);
  });

  it('takes a state event whole', () => {
    const st = state({ criticMode: true, criticPrompt: 'be strict', settings: { provider: 'p', model: 'm', persona: '', skills: [], criticProvider: 'q', iterationCap: 3, askAbove: 'read_only' } });
    const c = fold(loaded(), ev('state', { state: st }));
    expect(c.state).toEqual(st);
  });

  it('adds and removes approvals, once each', () => {
    const a = { id: 'ap1', workspaceId: WS, conversationId: WS, callId: 'c', tool: 't', args: {}, risk: 'network_write' as const, reason: 'r', status: 'pending' as const, createdAt: '' };
    let c = fold(loaded(), ev('approval_requested', { approval: a }), ev('approval_requested', { approval: a }));
    expect(c.state.approvals.map((x) => x.id)).toEqual(['ap1']);
    c = fold(c, ev('approval_resolved', { approval: { ...a, status: 'deny' } }));
    expect(c.state.approvals).toEqual([]);
  });

  it('empties the conversation on cleared, keeping mode and settings', () => {
    const c = fold(
      loaded([msg(1, 'user', 'a'), msg(2, 'actor', 'b')], { criticMode: true, criticPrompt: 'x' }),
      ev('message_started', { source: 'critic', turn: 't' }),
      ev('notice', { text: 'n' }),
      ev('cleared'),
    );
    expect(c.messages).toEqual([]);
    expect(c.streaming).toEqual([]);
    expect(c.notices).toEqual([]);
    expect(c.state.criticMode).toBe(true);
    expect(c.state.criticPrompt).toBe('x');
    expect(c.state.running).toBe(false);
    expect(c.epoch).toBe(1);
    expect(c.loaded).toBe(true);
  });

  it('ignores event types it does not know', () => {
    const c = loaded();
    expect(foldEvent(c, ev('something_new'))).toBe(c);
  });
});

describe('applyView', () => {
  it('merges a read with messages that arrived while it was on its way', () => {
    let c = loaded([msg(1, 'user', 'a')]);
    const mark = readMark(c);
    c = fold(c, ev('message_finished', { source: 'actor', message: msg(3, 'actor', 'c') }));
    const { conversation, stale } = applyView(c, { messages: [msg(1, 'user', 'a'), msg(2, 'actor', 'b')], state: state({ running: true }) }, mark);
    expect(conversation.messages.map((m) => m.seq)).toEqual([1, 2, 3]);
    // The state changed since the read began: the newer event's state stands.
    expect(stale).toBe(true);
    expect(conversation.state.running).toBe(false);
  });

  it('takes the read state when nothing changed meanwhile, ending a stream it no longer has', () => {
    const c = fold(loaded(), ev('message_started', { source: 'actor', turn: 't' }));
    const r = applyView(c, { messages: [], state: state({ running: false, next: 'actor' }) }, readMark(c));
    expect(r.stale).toBe(false);
    expect(r.conversation.state.next).toBe('actor');
    expect(r.conversation.streaming).toEqual([]);
  });

  it('discards a read started before the conversation was cleared', () => {
    let c = loaded([msg(1, 'user', 'a')]);
    const mark = readMark(c);
    c = fold(c, ev('cleared'));
    const r = applyView(c, { messages: [msg(1, 'user', 'a')], state: state() }, mark);
    expect(r.conversation.messages).toEqual([]);
    expect(r.stale).toBe(true);
  });

  it('mergeMessages keeps the first list when the second is empty', () => {
    const a = [msg(2, 'user', 'x'), msg(1, 'user', 'y')];
    expect(mergeMessages(a, [])).toBe(a);
  });
});
