import type {
  ApprovalAnswer,
  Backend,
  BackendEvent,
  ChatApproval,
  ChatConversation,
  ChatImage,
  ChatSettings,
  ChatState,
  NewChatConversation,
} from '../api';
import { CHAT_TOPIC, errorMessage, parseChatEvent } from '../api';
import { applyView, emptyConversation, foldEvent, readMark, type Conversation } from './chatFold';
import { followBackend } from './follow';

/**
 * A read that raced with events is repeated this often before its messages are kept and its
 * state left to the events: a busy loop sends a state-changing event every turn, not every
 * millisecond, so a second read almost always lands between two.
 */
const MAX_READS = 3;

/** Sent as a message, toggles actor–critic mode (chat.CriticCommand). */
export const CRITIC_COMMAND = '/critic';

/** An image waiting in the input, with its file name for the chip. */
export interface DraftImage extends ChatImage {
  name: string;
}

/** What the user typed (and attached) in a conversation's input and has not sent. */
export interface Draft {
  text: string;
  images: DraftImage[];
}

/**
 * Each workspace's chat conversations — the list, which one the panel shows, and each shown
 * conversation's messages and state — kept current from the 'chat' event topic.
 *
 * A workspace's list is read when its panel first shows it, and replaced whole by every
 * 'conversations_changed' event. A conversation is read when the panel first shows it; from
 * then on its events are folded in (chatFold.ts), and it is read again when a loop stops (to
 * learn what Resume would do, and to catch messages a slow connection dropped), after Clear, and
 * when the live connection reopens. Events of conversations never shown are ignored: their
 * first read has it all.
 *
 * The actions reject with the backend's error: the panel shows each where it belongs (a failed
 * send puts the text back in the input).
 */
export class ChatStore {
  /** By conversation id. */
  conversations = $state.raw<Record<string, Conversation>>({});
  /** Why the last read of a conversation failed; absent after a success. */
  loadErrors = $state.raw<Record<string, string>>({});
  /** Each read workspace's conversations, the most recently updated first. */
  lists = $state.raw<Record<string, ChatConversation[]>>({});
  /** Why the last read of a workspace's list failed. */
  listErrors = $state.raw<Record<string, string>>({});
  /** The conversation the panel shows, per workspace. */
  selected = $state.raw<Record<string, string>>({});
  /** The models each provider listed when asked (listModels), by provider id. */
  models = $state.raw<Record<string, string[]>>({});

  /**
   * Chat approval requests waiting, by workspace, from every workspace's events (shown or
   * not), so the status bar can point at a chat that waits while another workspace is shown.
   * Each entry is "conversationId/approvalId": a conversation that stops drops only its own.
   */
  asking = $state.raw<Record<string, string[]>>({});

  /** Unsent input per conversation; the input component keeps it current. */
  readonly drafts = new Map<string, Draft>();

  private reads = new Map<string, { running: Promise<void>; again: boolean }>();
  private listReads = new Map<string, Promise<void>>();
  /** The last editing flag sent per conversation, and the call carrying it. */
  private editingSent = new Map<string, boolean>();
  private editingCall = new Map<string, Promise<void>>();

  constructor(
    readonly backend: Backend,
    readonly report: (message: string) => void,
  ) {}

  /** Follows the backend's chat events; re-reads shown lists and conversations on reconnect. Returns the stop function. */
  sync(): () => void {
    return followBackend(
      this.backend,
      (e) => this.handleEvent(e),
      () => {
        for (const ws of Object.keys(this.lists)) void this.loadList(ws);
        for (const id of Object.keys(this.conversations)) void this.load(id);
      },
    );
  }

  /** The conversation as far as it is known (empty until read). */
  conversation(id: string): Conversation {
    return this.conversations[id] ?? emptyConversation(id);
  }

  /** The workspace's conversations as far as they are known (empty until read). */
  list(ws: string): ChatConversation[] {
    return this.lists[ws] ?? [];
  }

  /** The id of the conversation the workspace's panel shows ('' until its list is read). */
  selectedIn(ws: string): string {
    return this.selected[ws] ?? '';
  }

  /** Whether any of the workspace's conversations waits for the user's approval. */
  waitingIn(ws: string): boolean {
    if ((this.asking[ws] ?? []).length > 0) return true;
    return this.list(ws).some((c) => (this.conversations[c.conversationId]?.state.approvals.length ?? 0) > 0);
  }

  /** Reads the workspace's list unless it is known, and shows (reads) its selected conversation. */
  openWorkspace(ws: string): void {
    if (this.lists[ws]) {
      const id = this.selectedIn(ws);
      if (id) this.open(id);
      return;
    }
    if (!this.listReads.has(ws)) void this.loadList(ws);
  }

