export interface ConfirmOptions {
  title: string;
  message: string;
  /** Shown as a list under the message (what is busy, say). */
  items?: string[];
  confirmLabel?: string;
  cancelLabel?: string;
}

export interface ConfirmRequest extends Required<ConfirmOptions> {
  answer(ok: boolean): void;
}

/** In-app confirmation: one question at a time, answered through the ConfirmDialog component. */
export class Dialogs {
  current = $state.raw<ConfirmRequest | null>(null);

  confirm(opts: ConfirmOptions): Promise<boolean> {
    // A new question replaces an unanswered one, which counts as cancelled.
    this.current?.answer(false);
    return new Promise((resolve) => {
      const request: ConfirmRequest = {
        confirmLabel: 'OK',
        cancelLabel: 'Cancel',
        items: [],
        ...opts,
        answer: (ok) => {
          if (this.current === request) this.current = null;
          resolve(ok);
        },
      };
      this.current = request;
    });
  }
}
