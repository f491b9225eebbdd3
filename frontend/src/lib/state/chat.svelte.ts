import type { ApprovalAnswer, Backend, BackendEvent, ChatApproval, ChatImage, ChatSettings, ChatState } from '../api';
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

/** What the user typed (and attached) in a workspace's chat input and has not sent. */
export interface Draft {
  text: string;
  images: DraftImage[];
}

/**
 * Each workspace's chat conversation and state, kept current from the 'chat' event topic.
 *
 * A workspace's conversation is read when its panel first shows it; from then on its events are
 * folded in (chatFold.ts), and it is read again when a loop stops (to learn what Resume would
 * do, and to catch messages a slow connection dropped), after Clear, and when the live
 * connection reopens. Events of workspaces never shown are ignored: their first read has it all.
 *
 * The actions reject with the backend's error: the panel shows each where it belongs (a failed
 * send puts the text back in the input).
 */
export class ChatStore {
  conversations = $state.raw<Record<string, Conversation>>({});
  /** Why the last read of a workspace's chat failed; absent after a success. */
  loadErrors = $state.raw<Record<string, string>>({});

  /**
   * Chat approval requests waiting, by workspace, from every workspace's events (shown or
   * not), so the status bar can point at a chat that waits while another workspace is shown.
   */
  asking = $state.raw<Record<string, string[]>>({});

  /** Unsent input per workspace; the input component keeps it current. */
  readonly drafts = new Map<string, Draft>();

  private reads = new Map<string, { running: Promise<void>; again: boolean }>();
  /** The last editing flag sent per workspace, and the call carrying it. */
  private editingSent = new Map<string, boolean>();
  private editingCall = new Map<string, Promise<void>>();

  constructor(
    readonly backend: Backend,
    readonly report: (message: string) => void,
  ) {}

  /** Follows the backend's chat events; re-reads shown conversations on reconnect. Returns the stop function. */
  sync(): () => void {
    return followBackend(
      this.backend,
      (e) => this.handleEvent(e),
      () => {
        for (const ws of Object.keys(this.conversations)) void this.load(ws);
      },
    );
  }

  /** The workspace's conversation as far as it is known (empty until read). */
  conversation(ws: string): Conversation {
    return this.conversations[ws] ?? emptyConversation(ws);
  }

  private trackAsking(ws: string, type: string, id: string | undefined): void {
    const held = this.asking[ws] ?? [];
    let next = held;
    if (type === 'approval_requested' && id && !held.includes(id)) next = [...held, id];
    else if (type === 'approval_resolved' && id) next = held.filter((x) => x !== id);
    else if (type === 'loop_stopped' || type === 'cleared') next = [];
    if (next !== held) this.asking = { ...this.asking, [ws]: next };
  }

  /** Workspaces whose chat waits for an approval, other than `except`. */
  askingElsewhere(except: string | undefined): string[] {
    return Object.entries(this.asking)
      .filter(([ws, ids]) => ws !== except && ids.length > 0)
      .map(([ws]) => ws);
  }

  /** Reads the workspace's conversation unless it is known already. */
  open(ws: string): void {
    if (!this.conversations[ws]?.loaded && !this.reads.has(ws)) void this.load(ws);
  }

  handleEvent(e: BackendEvent): void {
    if (e.topic !== CHAT_TOPIC) return;
    const ev = parseChatEvent(e.data);
    if (!ev) {
      console.warn('clusterspace: chat event without a workspace', e.type);
      return;
    }
    this.trackAsking(ev.workspaceId, ev.type, ev.approval?.id);
    const c = this.conversations[ev.workspaceId];
    if (!c) return;
    this.put(foldEvent(c, ev));
    // A stop carries the state after it (what Resume would start); an older backend's did not.
    if ((ev.type === 'loop_stopped' && !ev.state) || ev.type === 'cleared') void this.load(ev.workspaceId);
  }

