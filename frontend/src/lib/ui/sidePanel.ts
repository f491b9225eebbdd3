// Where a panel docked beside the pane grid goes (the goals' "Side panel"). Beside the grid it
// takes width from the panes; it may only take what leaves each pane column MIN_PANE_PX, the
// width at which a pane's header shows its kind, title, id and tabs whole. With the chat open
// too there is seldom that much room: the panel then lies over the chat's column instead (the
// chat stays open beneath it), and the panes keep their width.

/** A pane narrower than this cuts its title, id or tabs ("Termin…", "pan…"). */
export const MIN_PANE_PX = 380;
/** A docked panel narrower than this cannot show a goal's detail. */
export const PANEL_MIN_PX = 360;
/** Wider than this a docked panel only takes room from the panes. */
export const PANEL_MAX_PX = 620;
/** The grid's padding and the dividers between its columns. */
const GRID_PAD_PX = 8;
const DIVIDER_PX = 5;

export interface SidePlacement {
  /** 'beside': in the row, the grid narrower; 'over': over the right edge, the grid as it was. */
  mode: 'beside' | 'over';
  width: number;
}

/**
 * The docked panel's place in a row `room` px wide that holds the grid of `cols` columns and
 * other side panels (the chat) `others` px wide.
 */
export function sidePlacement(room: number, others: number, cols: number): SidePlacement {
  const c = Math.max(1, cols);
  const gridNeeds = c * MIN_PANE_PX + GRID_PAD_PX + (c - 1) * DIVIDER_PX;
  const free = room - others - gridNeeds;
  const want = Math.min(PANEL_MAX_PX, Math.round(room / 2));
  if (free >= PANEL_MIN_PX) return { mode: 'beside', width: Math.min(want, free) };
  // Over the chat's column, as wide as it (and no narrower than a panel can be).
  if (others > 0) return { mode: 'over', width: Math.min(want, Math.max(others, PANEL_MIN_PX)) };
  // Nothing to lie over: beside, as narrow as it can be; the panes give what they must.
  return { mode: 'beside', width: Math.min(want, PANEL_MIN_PX) };
}
