// @vitest-environment jsdom
import { fireEvent, render, screen } from '@testing-library/svelte';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { CommandWithShortcut } from '../state/commands';
import CommandPalette from './CommandPalette.svelte';

beforeAll(() => {
  // jsdom does no layout, so it has no scrollIntoView.
  Element.prototype.scrollIntoView = () => {};
});

function setup() {
  const ran: string[] = [];
  const command = (id: string, title: string, shortcut?: string): CommandWithShortcut => ({
    id,
    title,
    shortcut,
    run: () => void ran.push(id),
  });
  const commands = [
    command('new', 'New Workspace', 'Ctrl+T'),
    command('g22', 'Set Grid 2×2'),
    command('g33', 'Set Grid 3×3'),
    command('export', 'Export Workspace'),
  ];
  const onclose = vi.fn();
  render(CommandPalette, { commands, onclose });
  const input = screen.getByTestId('palette-input') as HTMLInputElement;
  const items = () => screen.queryAllByTestId('palette-item');
  const selected = () => items().find((el) => el.dataset.selected === 'true')?.textContent?.trim();
  return { ran, onclose, input, items, selected };
}

describe('CommandPalette', () => {
  it('focuses the input and lists every command with its shortcut', () => {
    const { input, items, selected } = setup();
    expect(document.activeElement).toBe(input);
    expect(items()).toHaveLength(4);
    expect(selected()).toMatch(/^New Workspace\s*Ctrl\+T$/);
  });

  it('filters as you type, moves with the arrows and runs with Enter', async () => {
    const { input, items, selected, ran, onclose } = setup();
    await fireEvent.input(input, { target: { value: 'grid' } });
    expect(items().map((el) => el.dataset.commandId)).toEqual(['g22', 'g33']);
    expect(selected()).toBe('Set Grid 2×2');

    await fireEvent.keyDown(input, { key: 'ArrowDown' });
    expect(selected()).toBe('Set Grid 3×3');
    await fireEvent.keyDown(input, { key: 'ArrowDown' }); // wraps to the top
    expect(selected()).toBe('Set Grid 2×2');
    await fireEvent.keyDown(input, { key: 'ArrowUp' }); // and back to the bottom
    expect(selected()).toBe('Set Grid 3×3');

    await fireEvent.keyDown(input, { key: 'Enter' });
    expect(ran).toEqual(['g33']);
    expect(onclose).toHaveBeenCalledTimes(1);
  });

  it('shows no items and runs nothing when nothing matches', async () => {
    const { input, items, ran } = setup();
    await fireEvent.input(input, { target: { value: 'zzz' } });
    expect(items()).toHaveLength(0);
    expect(screen.getByText('No matching command')).toBeTruthy();
    await fireEvent.keyDown(input, { key: 'Enter' });
    expect(ran).toEqual([]);
  });

  it('closes on Escape without running anything', async () => {
    const { input, ran, onclose } = setup();
    await fireEvent.keyDown(input, { key: 'Escape' });
    expect(onclose).toHaveBeenCalledTimes(1);
    expect(ran).toEqual([]);
  });

  it('runs a command on click', async () => {
    const { items, ran, onclose } = setup();
    await fireEvent.click(items()[3]);
    expect(ran).toEqual(['export']);
    expect(onclose).toHaveBeenCalled();
  });
});
