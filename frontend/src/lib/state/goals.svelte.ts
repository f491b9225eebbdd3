import type { Backend } from '../api';

/**
 * The goals the dashboard, the pane badges and the approval modal show, kept current from the
 * 'goals' event topic. (Filled in with the Goal Dashboard.)
 */
export class GoalStore {
  constructor(
    readonly backend: Backend,
    readonly report: (message: string) => void,
  ) {}

  /** Follows the backend's goal events; returns the stop function. */
  sync(): () => void {
    return () => {};
  }
}