  /** Reads the workspace's conversations; keeps the selection if it still exists, else takes the newest. */
  loadList(ws: string): Promise<void> {
    const running = this.listReads.get(ws);
    if (running) return running;
    const read = (async () => {
      try {
        this.putList(ws, await this.backend.chat.list(ws));
        if (this.listErrors[ws] !== undefined) {
          const { [ws]: _, ...rest } = this.listErrors;
          this.listErrors = rest;
        }
      } catch (err) {
        this.listErrors = { ...this.listErrors, [ws]: errorMessage(err) };
      } finally {
        this.listReads.delete(ws);
      }
    })();
    this.listReads.set(ws, read);
    return read;
  }

  private putList(ws: string, list: ChatConversation[]): void {
    this.lists = { ...this.lists, [ws]: list };
    const current = this.selectedIn(ws);
    if (list.some((c) => c.conversationId === current)) return;
    if (list.length) this.select(ws, list[0].conversationId);
    else if (current) {
      const { [ws]: _, ...rest } = this.selected;
      this.selected = rest;
    }
  }

  /** Shows the conversation in the workspace's panel (reading it on first show). */
  select(ws: string, id: string): void {
    if (this.selected[ws] !== id) this.selected = { ...this.selected, [ws]: id };
    this.open(id);
  }

  private trackAsking(ws: string, conv: string, type: string, id: string | undefined): void {
    const held = this.asking[ws] ?? [];
    const key = `${conv}/${id}`;
    let next = held;
    if (type === 'approval_requested' && id && !held.includes(key)) next = [...held, key];
    else if (type === 'approval_resolved' && id) next = held.filter((x) => x !== key);
    else if (type === 'loop_stopped' || type === 'cleared') next = held.filter((x) => !x.startsWith(`${conv}/`));
    if (next !== held) this.asking = { ...this.asking, [ws]: next };
  }

  /** Workspaces whose chat waits for an approval, other than `except`. */
  askingElsewhere(except: string | undefined): string[] {
    return Object.entries(this.asking)
      .filter(([ws, ids]) => ws !== except && ids.length > 0)
      .map(([ws]) => ws);
  }

  /** Reads the conversation unless it is known already. */
  open(id: string): void {
    if (!this.conversations[id]?.loaded && !this.reads.has(id)) void this.load(id);
  }

  handleEvent(e: BackendEvent): void {
    if (e.topic !== CHAT_TOPIC) return;
    const ev = parseChatEvent(e.data);
    if (!ev) {
      console.warn('clusterspace: chat event without a workspace', e.type);
      return;
    }
    if (ev.type === 'conversations_changed') {
      if (ev.conversations && this.lists[ev.workspaceId]) this.putList(ev.workspaceId, ev.conversations);
      return;
    }
    this.trackAsking(ev.workspaceId, ev.conversationId ?? '', ev.type, ev.approval?.id);
    const id = ev.conversationId;
    const c = id ? this.conversations[id] : undefined;
    if (!id || !c) return;
    this.put(foldEvent(c, ev));
    if (ev.type === 'cleared' && !this.list(ev.workspaceId).some((x) => x.conversationId === id) && this.lists[ev.workspaceId]) {
      return; // deleted: nothing left to read
    }
    // A stop carries the state after it (what Resume would start); an older backend's did not.
    if ((ev.type === 'loop_stopped' && !ev.state) || ev.type === 'cleared') void this.load(id);
  }

  /**
   * Reads the conversation and its state. Calls while a read runs share it and ask for one more
   * read after it, since the running one may predate what prompted them.
   */
  load(id: string): Promise<void> {
    const current = this.reads.get(id);
    if (current) {
      current.again = true;
      return current.running;
    }
    const entry = { running: Promise.resolve(), again: false };
    entry.running = (async () => {
      try {
        do {
          entry.again = false;
          await this.read(id);
        } while (entry.again);
      } finally {
        this.reads.delete(id);
      }
    })();
    this.reads.set(id, entry);
    return entry.running;
  }

  private async read(id: string): Promise<void> {
    if (!this.conversations[id]) this.put(emptyConversation(id));
    try {
      for (let i = 0; i < MAX_READS; i++) {
        const mark = readMark(this.conversation(id));
        const view = await this.backend.chat.get(id);
        const { conversation, stale } = applyView(this.conversation(id), view, mark);
        this.put(conversation);
        if (!stale) break;
      }
      if (this.loadErrors[id] !== undefined) {
        const { [id]: _, ...rest } = this.loadErrors;
        this.loadErrors = rest;
      }
    } catch (err) {
      this.loadErrors = { ...this.loadErrors, [id]: errorMessage(err) };
    }
  }

