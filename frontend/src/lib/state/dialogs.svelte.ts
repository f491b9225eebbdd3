export interface ConfirmOptions {
  title: string;
  message: string;
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
