import { fireEvent, screen } from '@testing-library/svelte';
import { expect, vi } from 'vitest';

/**
 * Works a pane header's tabs of `kind` (TabStrip's kind: 'terminal', 'browser') as a person
 * would, in pane p1 showing two tabs: clicks the second (it becomes the shown one), closes the
 * first (gone once the backend closed it) and clicks "+". `calls` are the backend's fakes for
 * switching and closing, checked as each click is made; what "+" makes is the caller's to check.
 */
export async function switchCloseAndAdd(kind: string, calls: { activate: unknown; close: unknown }): Promise<void> {
  const tabs = () => screen.queryAllByTestId(`${kind}-tab`);
  const [first, second] = tabs().map((t) => t.dataset.tabId);
  await fireEvent.click(tabs()[1]);
  expect(calls.activate).toHaveBeenCalledWith('p1', second);
  expect(tabs()[1].dataset.active).toBe('true');
  await fireEvent.click(screen.getAllByTestId(`${kind}-close-tab`)[0]);
  await vi.waitFor(() => expect(tabs().map((t) => t.dataset.tabId)).toEqual([second]));
  expect(calls.close).toHaveBeenCalledWith('p1', first);
  await fireEvent.click(screen.getByTestId(`${kind}-new-tab`));
}
