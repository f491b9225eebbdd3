import type { Provider, ProviderInput } from './types';

/** What the provider form sends for a local OpenAI-style server: no key, no limits, no vision model. */
export function localProviderInput(over: Partial<ProviderInput> = {}): ProviderInput {
  return {
    name: 'Local',
    kind: 'openai',
    baseUrl: 'http://127.0.0.1:11434/v1',
    model: 'llama3',
    visionModel: '',
    temperature: null,
    maxTokens: 0,
    thinking: false,
    contextWindow: 0,
    ...over,
  };
}

/** A saved provider `id` (named "Provider id") over localProviderInput, without an API key. */
export function savedProvider(id: string, over: Partial<Provider> = {}): Provider {
  return {
    id,
    ...localProviderInput({ name: `Provider ${id}` }),
    apiKeySet: false,
    apiKeyHint: '',
    createdAt: '2025-01-01T00:00:00Z',
    updatedAt: '2025-01-01T00:00:00Z',
    ...over,
  };
}
