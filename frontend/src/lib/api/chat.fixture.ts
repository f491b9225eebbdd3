import { vi } from 'vitest';
import type { ChatApi } from './chat';
import { normalizeChatConversation, normalizeChatState } from './chat';

/**
 * A chat API for tests, every call a vi.fn. By default a workspace has one conversation with
 * the workspace's own id (so events name both alike), empty; the actions succeed and answer
 * the state they set. `over` replaces any call.
 */
export function fakeChatApi(over: Partial<ChatApi> = {}): ChatApi {
  return {
    list: vi.fn(async (ws: string) => [normalizeChatConversation({ conversationId: ws, workspaceId: ws })]),
    create: vi.fn(async (ws: string) => normalizeChatConversation({ conversationId: `${ws}-new`, workspaceId: ws })),
    rename: vi.fn(async (id: string, title: string) => normalizeChatState({ conversationId: id, workspaceId: id, title })),
    remove: vi.fn(async () => {}),
    get: vi.fn(async (id: string) => ({ messages: [], state: normalizeChatState({ conversationId: id, workspaceId: id }) })),
    send: vi.fn(async () => {}),
    stop: vi.fn(async () => {}),
    resume: vi.fn(async () => {}),
    clear: vi.fn(async () => {}),
    setCritic: vi.fn(async (ws: string, on: boolean) => normalizeChatState({ workspaceId: ws, criticMode: on })),
    setSettings: vi.fn(async (ws: string) => normalizeChatState({ workspaceId: ws })),
    setEditing: vi.fn(async () => {}),
    answerApproval: vi.fn(async () => ({}) as never),
    ...over,
  };
}
