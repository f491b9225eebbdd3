// First, so its mark is the moment the bundle began to run.
import { afterFirstPaint, markStartup } from './lib/startup/marks';
import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { pickBackend } from './lib/api';
import { reportUncaughtErrors } from './lib/startup/problems';
import { learnGraphics } from './features/terminal/renderer';

markStartup('script');

const target = document.getElementById('app');
if (!target) throw new Error('index.html has no #app element to mount ClusterSpace into');

// The desktop window draws with the generic font families (app.css, :root[data-window]): each
// named family costs WebKit a font lookup in the first layout, most of what our first paint
// spends above a minimal Wails window's (docs/measurements.md). Set before the first render.
if (window.go?.main?.App) document.documentElement.dataset.window = 'desktop';

const backend = pickBackend();
reportUncaughtErrors(window, backend);
mount(App, { target, props: { backend } });

// Asked once the workspace is drawn: a binding call made before the app's first ones may go
// unanswered while Wails' bridge comes up. The echo probe is for `make bench` only: the desktop
// app started with CLUSTERSPACE_ECHO_PROBE times typed keys' echo.
afterFirstPaint(() => {
  // Before the terminals choose their renderer (they wait for this answer; see renderer.ts).
  if (backend.softwareGraphics) learnGraphics(backend.softwareGraphics());
  void backend.echoProbeKeys?.().then(
    (keys) => {
      if (keys > 0) void import('./features/terminal/echoprobe').then(({ startEchoProbe }) => startEchoProbe(document, keys, (s) => backend.reportEcho?.(s)));
    },
    () => {},
  );
});
