import { errorMessage } from '../api';

/**
 * Runs one read of a store's data and says how it went: '' after a success, the error's message
 * after a failure. A store keeps the answer in its loadError for a panel to show.
 */
export async function attempt(read: () => Promise<void>): Promise<string> {
  try {
    await read();
    return '';
  } catch (err) {
    return errorMessage(err);
  }
}

/** One read at a time: a call while one is under way gets that read's promise, not a second request. */
export class SharedRead {
  private running: Promise<void> | null = null;

  run(start: () => Promise<void>): Promise<void> {
    this.running ??= start().finally(() => {
      this.running = null;
    });
    return this.running;
  }
}
