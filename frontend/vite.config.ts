import { svelte } from '@sveltejs/vite-plugin-svelte';
import { svelteTesting } from '@testing-library/svelte/vite';
import { defineConfig } from 'vitest/config';

/** Where `npm run dev` forwards /api: a local `clusterspace serve` on its default address. */
const DEV_BACKEND = 'http://127.0.0.1:4444';

/**
 * Vite serves files only from under the project and node_modules as it finds them. A git
 * worktree may link node_modules to another checkout's, whose real path is elsewhere: without it
 * here, test setup files from there (the testing library's cleanup) cannot be loaded.
 */
async function allowedDirs(): Promise<string[]> {
  // Typed by hand: the app's tsconfig has no Node types, and this is the one Node call here.
  const fs = (await import('node:fs' as string)) as { realpathSync(path: string): string };
  const dirs = ['.'];
  try {
    dirs.push(fs.realpathSync(new URL('./node_modules', import.meta.url).pathname));
  } catch {
    // No node_modules yet (before `npm ci`): nothing more to allow.
  }
  return dirs;
}

export default defineConfig({
  plugins: [svelte(), svelteTesting()],
  // The Go binary embeds dist/ and serves it at the root, in the desktop window and under `serve`.
  base: '/',
  server: {
    fs: { allow: await allowedDirs() },
    proxy: { '/api': { target: DEV_BACKEND, ws: true } },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // One bundle, served from this machine or embedded in the desktop binary, so its size costs
    // no network time; xterm.js and its WebGL renderer make up most of it.
    chunkSizeWarningLimit: 1024,
    // One stylesheet, linked from index.html. With a stylesheet per lazy chunk, importing the
    // chunk waits for its <link>'s load event, and WebKitGTK now and then never fires it: the
    // import never settled and the desktop window's terminals stayed blank (xterm's chunk
    // carries xterm.css). All the app's CSS is about 80 KB.
    cssCodeSplit: false,
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
