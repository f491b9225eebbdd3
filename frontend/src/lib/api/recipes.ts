// Browser recipes: saved sequences of browser tool calls with {{param}} placeholders. The
// agent saves and runs them (each step through its policy); the person lists, runs and deletes
// them from a browser pane's menu. The Backend exposes one implementation as `backend.recipes`.
import { callWails } from './errors';
import type { JsonRequest } from './goals';

export interface RecipeStep {
  tool: string;
  /** The tool's arguments without pane_id; strings may hold {{param}} placeholders. */
  args: Record<string, unknown>;
}

export interface Recipe {
  name: string;
  description: string;
  steps: RecipeStep[];
  /** The placeholders the steps use, in order of first use: a run asks for each. */
  params: string[];
  createdAt: string;
  updatedAt: string;
}

export interface RecipeStepResult {
  index: number;
  tool: string;
  text: string;
  isError: boolean;
}

/** A run stops at the first step that fails; completed when every step ran without error. */
export interface RecipeRunResult {
  recipe: string;
  paneId: string;
  steps: RecipeStepResult[];
  completed: boolean;
}

/** Fields the backend may blame in a recipe or a run ("steps[2].args", "params", "name", …). */
export const RECIPE_ERROR_FIELDS = ['name', 'description', 'steps', 'params', 'pane_id'] as const;

export interface RecipesApi {
  list(): Promise<Recipe[]>;
  save(recipe: { name: string; description: string; steps: RecipeStep[] }): Promise<Recipe>;
  remove(name: string): Promise<void>;
  /** Runs it in the pane as the person's own action; a missing param rejects before any step. */
  run(name: string, paneId: string, params: Record<string, string>): Promise<RecipeRunResult>;
}

function arr<T>(v: unknown): T[] {
  return Array.isArray(v) ? (v as T[]) : [];
}

/** A recipe as received, with the lists Go may send as null made empty. */
export function normalizeRecipe(raw: unknown): Recipe {
  const r = (raw ?? {}) as Partial<Recipe>;
  return {
    name: String(r.name ?? ''),
    description: String(r.description ?? ''),
    steps: arr<RecipeStep>(r.steps).map((s) => ({ tool: String(s?.tool ?? ''), args: (s?.args ?? {}) as Record<string, unknown> })),
    params: arr<string>(r.params),
    createdAt: String(r.createdAt ?? ''),
    updatedAt: String(r.updatedAt ?? ''),
  };
}

function normalizeRun(raw: unknown): RecipeRunResult {
  const r = (raw ?? {}) as Partial<RecipeRunResult>;
  return { recipe: String(r.recipe ?? ''), paneId: String(r.paneId ?? ''), steps: arr<RecipeStepResult>(r.steps), completed: !!r.completed };
}

const enc = encodeURIComponent;

export class HttpRecipes implements RecipesApi {
  constructor(private readonly json: JsonRequest) {}
  async list() {
    return arr((await this.json<{ recipes: unknown }>('GET', '/api/recipes'))?.recipes).map(normalizeRecipe);
  }
  async save(recipe: { name: string; description: string; steps: RecipeStep[] }) {
    return normalizeRecipe(await this.json('POST', '/api/recipes', recipe));
  }
  async remove(name: string) {
    await this.json('DELETE', `/api/recipes/${enc(name)}`);
  }
  async run(name: string, paneId: string, params: Record<string, string>) {
    return normalizeRun(await this.json('POST', `/api/recipes/${enc(name)}/run`, { paneId, params }));
  }
}

/** The bound Go methods of app_recipes.go. */
export interface WailsRecipeMethods {
  ListRecipes(): Promise<unknown[] | null>;
  SaveRecipe(r: { name: string; description: string; steps: RecipeStep[] }): Promise<unknown>;
  DeleteRecipe(name: string): Promise<void>;
  RunRecipe(name: string, paneId: string, params: Record<string, string>): Promise<unknown>;
}

export class WailsRecipes implements RecipesApi {
  constructor(private readonly app: WailsRecipeMethods) {}
  private call<T>(fn: () => Promise<T>) {
    return callWails(fn, RECIPE_ERROR_FIELDS);
  }
  async list() {
    return arr(await this.call(() => this.app.ListRecipes())).map(normalizeRecipe);
  }
  async save(recipe: { name: string; description: string; steps: RecipeStep[] }) {
    return normalizeRecipe(await this.call(() => this.app.SaveRecipe({ ...recipe })));
  }
  remove(name: string) {
    return this.call(() => this.app.DeleteRecipe(name));
  }
  async run(name: string, paneId: string, params: Record<string, string>) {
    return normalizeRun(await this.call(() => this.app.RunRecipe(name, paneId, params)));
  }
}
