import { BackendError, errorMessage } from '../api';

/** A form's values turned into what to send, or the field that does not parse and why. */
export type Parsed<I, F extends string> = { ok: true; input: I } | { ok: false; field: F; message: string };

/**
 * The errors of an add or edit form and whether it is saving. An error that names one of the
 * form's fields goes under that field; any other goes above the buttons. Typing in a field takes
 * its error back.
 */
export class FormErrors<F extends string> {
  fields = $state<Partial<Record<F, string>>>({});
  /** The error that names no field. */
  form = $state('');
  busy = $state(false);

  constructor(private readonly isField: (name: string | undefined) => name is F) {}

  clear(): void {
    this.fields = {};
    this.form = '';
  }

  /** Blames one field (the form's own checks). */
  setField(field: F, message: string): void {
    this.fields = { [field]: message } as Partial<Record<F, string>>;
  }

  /**
   * Shows a failure under the field it names; else hands it to `other` when given (a failed
   * test is a result, not a form error), else above the buttons.
   */
  show(err: unknown, other?: (message: string) => void): void {
    const field = err instanceof BackendError ? err.field : undefined;
    if (this.isField(field)) this.setField(field, errorMessage(err));
    else if (other) other(errorMessage(err));
    else this.form = errorMessage(err);
  }

  /** For the form's oninput: typing in a field takes back the error shown under it. */
  readonly oninput = (e: Event): void => {
    const name = (e.target as HTMLInputElement | null)?.name;
    if (this.isField(name) && this.fields[name]) this.fields = { ...this.fields, [name]: undefined };
  };

  /** The input to send, or null after blaming the field that does not parse. */
  parsed<I>(result: Parsed<I, F>): I | null {
    this.clear();
    if (result.ok) return result.input;
    this.setField(result.field, result.message);
    return null;
  }

  /**
   * A form's Save: blames the field that does not parse; closes at once (`done`) when the edit
   * changed nothing; else saves, then `done`, or shows where the save failed.
   */
  async submit<I>(result: Parsed<I, F>, save: (input: I) => Promise<unknown>, done: () => void, unchanged?: (input: I) => boolean) {
    if (this.busy) return;
    const input = this.parsed(result);
    if (input === null) return;
    if (unchanged?.(input)) return done();
    if (await this.run(() => save(input))) done();
  }

  /** Runs a save once at a time, showing its failure; true when it went through. */
  async run(action: () => Promise<unknown>): Promise<boolean> {
    if (this.busy) return false;
    this.busy = true;
    try {
      await action();
      return true;
    } catch (err) {
      this.show(err);
      return false;
    } finally {
      this.busy = false;
    }
  }
}
