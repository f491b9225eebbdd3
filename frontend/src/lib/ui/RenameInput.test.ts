// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import RenameInput from './RenameInput.svelte';

function setup() {
  const ondone = vi.fn();
  const outside = vi.fn();
  document.addEventListener('keydown', outside);
  render(RenameInput, { value: 'Old', label: 'Pane label', testid: 'rn', width: '10em', ondone });
  const input = screen.getByTestId('rn') as HTMLInputElement;
  return { ondone, outside, input };
}

describe('RenameInput', () => {
  it('opens focused with the old name selected', () => {
    const { input } = setup();
    expect(document.activeElement).toBe(input);
    expect([input.selectionStart, input.selectionEnd]).toEqual([0, 3]);
  });

  it('hands over the trimmed name on Enter, null on Escape, and keeps the keys to itself', async () => {
    const { ondone, outside, input } = setup();
    await fireEvent.input(input, { target: { value: '  New  ' } });
    await fireEvent.keyDown(input, { key: 'Enter' });
    expect(ondone).toHaveBeenLastCalledWith('New', false);
    await fireEvent.keyDown(input, { key: 'Escape' });
    expect(ondone).toHaveBeenLastCalledWith(null, false);
    expect(outside).not.toHaveBeenCalled();
    document.removeEventListener('keydown', outside);
  });

  it('hands over the name when it loses the focus', async () => {
    const { ondone, input } = setup();
    await fireEvent.input(input, { target: { value: '' } });
    await fireEvent.blur(input);
    expect(ondone).toHaveBeenCalledWith('', true);
  });
});
