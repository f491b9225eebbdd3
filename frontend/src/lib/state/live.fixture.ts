import { vi } from 'vitest';
import type { Backend, BackendEvent, ConnectionState } from '../api';

/**
 * The live side of a fake backend for tests of the stores: `backend` (spread it into the fake)
 * has subscribe and onConnectionChange as a store calls them; `emit` sends the subscriber an
 * event and `setConn` reports a connection state, as the real transports do. Each stop
 * function detaches its handler, so nothing reaches a store that stopped following.
 */
export function fakeLive() {
  let emit: (e: BackendEvent) => void = () => {};
  let setConn: (s: ConnectionState) => void = () => {};
  return {
    backend: {
      subscribe: (h: (e: BackendEvent) => void) => {
        emit = h;
        return () => (emit = () => {});
      },
      onConnectionChange: (h: (s: ConnectionState) => void) => {
        setConn = h;
        return () => (setConn = () => {});
      },
    },
    emit: (e: BackendEvent) => emit(e),
    setConn: (s: ConnectionState) => setConn(s),
  };
}

/**
 * A fake web backend for a store's tests: `methods` (the calls the store makes, usually vi.fn
 * fakes) over the live side of fakeLive, whose `emit` and `setConn` come with it.
 */
export function liveBackend(methods: object) {
  const live = fakeLive();
  const backend = { ...live.backend, kind: 'web', ...methods } as unknown as Backend;
  return { backend, emit: live.emit, setConn: live.setConn };
}

/** How many warnings `fn` logs (kept off the test's output): a store warns of a malformed event. */
export function warningsDuring(fn: () => void): number {
  const warn = vi.spyOn(console, 'warn').mockImplementation(() => {});
  try {
    fn();
    return warn.mock.calls.length;
  } finally {
    warn.mockRestore();
  }
}