  /**
   * Reads the workspace's conversation and state. Calls while a read runs share it and ask for
   * one more read after it, since the running one may predate what prompted them.
   */
  load(ws: string): Promise<void> {
    const current = this.reads.get(ws);
    if (current) {
      current.again = true;
      return current.running;
    }
    const entry = { running: Promise.resolve(), again: false };
    entry.running = (async () => {
      try {
        do {
          entry.again = false;
          await this.read(ws);
        } while (entry.again);
      } finally {
        this.reads.delete(ws);
      }
    })();
    this.reads.set(ws, entry);
    return entry.running;
  }

  private async read(ws: string): Promise<void> {
    if (!this.conversations[ws]) this.put(emptyConversation(ws));
    try {
      for (let i = 0; i < MAX_READS; i++) {
        const mark = readMark(this.conversation(ws));
        const view = await this.backend.chat.get(ws);
        const { conversation, stale } = applyView(this.conversation(ws), view, mark);
        this.put(conversation);
        if (!stale) break;
      }
      if (this.loadErrors[ws] !== undefined) {
        const { [ws]: _, ...rest } = this.loadErrors;
        this.loadErrors = rest;
      }
    } catch (err) {
      this.loadErrors = { ...this.loadErrors, [ws]: errorMessage(err) };
    }
  }

  private put(c: Conversation): void {
    this.conversations = { ...this.conversations, [c.workspaceId]: c };
  }

  /** Applies a state a call returned (newer than anything read before it). */
  private putState(ws: string, state: ChatState): void {
    const c = this.conversation(ws);
    this.put({ ...c, state, stateVersion: c.stateVersion + 1 });
  }

  // ---- actions: each rejects with the backend's error ----------------------------------------

  /**
   * Sends a message ("/critic" toggles the mode). Waits for an editing flag on its way first:
   * arriving after the message it would stop the loop the message starts.
   */
  async send(ws: string, text: string, images: ChatImage[]): Promise<void> {
    const pending = this.editingCall.get(ws);
    this.editingSent.set(ws, false); // the backend clears it with every message
    await pending;
    await this.backend.chat.send(ws, text, images);
    // "/critic" changes only the mode; its 'state' event may be dropped for a slow connection,
    // and the badge must not lie.
    if (text.trim() === CRITIC_COMMAND && images.length === 0) void this.load(ws);
  }

  async stop(ws: string): Promise<void> {
    await this.backend.chat.stop(ws);
    // The loop has ended when stop returns; its loop_stopped event may still be on its way.
    void this.load(ws);
  }

  resume(ws: string): Promise<void> {
    return this.backend.chat.resume(ws);
  }

  clear(ws: string): Promise<void> {
    return this.backend.chat.clear(ws);
  }

  async setCritic(ws: string, on: boolean): Promise<void> {
    this.putState(ws, await this.backend.chat.setCritic(ws, on));
  }

  async setSettings(ws: string, settings: ChatSettings): Promise<void> {
    this.putState(ws, await this.backend.chat.setSettings(ws, settings));
  }

  /**
   * Tells the backend whether the user is editing a message while the loop runs, so that it
   * stops at its next automatic turn instead of answering past the person (loop.go). Only
   * changes are sent, one at a time, in order; a failure is reported, never thrown.
   */
  noteEditing(ws: string, editing: boolean): void {
    const sent = this.editingSent.get(ws) ?? this.conversation(ws).state.editing;
    if (sent === editing) return;
    this.editingSent.set(ws, editing);
    const prev = this.editingCall.get(ws) ?? Promise.resolve();
    const call = prev
      .then(() => this.backend.chat.setEditing(ws, editing))
      .catch((err) => this.report(`Could not tell the chat you are editing: ${errorMessage(err)}`));
    this.editingCall.set(ws, call);
    void call.finally(() => {
      if (this.editingCall.get(ws) === call) this.editingCall.delete(ws);
    });
  }

  async answerApproval(a: ChatApproval, answer: ApprovalAnswer, reason: string): Promise<void> {
    await this.backend.chat.answerApproval(a.id, answer, reason);
    const c = this.conversations[a.workspaceId];
    if (c?.state.approvals.some((x) => x.id === a.id)) {
      this.putState(a.workspaceId, { ...c.state, approvals: c.state.approvals.filter((x) => x.id !== a.id) });
    }
  }
}
