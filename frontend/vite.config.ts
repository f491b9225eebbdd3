import { svelte } from '@sveltejs/vite-plugin-svelte';
import { svelteTesting } from '@testing-library/svelte/vite';
import { defineConfig } from 'vitest/config';

/** Where `npm run dev` forwards /api: a local `clusterspace serve` on its default address. */
const DEV_BACKEND = 'http://127.0.0.1:4444';

export default defineConfig({
  plugins: [svelte(), svelteTesting()],
  // The Go binary embeds dist/ and serves it at the root, in the desktop window and under `serve`.
  base: '/',
  server: {
    proxy: { '/api': { target: DEV_BACKEND, ws: true } },
  },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
  },
  test: {
    include: ['src/**/*.test.ts'],
    environment: 'node',
  },
});
