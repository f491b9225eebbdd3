import type { Backend, Recipe, RecipeRunResult } from '../api';
import { attempt } from './load';

/**
 * The saved browser recipes, for a browser pane's menu: read when the menu opens (the agent
 * may have saved one since), run in the pane as the person's own action, deleted.
 */
export class RecipeStore {
  recipes = $state.raw<Recipe[]>([]);
  loaded = $state(false);
  loadError = $state('');

  constructor(private readonly backend: Backend) {}

  async load(): Promise<void> {
    this.loadError = await attempt(async () => {
      this.recipes = await this.backend.recipes.list();
      this.loaded = true;
    });
  }

  async remove(name: string): Promise<void> {
    await this.backend.recipes.remove(name);
    this.recipes = this.recipes.filter((r) => r.name !== name);
  }

  /** Rejects, before any step runs, when a param is left empty. */
  run(recipe: Recipe, paneId: string, values: Record<string, string>): Promise<RecipeRunResult> {
    const missing = missingParams(recipe, values);
    if (missing.length > 0) {
      return Promise.reject(new Error(`Fill in ${missing.join(', ')} first: nothing was run.`));
    }
    const params: Record<string, string> = {};
    for (const p of recipe.params) params[p] = values[p];
    return this.backend.recipes.run(recipe.name, paneId, params);
  }
}

/** The params of a recipe still empty in values. */
export function missingParams(recipe: Recipe, values: Record<string, string>): string[] {
  return recipe.params.filter((p) => (values[p] ?? '').trim() === '');
}

/** One line on how a run went, for the menu. */
export function runSummary(r: RecipeRunResult, total: number): string {
  if (r.completed) return `Done: all ${total} steps ran.`;
  const last = r.steps[r.steps.length - 1];
  return last ? `Stopped at step ${last.index + 1} of ${total} (${last.tool}): ${last.text}` : 'Nothing ran.';
}
