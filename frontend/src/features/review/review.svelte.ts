// The state of one Changes view: the work's changed files and their diff, page by page; the
// person's comments on it; sending them to the agent. One instance per ref, made by ChangesView
// (landing is LandBox's own); each request's error stays next to the control that made it.
import type { ChangedFile, ChangesPage, CommentSide, ReviewApi, ReviewComment, SendReviewResult } from '../../lib/api';
import { Busy } from '../../lib/ui/busy.svelte';

export type DiffFormat = 'line-by-line' | 'side-by-side';

const FORMAT_KEY = 'clusterspace.review.diffFormat';

/** Unified or side by side: a view preference of this browser, kept like the chat's width. */
export function loadFormat(): DiffFormat {
  try {
    return globalThis.localStorage?.getItem(FORMAT_KEY) === 'side-by-side' ? 'side-by-side' : 'line-by-line';
  } catch {
    return 'line-by-line';
  }
}

export function saveFormat(f: DiffFormat): void {
  try {
    globalThis.localStorage?.setItem(FORMAT_KEY, f);
  } catch {
    // Best effort: the choice just does not outlive the page.
  }
}

/** What the view shows: every file on the pages loaded so far, or one file alone. */
export interface Shown {
  file: string | null;
  patch: string;
  /** The files whose patch was cut short ('' when the page does not say which). */
  truncated: string[];
}

export class ReviewState {
  /** The first page's facts (branch, base, target, tip); null until it arrives. */
  page = $state<ChangesPage | null>(null);
  files = $state<ChangedFile[]>([]);
  /** The patches of the pages loaded so far, in order. */
  patches = $state<string[]>([]);
  /** The files of the pages loaded whose patch was cut short. */
  pagesTruncated = $state<string[]>([]);
  nextOffset = $state(0);
  /** The file picked in the list (its diff alone), or null for all loaded. */
  selected = $state<string | null>(null);
  filePatch = $state('');
  fileTruncated = $state<string[]>([]);

  comments = $state<ReviewComment[]>([]);
  sent = $state<SendReviewResult | null>(null);

  readonly loading = new Busy();
  readonly commenting = new Busy();
  readonly sending = new Busy();

  constructor(
    private readonly api: ReviewApi,
    readonly ref: string,
  ) {}

  readonly pending = $derived(this.comments.filter((c) => !c.sentAt));

  readonly shown: Shown = $derived(
    this.selected === null
      ? { file: null, patch: this.patches.join(''), truncated: this.pagesTruncated }
      : { file: this.selected, patch: this.filePatch, truncated: this.fileTruncated },
  );

  /** Reads the first page and the comments. */
  load(): Promise<boolean> {
    return this.loading.run(async () => {
      const [page, comments] = await Promise.all([this.api.changes(this.ref), this.api.comments(this.ref)]);
      this.page = page;
      this.files = page.files;
      this.patches = [page.patch];
      this.pagesTruncated = cut(page);
      this.nextOffset = page.nextOffset;
      this.comments = comments;
    });
  }

  /** Reads the work again (it ended again, its tip moved): the first page, the comments, the file shown. */
  async reload(): Promise<boolean> {
    const file = this.selected;
    return (await this.load()) && (file === null || (await this.select(file)));
  }

  loadMore(): Promise<boolean> {
    return this.loading.run(async () => {
      const page = await this.api.changes(this.ref, { offset: this.nextOffset });
      const known = new Set(this.files.map((f) => f.path));
      this.files = [...this.files, ...page.files.filter((f) => !known.has(f.path))];
      this.patches = [...this.patches, page.patch];
      this.pagesTruncated = [...this.pagesTruncated, ...cut(page)];
      this.nextOffset = page.nextOffset;
    });
  }

  /** Shows one file's diff alone (null: every file loaded). */
  select(path: string | null): Promise<boolean> {
    this.selected = path;
    if (path === null) return Promise.resolve(true);
    this.filePatch = '';
    this.fileTruncated = [];
    return this.loading.run(async () => {
      const page = await this.api.changes(this.ref, { file: path });
      if (this.selected !== path) return; // another file was picked meanwhile
      this.filePatch = page.patch;
      this.fileTruncated = cut(page);
    });
  }

  /** A comment on a line of a file, or with file '' and line 0 on the whole change. */
  addComment(file: string, line: number, side: CommentSide, body: string): Promise<boolean> {
    return this.commenting.run(async () => {
      const c = await this.api.addComment({ ref: this.ref, file, line, side, body: body.trim() });
      this.comments = [...this.comments, c];
    });
  }

  deleteComment(id: string): Promise<boolean> {
    return this.commenting.run(async () => {
      await this.api.deleteComment(id);
      this.comments = this.comments.filter((c) => c.id !== id);
    });
  }

  /** Sends the pending comments to the agent; they are then marked sent. */
  send(note: string): Promise<boolean> {
    return this.sending.run(async () => {
      const sent = await this.api.send(this.ref, note.trim());
      this.comments = await this.api.comments(this.ref);
      this.sent = sent;
    });
  }
}

/** The files a page cut short; a page that says it cut without naming any gives ['']. */
function cut(page: ChangesPage): string[] {
  if (page.truncatedFiles.length) return page.truncatedFiles;
  return page.truncated ? [''] : [];
}

/** A comment's place, as the diff's line numbers and the comment list name it. */
export function lineKey(file: string, side: CommentSide, line: number): string {
  return `${side}:${line}:${file}`;
}
