import { describe, expect, it, vi } from 'vitest';
import type { Backend, Recipe, RecipesApi } from '../api';
import { HttpRecipes, normalizeRecipe } from '../api';
import { RecipeStore, missingParams, runSummary } from './recipes.svelte';

const recipe: Recipe = normalizeRecipe({
  name: 'site search',
  description: 'Search',
  steps: [
    { tool: 'browser_navigate', args: { url: 'https://a.example/search' } },
    { tool: 'browser_type', args: { selector: '#q', text: '{{query}}' } },
  ],
  params: ['query'],
});

function store(api: Partial<RecipesApi>) {
  return new RecipeStore({ recipes: api } as unknown as Backend);
}

describe('RecipeStore', () => {
  it('refuses a run with a param left empty before asking the backend', async () => {
    const run = vi.fn();
    const s = store({ run });
    await expect(s.run(recipe, 'web-1', { query: '  ' })).rejects.toThrow('Fill in query first: nothing was run.');
    expect(run).not.toHaveBeenCalled();
    expect(missingParams(recipe, {})).toEqual(['query']);
  });

  it('runs in the pane with exactly the recipe params', async () => {
    const run = vi.fn(async () => ({ recipe: 'site search', paneId: 'web-1', steps: [], completed: true }));
    const s = store({ run });
    await s.run(recipe, 'web-1', { query: 'gophers', stray: 'x' });
    expect(run).toHaveBeenCalledWith('site search', 'web-1', { query: 'gophers' });
  });

  it('loads, deletes, and says how a run went', async () => {
    const s = store({ list: async () => [recipe], remove: async () => {} });
    await s.load();
    expect(s.recipes.map((r) => r.name)).toEqual(['site search']);
    await s.remove('site search');
    expect(s.recipes).toEqual([]);
    expect(runSummary({ recipe: 'x', paneId: 'p', steps: [], completed: true }, 3)).toBe('Done: all 3 steps ran.');
    expect(
      runSummary(
        { recipe: 'x', paneId: 'p', completed: false, steps: [{ index: 1, tool: 'browser_type', text: 'no element #q', isError: true }] },
        3,
      ),
    ).toBe('Stopped at step 2 of 3 (browser_type): no element #q');
  });
});

describe('HttpRecipes', () => {
  it('normalizes null lists and escapes names in paths', async () => {
    const json = vi.fn(async (_m: string, path: string) =>
      path === '/api/recipes' ? { recipes: [{ name: 'a b', steps: null, params: null }] } : { recipe: 'a b', steps: null, completed: true },
    );
    const api = new HttpRecipes(json as never);
    const [r] = await api.list();
    expect(r.steps).toEqual([]);
    expect(r.params).toEqual([]);
    const res = await api.run('a b', 'web-1', { q: 'x' });
    expect(json).toHaveBeenLastCalledWith('POST', '/api/recipes/a%20b/run', { paneId: 'web-1', params: { q: 'x' } });
    expect(res.steps).toEqual([]);
  });
});
