// How one chat conversation, as the panel shows it, follows the backend: a read of the stored
// conversation, then each event folded in. Pure functions over immutable values, so the store
// (chat.svelte.ts) only decides when to read and which conversation an event belongs to.
import { normalizeChatState, type ChatEvent, type ChatMessage, type ChatState, type ChatStopReason, type ChatToolRun, type ChatView } from '../api';

/** A model message arriving as deltas (live only): replaced by the stored one when it finishes. */
export interface StreamingMessage {
  /** Ties message_started, the deltas and message_finished. */
  turn: string;
  source: 'actor' | 'critic';
  text: string;
  reasoning: string;
}

/** A tool call as the loop runs it; the stored tool message has the result too, durations only live. */
export interface LiveTool extends ChatToolRun {
  running: boolean;
}

export interface ChatVerdict {
  done: boolean;
  seq: number;
  iteration: number;
  cap: number;
}

/** A live-only notice (e.g. history trimmed to the model's window), placed after a message. */
export interface LiveNotice {
  id: number;
  text: string;
  /** The seq of the last stored message when it arrived (0: before any). */
  afterSeq: number;
}

export interface Conversation {
  /** The conversation's id. */
  id: string;
  /** True once a read of the stored conversation has been applied. */
  loaded: boolean;
  /** Stored messages, in seq order, each once. */
  messages: ChatMessage[];
  streaming: StreamingMessage[];
  /** callId → the run, from tool_started / tool_finished. */
  tools: Record<string, LiveTool>;
  /** Critic message seq → its verdict (live only: iteration of cap). */
  verdicts: Record<number, ChatVerdict>;
  notices: LiveNotice[];
  state: ChatState;
  /** Why the last loop stopped, until another starts. */
  stopped?: { reason: ChatStopReason; text: string };
  /** Bumped by 'cleared': a read taken before it must not bring the old messages back. */
  epoch: number;
  /** Bumped by every event that changes `state`: a read taken before one has an older state. */
  stateVersion: number;
}

/** Where a conversation stood when a read of it was started. */
export interface ReadMark {
  epoch: number;
  stateVersion: number;
}

export function emptyConversation(id: string): Conversation {
  return {
    id,
    loaded: false,
    messages: [],
    streaming: [],
    tools: {},
    verdicts: {},
    notices: [],
    state: { ...normalizeChatState({}), conversationId: id },
    epoch: 0,
    stateVersion: 0,
  };
}

export function readMark(c: Conversation): ReadMark {
  return { epoch: c.epoch, stateVersion: c.stateVersion };
}

/**
 * Applies a read (ChatApi.get) started at `mark`. Stored messages are immutable and append-only
 * within an epoch, so the two lists are merged by seq. The read's state wins only if no event
 * changed the state since the read began; `stale` then says a new read would know more.
 */
export function applyView(c: Conversation, view: ChatView, mark: ReadMark): { conversation: Conversation; stale: boolean } {
  if (mark.epoch !== c.epoch) return { conversation: c, stale: true };
  const stale = mark.stateVersion !== c.stateVersion;
  const next: Conversation = { ...c, loaded: true, messages: mergeMessages(view.messages, c.messages) };
  if (!stale) {
    next.state = view.state;
    if (!view.state.running) {
      // Whatever was streaming ended meanwhile; a dropped message_finished must not leave it hanging.
      next.streaming = [];
    }
  }
  return { conversation: next, stale };
}

/** The union of two message lists by seq, in seq order. */
export function mergeMessages(a: ChatMessage[], b: ChatMessage[]): ChatMessage[] {
  if (b.length === 0) return a;
  const bySeq = new Map<number, ChatMessage>();
  for (const m of a) bySeq.set(m.seq, m);
  for (const m of b) if (!bySeq.has(m.seq)) bySeq.set(m.seq, m);
  return [...bySeq.values()].sort((x, y) => x.seq - y.seq);
}

let noticeIds = 0;

