// A clock for relative times and running timers: `now` is redrawn every `everyMs` while
// `running()` holds (always, by default). Call it while a component is made: it stops with it.

export function clock(everyMs: number, running: () => boolean = () => true): { readonly now: number } {
  let now = $state(Date.now());
  $effect(() => {
    if (!running()) return;
    now = Date.now();
    const t = setInterval(() => (now = Date.now()), everyMs);
    return () => clearInterval(t);
  });
  return {
    get now() {
      return now;
    },
  };
}
