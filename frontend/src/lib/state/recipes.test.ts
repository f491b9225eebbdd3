import { describe, expect, it, vi } from 'vitest';
import type { Backend, Recipe, RecipesApi } from '../api';
import { bothDoors } from '../api/transports.fixture';
import { RecipeStore, missingParams, runSummary } from './recipes.svelte';
// Go's real answers (backend/api TestGoldenBrowserAnswers: a recipe run in a headless Chromium).
import saveRecipe from '../api/testdata/SaveRecipe.json';
import listRecipes from '../api/testdata/ListRecipes.json';
import runRecipe from '../api/testdata/RunRecipe.json';

const recipe: Recipe = {
  name: 'site search',
  description: 'Search',
  steps: [
    { tool: 'browser_navigate', args: { url: 'https://a.example/search' } },
    { tool: 'browser_type', args: { selector: '#q', text: '{{query}}' } },
  ],
  params: ['query'],
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
};

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

describe('backend.recipes on both transports', () => {
  it("sends each as its call name and arguments, and reads Go's real answers", async () => {
    const answers = { SaveRecipe: saveRecipe, ListRecipes: listRecipes, RunRecipe: runRecipe };
    for (const { door, api, sent } of bothDoors(answers)) {
      const steps = [{ tool: 'browser_navigate', args: { url: 'http://127.0.0.1:1/{{path}}' } }];
      const saved = await api.recipes.save({ name: 'open page', description: 'Opens a page', steps });
      expect(saved, door).toMatchObject({ name: 'open page', steps, params: ['path'] });
      const [listed] = await api.recipes.list();
      expect(listed.steps[0].args).toEqual({ url: 'http://127.0.0.1:1/{{path}}' });
      const run = await api.recipes.run('open page', 'pane-0', { path: 'fourth' });
      expect(run.completed).toBe(true);
      expect(runSummary(run, listed.steps.length)).toBe('Done: all 1 steps ran.');
      await api.recipes.remove('open page');
      expect(sent(), door).toEqual([
        ['SaveRecipe', { name: 'open page', description: 'Opens a page', steps }],
        ['ListRecipes', {}],
        ['RunRecipe', { name: 'open page', paneId: 'pane-0', params: { path: 'fourth' } }],
        ['DeleteRecipe', { name: 'open page' }],
      ]);
    }
  });

  it('a refused step names its field, alike on both doors', async () => {
    const refusal = { status: 400, body: { error: 'steps[0].tool: write_to_terminal is not a browser tool', field: 'steps[0].tool' } };
    for (const { door, api } of bothDoors({}, refusal)) {
      const err = await api.recipes.save({ name: 'r', description: '', steps: [{ tool: 'write_to_terminal', args: {} }] }).catch((e) => e);
      expect(err.field, door).toBe('steps[0].tool');
      expect(err.message).toContain('not a browser tool');
    }
  });
});
