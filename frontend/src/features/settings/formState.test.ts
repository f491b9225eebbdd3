import { describe, expect, it } from 'vitest';
import type { Provider } from '../../lib/api';
import { localProviderInput } from '../../lib/api/providers.fixture';
import {
  apiKeyChange,
  changedFields,
  draftFromDiscovered,
  draftFromProvider,
  emptyDraft,
  toInput,
  withKind,
  type KeyEdit,
} from './formState';
import { savedProvider } from './testFixtures';

const saved = savedProvider({ temperature: 0.7, contextWindow: 128000 });

const untouched: KeyEdit = { value: '', remove: false };

describe('provider form drafts', () => {
  it('shows a saved provider with its defaults as empty inputs', () => {
    expect(draftFromProvider({ ...saved, temperature: null })).toEqual({
      name: 'OpenAI',
      kind: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      model: 'gpt-4o',
      visionModel: '',
      temperature: '',
      maxTokens: '',
      thinking: false,
      contextWindow: '128000',
    });
    expect(draftFromProvider(saved).temperature).toBe('0.7');
  });

  it('prefills a discovered server: OpenAI protocol, its name, URL and first model', () => {
    const d = draftFromDiscovered({ name: 'Ollama', kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', models: ['qwen3', 'llama3'] });
    expect(d).toMatchObject({ name: 'Ollama', kind: 'openai', baseUrl: 'http://127.0.0.1:11434/v1', model: 'qwen3' });
    expect(draftFromDiscovered({ name: 'local', kind: 'openai', baseUrl: 'http://h:8080/v1', models: [] }).model).toBe('');
  });

  it("clears the old kind's default URL when the kind changes, and keeps a custom one", () => {
    const fromOpenAI = withKind({ ...emptyDraft(), baseUrl: 'https://api.openai.com/v1/' }, 'anthropic');
    expect(fromOpenAI).toMatchObject({ kind: 'anthropic', baseUrl: '' });
    const custom = withKind({ ...emptyDraft(), baseUrl: 'https://openrouter.ai/api/v1' }, 'anthropic');
    expect(custom.baseUrl).toBe('https://openrouter.ai/api/v1');
  });
});

describe('toInput', () => {
  it('turns empty numbers into the defaults and trims the text', () => {
    const r = toInput({ ...emptyDraft(), name: ' Local ', model: ' llama3 ', baseUrl: ' http://h:1234/v1 ' }, untouched);
    expect(r).toEqual({
      ok: true,
      input: localProviderInput({ baseUrl: 'http://h:1234/v1' }),
    });
  });

  it('parses numbers as people type them', () => {
    const r = toInput({ ...emptyDraft(), temperature: '0,5', maxTokens: '8_192', contextWindow: '128,000' }, untouched);
    expect(r.ok && [r.input.temperature, r.input.maxTokens, r.input.contextWindow]).toEqual([0.5, 8192, 128000]);
    const zero = toInput({ ...emptyDraft(), temperature: '0' }, untouched);
    expect(zero.ok && zero.input.temperature).toBe(0);
  });

  it('names the field whose number does not parse, and leaves ranges to the backend', () => {
    expect(toInput({ ...emptyDraft(), temperature: 'warm' }, untouched)).toMatchObject({ ok: false, field: 'temperature' });
    expect(toInput({ ...emptyDraft(), maxTokens: '4k' }, untouched)).toMatchObject({ ok: false, field: 'maxTokens' });
    expect(toInput({ ...emptyDraft(), contextWindow: '1.5' }, untouched)).toMatchObject({ ok: false, field: 'contextWindow' });
    const r = toInput({ ...emptyDraft(), maxTokens: '4k' }, untouched);
    expect(!r.ok && r.message).toMatch(/^maxTokens: "4k" is not a whole number/);
    expect(toInput({ ...emptyDraft(), temperature: '5' }, untouched)).toMatchObject({ ok: true });
  });
});

describe('the API key', () => {
  it('is omitted unless the user typed a new one or asked to remove it', () => {
    expect(apiKeyChange({ value: '', remove: false })).toEqual({});
    expect(apiKeyChange({ value: '   ', remove: false })).toEqual({});
    expect(apiKeyChange({ value: 'sk-new', remove: false })).toEqual({ apiKey: 'sk-new' });
    expect(apiKeyChange({ value: '', remove: true })).toEqual({ apiKey: '' });
    // Remove wins over a value typed before pressing it.
    expect(apiKeyChange({ value: 'sk-new', remove: true })).toEqual({ apiKey: '' });

    const kept = toInput(draftFromProvider(saved), untouched);
    expect(kept.ok && 'apiKey' in kept.input).toBe(false);
    const replaced = toInput(draftFromProvider(saved), { value: 'sk-replaced', remove: false });
    expect(replaced.ok && replaced.input.apiKey).toBe('sk-replaced');
    const removed = toInput(draftFromProvider(saved), { value: '', remove: true });
    expect(removed.ok && removed.input.apiKey).toBe('');
  });
});

describe('changedFields', () => {
  function input(over: Partial<Provider> = {}, key: KeyEdit = untouched) {
    const r = toInput(draftFromProvider({ ...saved, ...over }), key);
    if (!r.ok) throw new Error(r.message);
    return r.input;
  }

  it('finds nothing changed in a provider opened and saved as is', () => {
    expect(changedFields(saved, input())).toEqual([]);
  });

  it('names each changed field, and a key only when it is replaced or removed', () => {
    expect(changedFields(saved, input({ model: 'gpt-4.1', temperature: null, thinking: true }))).toEqual([
      'model',
      'temperature',
      'thinking',
    ]);
    expect(changedFields(saved, input({}, { value: 'sk-x', remove: false }))).toEqual(['apiKey']);
    expect(changedFields(saved, input({}, { value: '', remove: true }))).toEqual(['apiKey']);
  });

  it('judges the base URL as the backend stores it', () => {
    expect(changedFields(saved, input({ baseUrl: '' }))).toEqual([]);
    expect(changedFields(saved, input({ baseUrl: 'https://api.openai.com/v1/' }))).toEqual([]);
    expect(changedFields(saved, input({ baseUrl: 'http://127.0.0.1:8000/v1' }))).toEqual(['baseUrl']);
  });
});
