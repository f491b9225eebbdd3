import type { Backend } from '../api';

/**
 * Each workspace's chat conversation and state, kept current from the 'chat' event topic.
 * (Filled in with the chat panel.)
 */
export class ChatStore {
  constructor(
    readonly backend: Backend,
    readonly report: (message: string) => void,
  ) {}

  /** Follows the backend's chat events; returns the stop function. */
  sync(): () => void {
    return () => {};
  }
}
