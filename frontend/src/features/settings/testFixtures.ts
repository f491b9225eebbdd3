// What the settings tests share: a saved provider and SSH server as the backend lists them, and
// a way to type into and submit a rendered form by its test ids.
import { fireEvent, screen } from '@testing-library/svelte';
import type { Provider, SSHServer } from '../../lib/api';
import { savedProvider as baseProvider } from '../../lib/api/providers.fixture';

/** An OpenAI provider p1 with its API key set. */
export function savedProvider(over: Partial<Provider> = {}): Provider {
  return baseProvider('p1', {
    name: 'OpenAI',
    baseUrl: 'https://api.openai.com/v1',
    model: 'gpt-4o',
    apiKeySet: true,
    apiKeyHint: 'sk-…abcd',
    ...over,
  });
}

export function savedServer(over: Partial<SSHServer> = {}): SSHServer {
  return {
    id: 'ssh-1',
    name: 'build box',
    host: '10.0.0.5',
    port: 2222,
    user: 'ci',
    keyPath: '',
    passwordSet: true,
    createdAt: '2025-01-01T00:00:00Z',
    updatedAt: '2025-01-01T00:00:00Z',
    ...over,
  };
}

/** The inputs of a rendered form by test id, typing into one, and its Save button. */
export function formDriver(saveTestid: string) {
  const field = (id: string) => screen.getByTestId(id) as HTMLInputElement;
  const type = (id: string, value: string) => fireEvent.input(field(id), { target: { value } });
  const submit = () => fireEvent.click(screen.getByTestId(saveTestid));
  return { field, type, submit };
}
