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
