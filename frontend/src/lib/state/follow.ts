import type { Backend, BackendEvent } from '../api';

/**
 * Follows a backend for a store: every event goes to onEvent, and onConnected runs each time
 * the live connection opens (first: whether it is the first time), so a store can re-read what
 * events may have been lost while it was down. Returns the stop function.
 */
export function followBackend(
  backend: Pick<Backend, 'subscribe' | 'onConnectionChange'>,
  onEvent: (e: BackendEvent) => void,
  onConnected: (first: boolean) => void,
): () => void {
  const stopEvents = backend.subscribe(onEvent);
  let first = true;
  const stopConn = backend.onConnectionChange?.((s) => {
    if (s !== 'connected') return;
    onConnected(first);
    first = false;
  });
  return () => {
    stopEvents();
    stopConn?.();
  };
}

/**
 * followBackend for a store that holds one list the backend pushes whole: re-reads it whenever
 * the live connection reopens (events sent while it was down are gone), once something has
 * been loaded. Returns the stop function.
 */
export function followList(
  backend: Pick<Backend, 'subscribe' | 'onConnectionChange'>,
  store: { readonly loaded: boolean; handleEvent(e: BackendEvent): void; load(): Promise<void> },
): () => void {
  return followBackend(
    backend,
    (e) => store.handleEvent(e),
    () => {
      if (store.loaded) void store.load();
    },
  );
}

/**
 * followBackend for a store that reads everything again whenever the live connection (re)opens
 * (events sent while it was down are gone) and then catches up what else it holds (`catchUp`).
 * The stop function it returns also runs `onStop` (the store's timers).
 */
export function followAndReload(
  store: { readonly backend: Backend; handleEvent(e: BackendEvent): void; load(): Promise<void> },
  catchUp: () => void,
  onStop: () => void,
): () => void {
  const stop = followBackend(
    store.backend,
    (e) => store.handleEvent(e),
    () => {
      void store.load();
      catchUp();
    },
  );
  return () => {
    stop();
    onStop();
  };
}

/** Whether an event's data is an object, whose fields a store can then check one by one. */
export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null;
}
