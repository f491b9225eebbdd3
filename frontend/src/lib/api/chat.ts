// The chat panel's API: any number of conversations per workspace, each with its own persona,
// skills, provider and model, and actor–critic mode. Its types (the generated wire types of
// backend/chat, narrowed where the UI knows more), and ChatCalls, its calls of the table over
// either transport (the Backend exposes it as `backend.chat`).
import type { ApprovalAnswer, ApprovalRequest, Risk } from './goals';
import type { Call } from './table';
import type * as chat from './gen/chat';
import type * as llm from './gen/llm';

/** The event topic of chat: stored changes, plus live-only 'message_delta' and 'notice'. */
export const CHAT_TOPIC = 'chat';

/** user: the person; actor: the chat's model; critic: the reviewer; note: a line for the person only. */
export type ChatSource = chat.Source;

/** A picture: its media type and its bytes in base64. */
export type ChatImage = llm.Image;

/** One piece of a message: Go's llm.Part, as the union its `kind` says. */
export type ChatPart =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'image'; image: ChatImage }
  | { kind: 'tool_call'; toolCall: llm.ToolCall }
  | { kind: 'tool_result'; toolResult: llm.ToolResult };

/** One stored message; `partial`, which Go omits when false, is filled in (normalizeChatMessage). */
export type ChatMessage = Omit<chat.Message, 'message' | 'partial'> & {
  message: { role: llm.Role; parts: ChatPart[] };
  /** The stream was cut off: shown, never sent to a model. */
  partial: boolean;
};

/** A conversation's knobs; askAbove: tools riskier than this ask the user first. */
export type ChatSettings = Omit<chat.Settings, 'askAbove'> & { askAbove: Risk };

/** A chat tool call above the conversation's ask-above level, or one a tool wants seen first. */
export type ChatApproval = ApprovalRequest & { workspaceId: string; conversationId: string };

/** A conversation as the UI shows it: its stored config and what runs now. */
export type ChatState = Omit<chat.State, 'settings' | 'turn' | 'next' | 'approvals'> & {
  settings: ChatSettings;
  /** Who streams now, while running. */
  turn?: 'actor' | 'critic';
  /** What Resume would start when idle ('' = nothing due). */
  next?: 'actor' | 'critic' | '';
  approvals: ChatApproval[];
};

export interface ChatToolRun {
  callId: string;
  name: string;
  args: unknown;
  result?: string;
  isError?: boolean;
  images?: number;
  durationMs?: number;
}

export type ChatStopReason =
  | 'done'
  | 'user_message'
  | 'editing'
  | 'stopped'
  | 'stream_failed'
  | 'iteration_cap'
  | 'tool_failures'
  | 'turn_cap'
  | 'guard';

/** One of a workspace's conversations, as the list shows it (`messages`: how many are stored). */
export type ChatConversation = Omit<chat.Conversation, 'settings'> & { settings: ChatSettings };

/** What a new conversation may set up front (absent settings: the defaults). */
export interface NewChatConversation {
  title?: string;
  settings?: ChatSettings;
}

/**
 * A chat event. Types: loop_started, message_started, message_delta (live only), message_finished,
 * tool_started, tool_finished, critic_verdict, loop_stopped, approval_requested,
 * approval_resolved, queued, state, cleared (also when deleted), notice (live only), guard (live
 * only: the loop guard blocked, disabled or halted a tool call; `text` says why, as the model was
 * told), and conversations_changed (a workspace's list, whole, in `conversations`; no
 * conversationId).
 */
export interface ChatEvent {
  conversationId?: string;
  workspaceId: string;
  type: string;
  at: string;
  source?: ChatSource;
  /** Ties one streamed message's started, deltas and finished. */
  turn?: string;
  text?: string;
  /** A delta of reasoning, not answer text. */
  reasoning?: boolean;
  message?: ChatMessage;
  tool?: ChatToolRun;
  verdict?: { done: boolean; seq: number; iteration: number; cap: number };
  reason?: ChatStopReason;
  approval?: ChatApproval;
  state?: ChatState;
  guard?: { action: 'block' | 'disable' | 'halt'; rule?: string; tool?: string; message?: string };
  conversations?: ChatConversation[];
}

export interface ChatView {
  messages: ChatMessage[];
  state: ChatState;
}

/** Every method but list and create takes a conversation id. */
export interface ChatApi {
  /** The workspace's conversations, the most recently updated first (never empty: the backend makes a first). */
  list(workspaceId: string): Promise<ChatConversation[]>;
  create(workspaceId: string, input: NewChatConversation): Promise<ChatConversation>;
  rename(conversationId: string, title: string): Promise<ChatState>;
  /** Stops it if it runs, then deletes it with its messages. */
  remove(conversationId: string): Promise<void>;
  /** The conversation's messages and its state. */
  get(conversationId: string): Promise<ChatView>;
  /**
   * Sends a message (exactly "/critic" toggles actor–critic mode). Resolves once accepted; the
   * answer streams as events. Rejects when the loop cannot start: the caller keeps the text.
   */
  send(workspaceId: string, text: string, images: ChatImage[]): Promise<void>;
  /** Ends the stream and tools within a second. */
  stop(workspaceId: string): Promise<void>;
  /** Continues an interrupted conversation (as the critic, if it was cut off). */
  resume(workspaceId: string): Promise<void>;
  /** Deletes the conversation's messages; its title, mode and settings stay. */
  clear(workspaceId: string): Promise<void>;
  setCritic(workspaceId: string, on: boolean): Promise<ChatState>;
  setSettings(workspaceId: string, settings: ChatSettings): Promise<ChatState>;
  /** An edit is pending: the automatic loop stops at its next turn. */
  setEditing(workspaceId: string, editing: boolean): Promise<void>;
  answerApproval(id: string, answer: ApprovalAnswer, reason: string): Promise<ChatApproval>;
}

