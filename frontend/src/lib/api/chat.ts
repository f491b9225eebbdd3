// The chat panel's API: any number of conversations per workspace, each with its own persona,
// skills, provider and model, and actor–critic mode. Its types, and the two transports'
// implementations of ChatApi (the Backend exposes one as `backend.chat`).
import { callWails } from './errors';
import type { ApprovalAnswer, ApprovalRequest, JsonRequest, Risk } from './goals';

/** The event topic of chat: stored changes, plus live-only 'message_delta' and 'notice'. */
export const CHAT_TOPIC = 'chat';

/** user: the person; actor: the chat's model; critic: the reviewer; note: a line for the person only. */
export type ChatSource = 'user' | 'actor' | 'critic' | 'note';

export interface ChatImage {
  mediaType: string;
  /** base64 */
  data: string;
}

export type ChatPart =
  | { kind: 'text'; text: string }
  | { kind: 'reasoning'; text: string }
  | { kind: 'image'; image: ChatImage }
  | { kind: 'tool_call'; toolCall: { id: string; name: string; args?: unknown; rawArgs?: string; argsError?: string } }
  | {
      kind: 'tool_result';
      toolResult: { callId: string; name: string; text: string; images?: ChatImage[]; isError?: boolean };
    };

export interface ChatMessage {
  conversationId: string;
  workspaceId: string;
  seq: number;
  source: ChatSource;
  message: { role: 'user' | 'assistant' | 'tool' | 'system'; parts: ChatPart[] };
  /** The stream was cut off: shown, never sent to a model. */
  partial: boolean;
  createdAt: string;
}

export interface ChatSettings {
  /** Provider id or name; '' = the default provider. */
  provider: string;
  /** A model of that provider, sent as the request's model; '' = the provider's configured one. */
  model: string;
  /** A catalog persona id; '' = none. */
  persona: string;
  /** Catalog skill ids whose texts join the actor's instructions. */
  skills: string[];
  /** '' = the same model as the actor. */
  criticProvider: string;
  /** Critic reviews per user message before the loop stops with a note. */
  iterationCap: number;
  /** Tools riskier than this ask the user first. */
  askAbove: Risk;
}

/** A chat tool call above the conversation's ask-above level, or one a tool wants seen first. */
export interface ChatApproval extends ApprovalRequest {
  workspaceId: string;
  conversationId: string;
}

export interface ChatState {
  conversationId: string;
  workspaceId: string;
  /** '' until the first message names the conversation. */
  title: string;
  criticMode: boolean;
  /** The user's criteria for the critic: the last message sent in critic mode. */
  criticPrompt: string;
  settings: ChatSettings;
  running: boolean;
  /** Who streams now, while running. */
  turn?: 'actor' | 'critic';
  /** User messages waiting for the current turn to end. */
  queued: number;
  editing: boolean;
  /** What Resume would start when idle ('' = nothing due). */
  next?: 'actor' | 'critic' | '';
  approvals: ChatApproval[];
}

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

/** One of a workspace's conversations, as the list shows it. */
export interface ChatConversation {
  conversationId: string;
  workspaceId: string;
  title: string;
  criticMode: boolean;
  settings: ChatSettings;
  createdAt: string;
  updatedAt: string;
  /** Stored messages: deleting asks first when there are any. */
  messages: number;
  running: boolean;
}

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

export const CHAT_ERROR_FIELDS = ['text', 'title', 'provider', 'model', 'persona', 'skills', 'criticProvider', 'iterationCap', 'askAbove', 'status'] as const;

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
    askAbove: s.askAbove ?? 'write_local',
  };
}

