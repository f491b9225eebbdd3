// The provider form's state as pure functions: what the inputs hold (a draft of strings), how a
// draft becomes a ProviderInput, and what an edit changed. The component only wires these up.
import {
  providerKind,
  DEFAULT_BASE_URL,
  type Discovered,
  type Provider,
  type ProviderInput,
  type ProviderKind,
} from '../../lib/api';
import { secretChange, type SecretEdit } from './secretEdit';

/** The form's inputs as typed. Numbers stay strings until saving, so a half-typed one is not lost. */
export interface ProviderDraft {
  name: string;
  kind: ProviderKind;
  /** '' = the kind's default. */
  baseUrl: string;
  model: string;
  visionModel: string;
  /** '' = the server's default. */
  temperature: string;
  /** '' = the default. */
  maxTokens: string;
  thinking: boolean;
  /** '' = unknown. */
  contextWindow: string;
}

/** What the user did to the API key (see SecretEdit). */
export type KeyEdit = SecretEdit;

/** The inputs an error can be shown next to. */
export const FORM_FIELDS = [
  'name',
  'kind',
  'baseUrl',
  'model',
  'visionModel',
  'temperature',
  'maxTokens',
  'contextWindow',
  'apiKey',
] as const;
export type FormField = (typeof FORM_FIELDS)[number];

export function isFormField(field: string | undefined): field is FormField {
  return (FORM_FIELDS as readonly string[]).includes(field ?? '');
}

export const KIND_LABEL: Readonly<Record<ProviderKind, string>> = {
  openai: 'OpenAI-compatible',
  anthropic: 'Anthropic',
};

export function emptyDraft(): ProviderDraft {
  return {
    name: '',
    kind: 'openai',
    baseUrl: '',
    model: '',
    visionModel: '',
    temperature: '',
    maxTokens: '',
    thinking: false,
    contextWindow: '',
  };
}

/** The draft for editing a saved provider; zero and null numbers show as empty (the defaults). */
export function draftFromProvider(p: Provider): ProviderDraft {
  return {
    name: p.name,
    kind: providerKind(p.kind),
    baseUrl: p.baseUrl,
    model: p.model,
    visionModel: p.visionModel,
    temperature: p.temperature === null ? '' : String(p.temperature),
    maxTokens: p.maxTokens ? String(p.maxTokens) : '',
    thinking: p.thinking,
    contextWindow: p.contextWindow ? String(p.contextWindow) : '',
  };
}

/** The draft for adding a server that "Discover" found: its name, URL and first model. */
export function draftFromDiscovered(d: Discovered): ProviderDraft {
  return { ...emptyDraft(), name: d.name, kind: 'openai', baseUrl: d.baseUrl, model: d.models?.[0] ?? '' };
}

/**
 * Switches the kind. A base URL that is the old kind's default is cleared, so the new kind's
 * default applies instead of, say, Anthropic being sent to api.openai.com.
 */
export function withKind(d: ProviderDraft, kind: ProviderKind): ProviderDraft {
  const baseUrl = normalizeUrl(d.baseUrl) === DEFAULT_BASE_URL[d.kind] ? '' : d.baseUrl;
  return { ...d, kind, baseUrl };
}

/** The apiKey part of an input, per secretChange: omitted, '' (remove) or the new key. */
export function apiKeyChange(key: KeyEdit): Pick<ProviderInput, 'apiKey'> {
  const apiKey = secretChange(key);
  return apiKey === undefined ? {} : { apiKey };
}

export type DraftResult =
  | { ok: true; input: ProviderInput }
  | { ok: false; field: FormField; message: string };

/**
 * Turns the draft into the input to send, or names the first number that does not parse. Ranges
 * and required fields are the backend's to check: it says so per field, in words written for
 * people, and keeping one set of rules avoids two that drift apart.
 */
export function toInput(d: ProviderDraft, key: KeyEdit): DraftResult {
  const temperature = parseDecimal(d.temperature);
  if (Number.isNaN(temperature)) {
    return fail('temperature', `"${d.temperature.trim()}" is not a number: enter one such as 0.7, or leave it empty for the server's default`);
  }
  const maxTokens = parseCount(d.maxTokens);
  if (Number.isNaN(maxTokens)) {
    return fail('maxTokens', `"${d.maxTokens.trim()}" is not a whole number of tokens: enter one such as 4096, or leave it empty for the default`);
  }
  const contextWindow = parseCount(d.contextWindow);
  if (Number.isNaN(contextWindow)) {
    return fail('contextWindow', `"${d.contextWindow.trim()}" is not a whole number of tokens: enter one such as 128000, or leave it empty if unknown`);
  }
  return {
    ok: true,
    input: {
      name: d.name.trim(),
      kind: d.kind,
      baseUrl: d.baseUrl.trim(),
      model: d.model.trim(),
      visionModel: d.visionModel.trim(),
      temperature,
      maxTokens,
      thinking: d.thinking,
      contextWindow,
      ...apiKeyChange(key),
    },
  };
}

/** The input fields an edit changes, judged the way the backend stores them. */
export function changedFields(p: Provider, input: ProviderInput): Array<keyof ProviderInput> {
  const changed: Array<keyof ProviderInput> = [];
  const baseUrl = normalizeUrl(input.baseUrl) || DEFAULT_BASE_URL[providerKind(input.kind)];
  if (input.name.trim() !== p.name) changed.push('name');
  if (input.kind !== p.kind) changed.push('kind');
  if (baseUrl !== p.baseUrl) changed.push('baseUrl');
  if (input.model.trim() !== p.model) changed.push('model');
  if (input.visionModel.trim() !== p.visionModel) changed.push('visionModel');
  if (input.temperature !== p.temperature) changed.push('temperature');
  if (input.maxTokens !== p.maxTokens) changed.push('maxTokens');
  if (input.thinking !== p.thinking) changed.push('thinking');
  if (input.contextWindow !== p.contextWindow) changed.push('contextWindow');
  if (input.apiKey !== undefined) changed.push('apiKey');
  return changed;
}

/** As the backend stores a base URL: trimmed, without trailing slashes. */
function normalizeUrl(url: string): string {
  return url.trim().replace(/\/+$/, '');
}

/** '' → null (the default); a decimal comma is accepted; anything else unparseable → NaN. */
function parseDecimal(s: string): number | null {
  const t = s.trim().replace(',', '.');
  if (!t) return null;
  return /^[+-]?(\d+\.?\d*|\.\d+)$/.test(t) ? Number(t) : NaN;
}

/** '' → 0 (the default / unknown); digit-group separators are allowed ("128,000", "8_192"). */
function parseCount(s: string): number {
  const t = s.trim().replace(/[\s,_]/g, '');
  if (!t) return 0;
  return /^\d+$/.test(t) ? Number(t) : NaN;
}

function fail(field: FormField, message: string): DraftResult {
  return { ok: false, field, message: `${field}: ${message}` };
}