/** Folds one event of this conversation into it. */
export function foldEvent(c: Conversation, e: ChatEvent): Conversation {
  switch (e.type) {
    case 'message_delta':
      return foldDelta(c, e);
    case 'tool_started':
    case 'tool_finished': {
      if (!e.tool) return c;
      return { ...c, tools: { ...c.tools, [e.tool.callId]: { ...e.tool, running: e.type === 'tool_started' } } };
    }
    case 'critic_verdict': {
      if (!e.verdict) return c;
      return { ...c, verdicts: { ...c.verdicts, [e.verdict.seq]: e.verdict } };
    }
    case 'notice':
    case 'guard': {
      // A guard decision reads like a notice: the person sees what the model was told.
      if (!e.text) return c;
      const afterSeq = c.messages.length ? c.messages[c.messages.length - 1].seq : 0;
      return { ...c, notices: [...c.notices, { id: ++noticeIds, text: e.text, afterSeq }] };
    }
  }

  // Everything else changes the state.
  const next: Conversation = { ...c, stateVersion: c.stateVersion + 1 };
  const state = (patch: Partial<ChatState>) => (next.state = { ...next.state, ...patch });
  switch (e.type) {
    case 'loop_started':
      next.stopped = undefined;
      state({ running: true, next: '' });
      break;
    case 'message_started':
      if (e.source !== 'actor' && e.source !== 'critic') break;
      if (e.turn && !c.streaming.some((s) => s.turn === e.turn)) {
        next.streaming = [...c.streaming, { turn: e.turn, source: e.source, text: '', reasoning: '' }];
      }
      state({ running: true, turn: e.source });
      break;
    case 'message_finished':
      if (e.turn) {
        next.streaming = c.streaming.filter((s) => s.turn !== e.turn);
        if (c.state.turn === e.source) state({ turn: undefined });
      }
      if (e.message) next.messages = mergeMessages(c.messages, [e.message]);
      // A queued message is stored when the loop takes it.
      if (e.source === 'user' && c.state.queued > 0) state({ queued: c.state.queued - 1 });
      break;
    case 'queued':
      state({ queued: c.state.queued + 1 });
      break;
    case 'loop_stopped':
      next.streaming = [];
      next.stopped = e.reason ? { reason: e.reason, text: e.text ?? '' } : undefined;
      if (e.state) next.state = e.state;
      state({ running: false, turn: undefined, approvals: [] });
      break;
    case 'approval_requested':
      if (e.approval && !c.state.approvals.some((a) => a.id === e.approval!.id)) {
        state({ approvals: [...c.state.approvals, e.approval] });
      }
      break;
    case 'approval_resolved':
      if (e.approval) state({ approvals: c.state.approvals.filter((a) => a.id !== e.approval!.id) });
      break;
    case 'state':
      if (e.state) next.state = e.state;
      break;
    case 'cleared':
      return {
        ...emptyConversation(c.id),
        loaded: c.loaded,
        state: { ...c.state, running: false, turn: undefined, queued: 0, next: '', approvals: [] },
        epoch: c.epoch + 1,
        stateVersion: next.stateVersion,
      };
    default:
      return c; // an event type this UI does not know yet changes nothing
  }
  return next;
}

function foldDelta(c: Conversation, e: ChatEvent): Conversation {
  if (!e.turn || !e.text) return c;
  const i = c.streaming.findIndex((s) => s.turn === e.turn);
  // Deltas of a turn whose start we missed (the panel opened mid-reply) start it.
  const source: StreamingMessage['source'] = e.source === 'critic' ? 'critic' : 'actor';
  const cur: StreamingMessage = i === -1 ? { turn: e.turn, source, text: '', reasoning: '' } : c.streaming[i];
  const updated = e.reasoning ? { ...cur, reasoning: cur.reasoning + e.text } : { ...cur, text: cur.text + e.text };
  const streaming = c.streaming.slice();
  if (i === -1) streaming.push(updated);
  else streaming[i] = updated;
  return { ...c, streaming };
}
