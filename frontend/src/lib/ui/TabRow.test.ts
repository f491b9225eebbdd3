// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import TabRow from './TabRow.svelte';

const tabs = [
  ['a', 'Alpha'],
  ['b', 'Beta'],
  ['c', 'Gamma'],
] as const;

describe('TabRow', () => {
  it('moves between the tabs with the arrows, Home and End, wrapping at the ends', async () => {
    const onselect = vi.fn();
    render(TabRow, { tabs, active: 'a', label: 'Sections', testid: 't', panelId: 'p', onselect });
    const tab = (id: string) => screen.getByTestId(`t-${id}`);
    expect(tab('a').tabIndex).toBe(0);
    expect(tab('b').tabIndex).toBe(-1);

    await fireEvent.keyDown(tab('a'), { key: 'ArrowRight' });
    expect(onselect).toHaveBeenLastCalledWith('b');
    expect(document.activeElement).toBe(tab('b'));
    await fireEvent.keyDown(tab('a'), { key: 'ArrowLeft' });
    expect(onselect).toHaveBeenLastCalledWith('c');
    await fireEvent.keyDown(tab('a'), { key: 'End' });
    expect(onselect).toHaveBeenLastCalledWith('c');
    await fireEvent.keyDown(tab('a'), { key: 'Home' });
    expect(onselect).toHaveBeenLastCalledWith('a');
    expect(screen.getByRole('tablist').getAttribute('aria-label')).toBe('Sections');
  });
});