export function normalizeChatSettings(raw: unknown): ChatSettings {
  const s = (raw ?? {}) as Partial<ChatSettings>;
  return {
    provider: s.provider ?? '',
    model: s.model ?? '',
    persona: s.persona ?? '',
    skills: Array.isArray(s.skills) ? s.skills.map(String) : [],
    criticProvider: s.criticProvider ?? '',
    iterationCap: s.iterationCap ?? 10,
    // As the backend's default for a new conversation: ask before anything above reading.
    askAbove: s.askAbove ?? 'read_only',
  };
}

/** What a conversation's state and its entry in the list both carry. */
type ChatHead = Pick<ChatState, 'conversationId' | 'workspaceId' | 'title' | 'criticMode' | 'criticPrompt' | 'settings' | 'running'>;

function normalizeChatHead(h: Partial<ChatHead>): ChatHead {
  return {
    conversationId: String(h.conversationId ?? ''),
    workspaceId: String(h.workspaceId ?? ''),
    title: String(h.title ?? ''),
    criticMode: h.criticMode === true,
    criticPrompt: String(h.criticPrompt ?? ''),
    settings: normalizeChatSettings(h.settings),
    running: h.running === true,
  };
}

export function normalizeChatState(raw: unknown): ChatState {
  const s = (raw ?? {}) as Partial<ChatState>;
  return {
    ...normalizeChatHead(s),
    turn: s.turn,
    queued: s.queued ?? 0,
    editing: s.editing === true,
    next: s.next ?? '',
    approvals: Array.isArray(s.approvals) ? s.approvals : [],
  };
}

export function normalizeChatConversation(raw: unknown): ChatConversation {
  const c = (raw ?? {}) as Partial<ChatConversation>;
  return {
    ...normalizeChatHead(c),
    createdAt: String(c.createdAt ?? ''),
    updatedAt: String(c.updatedAt ?? ''),
    messages: c.messages ?? 0,
  };
}

function normalizeList(raw: unknown): ChatConversation[] {
  return Array.isArray(raw) ? raw.map(normalizeChatConversation) : [];
}

export function normalizeChatMessage(raw: unknown): ChatMessage {
  const m = (raw ?? {}) as Partial<ChatMessage>;
  return {
    conversationId: String(m.conversationId ?? ''),
    workspaceId: String(m.workspaceId ?? ''),
    seq: m.seq ?? 0,
    source: (m.source ?? 'actor') as ChatSource,
    message: {
      role: m.message?.role ?? 'assistant',
      parts: Array.isArray(m.message?.parts) ? m.message.parts : [],
    },
    partial: m.partial === true,
    createdAt: String(m.createdAt ?? ''),
  };
}

/** The chat event `data` carries (the envelope's type repeats data.type). */
export function parseChatEvent(data: unknown): ChatEvent | null {
  if (!data || typeof data !== 'object') return null;
  const e = data as ChatEvent;
  if (typeof e.workspaceId !== 'string' || typeof e.type !== 'string') return null;
  return {
    ...e,
    message: e.message ? normalizeChatMessage(e.message) : undefined,
    state: e.state ? normalizeChatState(e.state) : undefined,
    conversations: e.conversations ? normalizeList(e.conversations) : undefined,
  };
}

/** The chat's calls of the table, over either transport's Call. */
export class ChatCalls implements ChatApi {
  constructor(private readonly call: Call) {}

  async list(workspaceId: string) {
    return (await this.call('ChatConversations', { workspaceId })).conversations as ChatConversation[];
  }
  async create(workspaceId: string, input: NewChatConversation) {
    const created = await this.call('ChatCreate', { workspaceId, input: { title: input.title ?? '', settings: input.settings } });
    return created as ChatConversation;
  }
  async rename(conversationId: string, title: string) {
    return (await this.call('ChatRename', { conversationId, title })) as ChatState;
  }
  remove(conversationId: string) {
    return this.call('ChatDelete', { conversationId });
  }
  async get(conversationId: string) {
    const v = await this.call('Chat', { conversationId });
    return { messages: v.messages.map(normalizeChatMessage), state: v.state as ChatState };
  }
  send(conversationId: string, text: string, images: ChatImage[]) {
    return this.call('ChatSend', { conversationId, text, images });
  }
  stop(conversationId: string) {
    return this.call('ChatStop', { conversationId });
  }
  resume(conversationId: string) {
    return this.call('ChatResume', { conversationId });
  }
  clear(conversationId: string) {
    return this.call('ChatClear', { conversationId });
  }
  async setCritic(conversationId: string, on: boolean) {
    return (await this.call('ChatSetCritic', { conversationId, on })) as ChatState;
  }
  async setSettings(conversationId: string, settings: ChatSettings) {
    return (await this.call('ChatSetSettings', { conversationId, settings })) as ChatState;
  }
  setEditing(conversationId: string, editing: boolean) {
    return this.call('ChatSetEditing', { conversationId, editing });
  }
  async answerApproval(id: string, answer: ApprovalAnswer, reason: string) {
    return (await this.call('ChatAnswerApproval', { id, status: answer, reason })) as ChatApproval;
  }
}
