// The chat panel's API: one conversation per workspace, with actor–critic mode. Its types, and
// the two transports' implementations of ChatApi (the Backend exposes one as `backend.chat`).
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
  /** '' = the same model as the actor. */
  criticProvider: string;
  /** Critic reviews per user message before the loop stops with a note. */
  iterationCap: number;
  /** Tools riskier than this ask the user first. */
  askAbove: Risk;
}

/** A chat tool call above the workspace's ask-above level, or one a tool wants seen first. */
export interface ChatApproval extends ApprovalRequest {
  workspaceId: string;
}

export interface ChatState {
  workspaceId: string;
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

/**
 * A chat event. Types: loop_started, message_started, message_delta (live only), message_finished,
 * tool_started, tool_finished, critic_verdict, loop_stopped, approval_requested,
 * approval_resolved, queued, state, cleared, notice (live only), guard (live only: the loop guard
 * blocked, disabled or halted a tool call; `text` says why, as the model was told).
 */
export interface ChatEvent {
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
}

export interface ChatView {
  messages: ChatMessage[];
  state: ChatState;
}

export const CHAT_ERROR_FIELDS = ['text', 'provider', 'criticProvider', 'iterationCap', 'askAbove', 'status'] as const;

export interface ChatApi {
  /** The workspace's conversation and its state. */
  get(workspaceId: string): Promise<ChatView>;
  /**
   * Sends a message (exactly "/critic" toggles actor–critic mode). Resolves once accepted; the
   * answer streams as events. Rejects when the loop cannot start: the caller keeps the text.
   */
  send(workspaceId: string, text: string, images: ChatImage[]): Promise<void>;
  /** Ends the stream and tools within a second. */
  stop(workspaceId: string): Promise<void>;
  /** Continues an interrupted conversation (as the critic, if it was cut off). */
  resume(workspaceId: string): Promise<void>;
  /** Deletes the conversation; mode and settings stay. */
  clear(workspaceId: string): Promise<void>;
  setCritic(workspaceId: string, on: boolean): Promise<ChatState>;
  setSettings(workspaceId: string, settings: ChatSettings): Promise<ChatState>;
  /** An edit is pending: the automatic loop stops at its next turn. */
  setEditing(workspaceId: string, editing: boolean): Promise<void>;
  answerApproval(id: string, answer: ApprovalAnswer, reason: string): Promise<ChatApproval>;
}

export function normalizeChatState(raw: unknown): ChatState {
  const s = (raw ?? {}) as Partial<ChatState>;
  return {
    workspaceId: String(s.workspaceId ?? ''),
    criticMode: s.criticMode === true,
    criticPrompt: String(s.criticPrompt ?? ''),
    settings: {
      provider: s.settings?.provider ?? '',
      criticProvider: s.settings?.criticProvider ?? '',
      iterationCap: s.settings?.iterationCap ?? 10,
      askAbove: s.settings?.askAbove ?? 'write_local',
    },
    running: s.running === true,
    turn: s.turn,
    queued: s.queued ?? 0,
    editing: s.editing === true,
    next: s.next ?? '',
    approvals: Array.isArray(s.approvals) ? s.approvals : [],
  };
}

export function normalizeChatMessage(raw: unknown): ChatMessage {
  const m = (raw ?? {}) as Partial<ChatMessage>;
  return {
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
  };
}

const enc = encodeURIComponent;

export class HttpChat implements ChatApi {
  constructor(private readonly json: JsonRequest) {}

  async get(ws: string) {
    return normalizeView(await this.json('GET', `/api/workspaces/${enc(ws)}/chat`));
  }
  async send(ws: string, text: string, images: ChatImage[]) {
    await this.json('POST', `/api/workspaces/${enc(ws)}/chat/messages`, { text, images });
  }
  async stop(ws: string) {
    await this.json('POST', `/api/workspaces/${enc(ws)}/chat/stop`);
  }
  async resume(ws: string) {
    await this.json('POST', `/api/workspaces/${enc(ws)}/chat/resume`);
  }
  async clear(ws: string) {
    await this.json('DELETE', `/api/workspaces/${enc(ws)}/chat`);
  }
  async setCritic(ws: string, on: boolean) {
    return normalizeChatState(await this.json('PUT', `/api/workspaces/${enc(ws)}/chat/critic`, { on }));
  }
  async setSettings(ws: string, settings: ChatSettings) {
    return normalizeChatState(await this.json('PUT', `/api/workspaces/${enc(ws)}/chat/settings`, settings));
  }
  async setEditing(ws: string, editing: boolean) {
    await this.json('PUT', `/api/workspaces/${enc(ws)}/chat/editing`, { editing });
  }
  answerApproval(id: string, answer: ApprovalAnswer, reason: string) {
    return this.json<ChatApproval>('POST', `/api/chat/approvals/${enc(id)}`, { status: answer, reason });
  }
}

/** The bound Go methods of app_chat.go. */
export interface WailsChatMethods {
  Chat(workspaceId: string): Promise<unknown>;
  ChatSend(workspaceId: string, text: string, images: ChatImage[]): Promise<void>;
  ChatStop(workspaceId: string): Promise<void>;
  ChatResume(workspaceId: string): Promise<void>;
  ChatClear(workspaceId: string): Promise<void>;
  ChatSetCritic(workspaceId: string, on: boolean): Promise<unknown>;
  ChatSetSettings(workspaceId: string, settings: ChatSettings): Promise<unknown>;
  ChatSetEditing(workspaceId: string, editing: boolean): Promise<void>;
  ChatAnswerApproval(id: string, status: string, reason: string): Promise<ChatApproval>;
}

export class WailsChat implements ChatApi {
  constructor(private readonly app: WailsChatMethods) {}

  private call<T>(fn: () => Promise<T>) {
    return callWails(fn, CHAT_ERROR_FIELDS);
  }
  async get(ws: string) {
    return normalizeView(await this.call(() => this.app.Chat(ws)));
  }
  send(ws: string, text: string, images: ChatImage[]) {
    return this.call(() => this.app.ChatSend(ws, text, images));
  }
  stop(ws: string) {
    return this.call(() => this.app.ChatStop(ws));
  }
  resume(ws: string) {
    return this.call(() => this.app.ChatResume(ws));
  }
  clear(ws: string) {
    return this.call(() => this.app.ChatClear(ws));
  }
  async setCritic(ws: string, on: boolean) {
    return normalizeChatState(await this.call(() => this.app.ChatSetCritic(ws, on)));
  }
  async setSettings(ws: string, settings: ChatSettings) {
    return normalizeChatState(await this.call(() => this.app.ChatSetSettings(ws, settings)));
  }
  setEditing(ws: string, editing: boolean) {
    return this.call(() => this.app.ChatSetEditing(ws, editing));
  }
  answerApproval(id: string, answer: ApprovalAnswer, reason: string) {
    return this.call(() => this.app.ChatAnswerApproval(id, answer, reason));
  }
}
