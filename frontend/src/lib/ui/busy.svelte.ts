import { errorMessage } from '../api';

/**
 * One control's request in flight: `busy` while it runs (to disable its buttons), `error` with
 * what went wrong (shown next to it), cleared when the next one starts.
 */
export class Busy {
  busy = $state(false);
  error = $state('');

  /** Runs the request; true when it succeeded. */
  async run(fn: () => Promise<unknown>): Promise<boolean> {
    this.busy = true;
    this.error = '';
    try {
      await fn();
      return true;
    } catch (err) {
      this.error = errorMessage(err);
      return false;
    } finally {
      this.busy = false;
    }
  }
}
