import { describe, expect, it } from 'vitest';
import { MIN_PANE_PX, PANEL_MAX_PX, PANEL_MIN_PX, sidePlacement } from './sidePanel';

describe('sidePlacement', () => {
  it('docks beside a wide grid at its full width', () => {
    expect(sidePlacement(1920, 0, 2)).toEqual({ mode: 'beside', width: PANEL_MAX_PX });
  });

  it('narrows beside the grid so each pane keeps its minimum', () => {
    const p = sidePlacement(1280, 0, 2);
    expect(p.mode).toBe('beside');
    expect((1280 - p.width - 8 - 5) / 2).toBeGreaterThanOrEqual(MIN_PANE_PX);
  });

  it('lies over the chat when beside both the grid would shrink below its minimum', () => {
    expect(sidePlacement(1280, 400, 2)).toEqual({ mode: 'over', width: 400 });
    // A chat narrower than a panel can be: the panel keeps its own minimum.
    expect(sidePlacement(1280, 300, 2)).toEqual({ mode: 'over', width: PANEL_MIN_PX });
  });

  it('stays beside with the chat when the window has room for all three', () => {
    expect(sidePlacement(2400, 400, 2)).toEqual({ mode: 'beside', width: PANEL_MAX_PX });
  });

  it('without a chat to lie over, stays beside at its narrowest', () => {
    expect(sidePlacement(1280, 0, 3)).toEqual({ mode: 'beside', width: PANEL_MIN_PX });
  });
});
