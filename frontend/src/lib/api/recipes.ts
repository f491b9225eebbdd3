// Browser recipes: saved sequences of browser tool calls with {{param}} placeholders. The
// agent saves and runs them (each step through its policy); the person lists, runs and deletes
// them from a browser pane's menu. RecipesCalls are their calls of the table (backend/api
// recipes.go) over either transport; the Backend exposes them as `backend.recipes`.
import type { Call } from './table';
import type * as recipes from './gen/recipes';

/** A step: a browser tool and its arguments (without pane_id); strings may hold {{param}}s. */
export type RecipeStep = Omit<recipes.Step, 'args'> & { args: Record<string, unknown> };

/** A saved recipe; `params` are the placeholders its steps use, in order of first use. */
export type Recipe = Omit<recipes.Recipe, 'steps'> & { steps: RecipeStep[] };

export type RecipeStepResult = recipes.StepResult;

/** A run stops at the first step that fails; completed when every step ran without error. */
export type RecipeRunResult = recipes.RunResult;

export interface RecipesApi {
  list(): Promise<Recipe[]>;
  save(recipe: { name: string; description: string; steps: RecipeStep[] }): Promise<Recipe>;
  remove(name: string): Promise<void>;
  /** Runs it in the pane as the person's own action; a missing param rejects before any step. */
  run(name: string, paneId: string, params: Record<string, string>): Promise<RecipeRunResult>;
}

/** A recipe as Go sends it, its steps' arguments typed as the objects they are. */
function recipeOf(r: recipes.Recipe): Recipe {
  return { ...r, steps: r.steps.map((s) => ({ tool: s.tool, args: (s.args ?? {}) as Record<string, unknown> })) };
}

export class RecipesCalls implements RecipesApi {
  constructor(private readonly call: Call) {}
  async list() {
    return (await this.call('ListRecipes', {})).recipes.map(recipeOf);
  }
  async save(recipe: { name: string; description: string; steps: RecipeStep[] }) {
    const { name, description, steps } = recipe;
    return recipeOf(await this.call('SaveRecipe', { name, description, steps }));
  }
  remove(name: string) {
    return this.call('DeleteRecipe', { name });
  }
  run(name: string, paneId: string, params: Record<string, string>) {
    return this.call('RunRecipe', { name, paneId, params });
  }
}
