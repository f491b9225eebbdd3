// Runes everywhere: the project is Svelte 5 only, and this turns a stray legacy-mode component
// into a compile error instead of a silent mode switch.
/** @type {import('@sveltejs/vite-plugin-svelte').SvelteConfig} */
export default {
  compilerOptions: { runes: true },
};
