import { svelte } from '@sveltejs/vite-plugin-svelte';
import { svelteTesting } from '@testing-library/svelte/vite';
import { defineConfig } from 'vitest/config';

/** Where `npm run dev` forwards /api: a local `clusterspace serve` on its default address. */
const DEV_BACKEND = 'http://127.0.0.1:4444';

export default defineConfig(({ mode }) => ({
  plugins: [svelte(), svelteTesting()],
  // The Go binary embeds dist/ and serves it at the root, in the desktop window and under `serve`.
  base: '/',
  server: {
    proxy: { '/api': { target: DEV_BACKEND, ws: true } },
    // Tests only: node_modules may be a symlink to another checkout's (a git worktree shares the
    // main one's), and Vite would refuse the testing library's setup file from outside this
    // folder, failing every component test. The dev server keeps the strict default.
    fs: mode === 'test' ? { strict: false } : undefined,
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // One bundle, served from this machine or embedded in the desktop binary, so its size costs
    // no network time; xterm.js and its WebGL renderer make up most of it.
    chunkSizeWarningLimit: 1024,
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
}));
