import { describe, expect, it } from 'vitest';
import { fuzzyFilter, fuzzyMatch } from './fuzzy';

const titles = [
  'New Workspace',
  'Close Workspace',
  'Rename Workspace',
  'Next Workspace',
  'Previous Workspace',
  'Switch to Alpha',
  'Set Grid 2×3',
  'Set Grid 3×2',
  'Export Workspace',
  'Import Workspace',
];

const rank = (q: string) => fuzzyFilter(q, titles, (t) => t).map((r) => r.item);

describe('fuzzyMatch', () => {
  it('matches a subsequence case-insensitively and reports where', () => {
    expect(fuzzyMatch('nws', 'New Workspace')?.indices).toEqual([0, 4, 8]);
  });

  it('returns null when the characters are not all there in order', () => {
    expect(fuzzyMatch('xyz', 'New Workspace')).toBeNull();
    expect(fuzzyMatch('wn', 'New')).toBeNull();
    expect(fuzzyMatch('toolongquery', 'short')).toBeNull();
  });

  it('matches everything with the empty query', () => {
    expect(fuzzyMatch('', 'anything')).toEqual({ score: 0, indices: [] });
  });

  it('prefers a contiguous run over scattered letters', () => {
    const contiguous = fuzzyMatch('work', 'Workspace')!;
    const scattered = fuzzyMatch('work', 'Waoarak')!;
    expect(contiguous.score).toBeGreaterThan(scattered.score);
  });

  it('picks word starts when the same letters appear mid-word earlier', () => {
    // "p" appears inside "Swap" before the word "Panes"; the word start is the better match.
    expect(fuzzyMatch('sp', 'Swap Panes')?.indices).toEqual([0, 5]);
  });
});

describe('fuzzyFilter', () => {
  it('keeps the given order for an empty query', () => {
    expect(rank('')).toEqual(titles);
  });

  it('drops what does not match', () => {
    expect(rank('zzz')).toEqual([]);
    expect(rank('grid')).toEqual(['Set Grid 2×3', 'Set Grid 3×2']);
  });

  it('ranks word-start matches first', () => {
    // "nw" hits word starts in "New Workspace" and "Next Workspace"; in "Rename Workspace" the n is mid-word.
    const r = rank('nw');
    expect(r.slice(0, 2).sort()).toEqual(['New Workspace', 'Next Workspace']);
    expect(r.indexOf('Rename Workspace')).toBeGreaterThan(1);
  });

  it('ranks a contiguous prefix above a scattered match', () => {
    expect(rank('imp')[0]).toBe('Import Workspace');
    expect(rank('ren')[0]).toBe('Rename Workspace');
  });

  it('tells the grid shapes apart by the digits typed', () => {
    expect(rank('g32')[0]).toBe('Set Grid 3×2');
    expect(rank('g23')[0]).toBe('Set Grid 2×3');
  });

  it('lets an x stand for the × in grid sizes', () => {
    expect(rank('3x2')[0]).toBe('Set Grid 3×2');
    expect(fuzzyMatch('2x3', 'Set Grid 2×3')?.indices).toEqual([9, 10, 11]);
  });
});