  private put(c: Conversation): void {
    this.conversations = { ...this.conversations, [c.id]: c };
  }

  /** Applies a state a call returned (newer than anything read before it). */
  private putState(id: string, state: ChatState): void {
    const c = this.conversation(id);
    this.put({ ...c, state, stateVersion: c.stateVersion + 1 });
  }

  // ---- actions: each rejects with the backend's error ----------------------------------------

  /**
   * Asks the provider for its models, as Settings → Providers' Test connection does, for the
   * model picker. Rejects with the provider's message when it cannot list them.
   */
  async listModels(providerId: string): Promise<string[]> {
    const r = await this.backend.testProvider(providerId);
    if (!r.ok) throw new Error(r.message || 'the provider did not answer');
    const models = r.models ?? [];
    this.models = { ...this.models, [providerId]: models };
    return models;
  }

  /** Starts a conversation in the workspace and shows it. */
  async create(ws: string, input: NewChatConversation = {}): Promise<ChatConversation> {
    const c = await this.backend.chat.create(ws, input);
    // Its conversations_changed event may come later (or be dropped): the list shows it now.
    if (!this.list(ws).some((x) => x.conversationId === c.conversationId)) this.lists = { ...this.lists, [ws]: [c, ...this.list(ws)] };
    this.select(ws, c.conversationId);
    return c;
  }

  async rename(id: string, title: string): Promise<void> {
    const state = await this.backend.chat.rename(id, title);
    this.putState(id, state);
    const ws = state.workspaceId;
    if (this.lists[ws]) {
      this.lists = { ...this.lists, [ws]: this.list(ws).map((c) => (c.conversationId === id ? { ...c, title: state.title } : c)) };
    }
  }

  /** Deletes the conversation (the backend stops it first); the panel shows the next one. */
  async remove(ws: string, id: string): Promise<void> {
    await this.backend.chat.remove(id);
    const { [id]: _, ...rest } = this.conversations;
    this.conversations = rest;
    this.drafts.delete(id);
    const left = this.list(ws).filter((c) => c.conversationId !== id);
    if (left.length) this.putList(ws, left);
    else await this.loadList(ws); // the backend starts a fresh one for an empty workspace
  }

  /**
   * Sends a message ("/critic" toggles the mode). Waits for an editing flag on its way first:
   * arriving after the message it would stop the loop the message starts.
   */
  async send(id: string, text: string, images: ChatImage[]): Promise<void> {
    const pending = this.editingCall.get(id);
    this.editingSent.set(id, false); // the backend clears it with every message
    await pending;
    await this.backend.chat.send(id, text, images);
    // "/critic" changes only the mode; its 'state' event may be dropped for a slow connection,
    // and the badge must not lie.
    if (text.trim() === CRITIC_COMMAND && images.length === 0) void this.load(id);
  }

  async stop(id: string): Promise<void> {
    await this.backend.chat.stop(id);
    // The loop has ended when stop returns; its loop_stopped event may still be on its way.
    void this.load(id);
  }

  resume(id: string): Promise<void> {
    return this.backend.chat.resume(id);
  }

  clear(id: string): Promise<void> {
    return this.backend.chat.clear(id);
  }

  async setCritic(id: string, on: boolean): Promise<void> {
    this.putState(id, await this.backend.chat.setCritic(id, on));
  }

  async setSettings(id: string, settings: ChatSettings): Promise<void> {
    this.putState(id, await this.backend.chat.setSettings(id, settings));
  }

  /**
   * Tells the backend whether the user is editing a message while the loop runs, so that it
   * stops at its next automatic turn instead of answering past the person (loop.go). Only
   * changes are sent, one at a time, in order; a failure is reported, never thrown.
   */
  noteEditing(id: string, editing: boolean): void {
    const sent = this.editingSent.get(id) ?? this.conversation(id).state.editing;
    if (sent === editing) return;
    this.editingSent.set(id, editing);
    const prev = this.editingCall.get(id) ?? Promise.resolve();
    const call = prev
      .then(() => this.backend.chat.setEditing(id, editing))
      .catch((err) => this.report(`Could not tell the chat you are editing: ${errorMessage(err)}`));
    this.editingCall.set(id, call);
    void call.finally(() => {
      if (this.editingCall.get(id) === call) this.editingCall.delete(id);
    });
  }

  async answerApproval(a: ChatApproval, answer: ApprovalAnswer, reason: string): Promise<void> {
    await this.backend.chat.answerApproval(a.id, answer, reason);
    const c = this.conversations[a.conversationId];
    if (c?.state.approvals.some((x) => x.id === a.id)) {
      this.putState(a.conversationId, { ...c.state, approvals: c.state.approvals.filter((x) => x.id !== a.id) });
    }
  }
}
