// What the message list shows, built from a conversation: stored messages with their tool calls
// paired to their results, notes, the critic's /done as a marker, live notices where they
// arrived, and the replies still streaming at the end.
import type { ChatImage, ChatMessage, ChatPart } from '../../lib/api';
import type { ChatVerdict, Conversation, LiveTool } from '../../lib/state/chatFold';

/** The critic's whole answer when it is satisfied (chat.DoneCommand). */
export const DONE_COMMAND = '/done';

/** One tool call, collapsed in the list: its arguments and, once known, its result. */
export interface ToolCallView {
  callId: string;
  name: string;
  /** Parsed arguments, or the raw text the model sent when it was not valid JSON. */
  args: unknown;
  argsError?: string;
  result?: { text: string; isError: boolean; images: ChatImage[] };
  running: boolean;
  durationMs?: number;
}

export type ChatItem =
  | {
      kind: 'message';
      key: string;
      source: 'user' | 'actor' | 'critic';
      seq: number;
      text: string;
      reasoning: string;
      images: ChatImage[];
      calls: ToolCallView[];
      partial: boolean;
      streaming: boolean;
      verdict?: ChatVerdict;
    }
  /** Results whose call is not in the list (never expected, but never hidden). */
  | { kind: 'results'; key: string; calls: ToolCallView[] }
  | { kind: 'note'; key: string; text: string }
  | { kind: 'done'; key: string; reasoning: string; verdict?: ChatVerdict }
  | { kind: 'notice'; key: string; text: string };

export function partsText(parts: ChatPart[], kind: 'text' | 'reasoning'): string {
  return parts
    .filter((p) => p.kind === kind)
    .map((p) => (p as { text: string }).text)
    .join('');
}

/** The critic's reply ends the loop: its visible text is exactly /done (chat.IsDone). */
export function isDone(m: ChatMessage): boolean {
  return m.source === 'critic' && partsText(m.message.parts, 'text').trim() === DONE_COMMAND;
}

export function chatItems(c: Conversation): ChatItem[] {
  const results = new Map<string, { text: string; isError: boolean; images: ChatImage[] }>();
  const called = new Set<string>();
  for (const m of c.messages) {
    for (const p of m.message.parts) {
      if (p.kind === 'tool_result') {
        const r = p.toolResult;
        results.set(r.callId, { text: r.text, isError: r.isError === true, images: r.images ?? [] });
      } else if (p.kind === 'tool_call') {
        called.add(p.toolCall.id);
      }
    }
  }

  const items: ChatItem[] = [];
  let notice = 0;
  const noticesUpTo = (seq: number) => {
    while (notice < c.notices.length && c.notices[notice].afterSeq <= seq) {
      const n = c.notices[notice++];
      items.push({ kind: 'notice', key: `notice-${n.id}`, text: n.text });
    }
  };
  noticesUpTo(0);

  for (const m of c.messages) {
    const key = `m-${m.seq}`;
    const parts = m.message.parts;
    const text = partsText(parts, 'text');
    const reasoning = partsText(parts, 'reasoning');
    if (m.source === 'note') {
      items.push({ kind: 'note', key, text });
    } else if (isDone(m)) {
      items.push({ kind: 'done', key, reasoning, verdict: c.verdicts[m.seq] });
    } else if (m.message.role === 'tool') {
      const orphans: ToolCallView[] = [];
      for (const p of parts) {
        if (p.kind === 'tool_result' && !called.has(p.toolResult.callId)) {
          const r = p.toolResult;
          orphans.push({ callId: r.callId, name: r.name, args: undefined, result: results.get(r.callId), running: false });
        }
      }
      if (orphans.length) items.push({ kind: 'results', key, calls: orphans });
    } else {
      const calls: ToolCallView[] = [];
      const images: ChatImage[] = [];
      for (const p of parts) {
        if (p.kind === 'image') images.push(p.image);
        if (p.kind === 'tool_call') calls.push(callView(p.toolCall, results.get(p.toolCall.id), c.tools[p.toolCall.id]));
      }
      items.push({
        kind: 'message',
        key,
        source: m.source,
        seq: m.seq,
        text,
        reasoning,
        images,
        calls,
        partial: m.partial,
        streaming: false,
        verdict: m.source === 'critic' ? c.verdicts[m.seq] : undefined,
      });
    }
    noticesUpTo(m.seq);
  }
  noticesUpTo(Number.POSITIVE_INFINITY);

  for (const s of c.streaming) {
    items.push({
      kind: 'message',
      key: `turn-${s.turn}`,
      source: s.source,
      seq: 0,
      text: s.text,
      reasoning: s.reasoning,
      images: [],
      calls: [],
      partial: false,
      streaming: true,
    });
  }
  return items;
}

function callView(
  call: { id: string; name: string; args?: unknown; rawArgs?: string; argsError?: string },
  stored: ToolCallView['result'],
  live: LiveTool | undefined,
): ToolCallView {
  const args = call.argsError ? (call.rawArgs ?? '') : (call.args ?? {});
  let result = stored;
  if (!result && live && !live.running && live.result !== undefined) {
    result = { text: live.result, isError: live.isError === true, images: [] };
  }
  return {
    callId: call.id,
    name: call.name,
    args,
    argsError: call.argsError,
    result,
    running: !result && live?.running === true,
    durationMs: live?.durationMs,
  };
}