export function normalizeChatState(raw: unknown): ChatState {
  const s = (raw ?? {}) as Partial<ChatState>;
  return {
    conversationId: String(s.conversationId ?? ''),
    workspaceId: String(s.workspaceId ?? ''),
    title: String(s.title ?? ''),
    criticMode: s.criticMode === true,
    criticPrompt: String(s.criticPrompt ?? ''),
    settings: normalizeChatSettings(s.settings),
    running: s.running === true,
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
    conversationId: String(c.conversationId ?? ''),
    workspaceId: String(c.workspaceId ?? ''),
    title: String(c.title ?? ''),
    criticMode: c.criticMode === true,
    settings: normalizeChatSettings(c.settings),
    createdAt: String(c.createdAt ?? ''),
    updatedAt: String(c.updatedAt ?? ''),
    messages: c.messages ?? 0,
    running: c.running === true,
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

function normalizeView(raw: unknown): ChatView {
  const v = (raw ?? {}) as { messages?: unknown; state?: unknown };
  return {
    messages: Array.isArray(v.messages) ? v.messages.map(normalizeChatMessage) : [],
    state: normalizeChatState(v.state),
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

const enc = encodeURIComponent;

export class HttpChat implements ChatApi {
  constructor(private readonly json: JsonRequest) {}

  async list(ws: string) {
    const body = await this.json<{ conversations?: unknown }>('GET', `/api/workspaces/${enc(ws)}/chats`);
    return normalizeList(body?.conversations);
  }
  async create(ws: string, input: NewChatConversation) {
    return normalizeChatConversation(await this.json('POST', `/api/workspaces/${enc(ws)}/chats`, input));
  }
  async rename(id: string, title: string) {
    return normalizeChatState(await this.json('PUT', `/api/chats/${enc(id)}/title`, { title }));
  }
  async remove(id: string) {
    await this.json('DELETE', `/api/chats/${enc(id)}`);
  }
  async get(id: string) {
    return normalizeView(await this.json('GET', `/api/chats/${enc(id)}`));
  }
  async send(id: string, text: string, images: ChatImage[]) {
    await this.json('POST', `/api/chats/${enc(id)}/messages`, { text, images });
  }
  async stop(id: string) {
    await this.json('POST', `/api/chats/${enc(id)}/stop`);
  }
  async resume(id: string) {
    await this.json('POST', `/api/chats/${enc(id)}/resume`);
  }
  async clear(id: string) {
    await this.json('DELETE', `/api/chats/${enc(id)}/messages`);
  }
  async setCritic(id: string, on: boolean) {
    return normalizeChatState(await this.json('PUT', `/api/chats/${enc(id)}/critic`, { on }));
  }
  async setSettings(id: string, settings: ChatSettings) {
    return normalizeChatState(await this.json('PUT', `/api/chats/${enc(id)}/settings`, settings));
  }
  async setEditing(id: string, editing: boolean) {
    await this.json('PUT', `/api/chats/${enc(id)}/editing`, { editing });
  }
  answerApproval(id: string, answer: ApprovalAnswer, reason: string) {
    return this.json<ChatApproval>('POST', `/api/chat/approvals/${enc(id)}`, { status: answer, reason });
  }
}

/** The bound Go methods of app_chat.go. */
export interface WailsChatMethods {
  ChatConversations(workspaceId: string): Promise<unknown>;
  ChatCreate(workspaceId: string, input: NewChatConversation): Promise<unknown>;
  ChatRename(conversationId: string, title: string): Promise<unknown>;
  ChatDelete(conversationId: string): Promise<void>;
  Chat(conversationId: string): Promise<unknown>;
  ChatSend(conversationId: string, text: string, images: ChatImage[]): Promise<void>;
  ChatStop(conversationId: string): Promise<void>;
  ChatResume(conversationId: string): Promise<void>;
  ChatClear(conversationId: string): Promise<void>;
  ChatSetCritic(conversationId: string, on: boolean): Promise<unknown>;
  ChatSetSettings(conversationId: string, settings: ChatSettings): Promise<unknown>;
  ChatSetEditing(conversationId: string, editing: boolean): Promise<void>;
  ChatAnswerApproval(id: string, status: string, reason: string): Promise<ChatApproval>;
}

export class WailsChat implements ChatApi {
  constructor(private readonly app: WailsChatMethods) {}

  private call<T>(fn: () => Promise<T>) {
    return callWails(fn, CHAT_ERROR_FIELDS);
  }
  async list(ws: string) {
    return normalizeList(await this.call(() => this.app.ChatConversations(ws)));
  }
  async create(ws: string, input: NewChatConversation) {
    return normalizeChatConversation(await this.call(() => this.app.ChatCreate(ws, input)));
  }
  async rename(id: string, title: string) {
    return normalizeChatState(await this.call(() => this.app.ChatRename(id, title)));
  }
  remove(id: string) {
    return this.call(() => this.app.ChatDelete(id));
  }
  async get(id: string) {
    return normalizeView(await this.call(() => this.app.Chat(id)));
  }
  send(id: string, text: string, images: ChatImage[]) {
    return this.call(() => this.app.ChatSend(id, text, images));
  }
  stop(id: string) {
    return this.call(() => this.app.ChatStop(id));
  }
  resume(id: string) {
    return this.call(() => this.app.ChatResume(id));
  }
  clear(id: string) {
    return this.call(() => this.app.ChatClear(id));
  }
  async setCritic(id: string, on: boolean) {
    return normalizeChatState(await this.call(() => this.app.ChatSetCritic(id, on)));
  }
  async setSettings(id: string, settings: ChatSettings) {
    return normalizeChatState(await this.call(() => this.app.ChatSetSettings(id, settings)));
  }
  setEditing(id: string, editing: boolean) {
    return this.call(() => this.app.ChatSetEditing(id, editing));
  }
  answerApproval(id: string, answer: ApprovalAnswer, reason: string) {
    return this.call(() => this.app.ChatAnswerApproval(id, answer, reason));
  }
}
