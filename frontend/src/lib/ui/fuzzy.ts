// Fuzzy matching for the command palette: the query's characters must appear in order
// (a subsequence); matches that run together or start words rank first.

export interface FuzzyMatch {
  score: number;
  /** Indices in the text of the matched characters, for highlighting. */
  indices: number[];
}

/** Scores, tuned so that "a run of matched characters" and "word starts" dominate. */
const SCORE_MATCH = 1;
const BONUS_CONSECUTIVE = 6;
const BONUS_WORD_START = 8;
const BONUS_FIRST_CHAR = 4;
const PENALTY_GAP = 1;
/** Leading unmatched text costs a little, capped so long titles are not buried. */
const PENALTY_LEADING_MAX = 3;

function isWordStart(text: string, i: number): boolean {
  if (i === 0) return true;
  const prev = text[i - 1];
  const cur = text[i];
  if (/[\s\-_./:×]/.test(prev)) return true;
  // camelCase boundary, and a digit after a letter ("Set Grid 2×2").
  return (/[a-z]/.test(prev) && /[A-Z]/.test(cur)) || (/[A-Za-z]/.test(prev) && /\d/.test(cur));
}

/**
 * Best-scoring way to match `query` as a subsequence of `text` (case-insensitive), or null when
 * it does not match at all. The empty query matches everything with score 0.
 */
export function fuzzyMatch(query: string, text: string): FuzzyMatch | null {
  const q = query.toLowerCase().replace(/\s+/g, '');
  if (!q) return { score: 0, indices: [] };
  // People type "2x3" for "2×3"; the fold keeps one character per character, so indices hold.
  const t = text.toLowerCase().replace(/×/g, 'x');
  const n = t.length;
  const m = q.length;
  if (m > n) return null;

  // score[i][j]: best score for q[0..i] with q[i] matched at t[j]; -Infinity when impossible.
  const NEG = -Infinity;
  const score: number[][] = [];
  const from: number[][] = [];
  for (let i = 0; i < m; i++) {
    const row = new Array<number>(n).fill(NEG);
    const back = new Array<number>(n).fill(-1);
    // Best over k < j-1 of score[i-1][k], kept as we sweep j, for the non-consecutive case.
    let bestPrev = NEG;
    let bestPrevAt = -1;
    for (let j = i; j < n; j++) {
      if (i > 0 && j >= 2 && score[i - 1][j - 2] > bestPrev) {
        bestPrev = score[i - 1][j - 2];
        bestPrevAt = j - 2;
      }
      if (t[j] !== q[i]) continue;
      const here = SCORE_MATCH + (isWordStart(text, j) ? BONUS_WORD_START : 0);
      if (i === 0) {
        row[j] = here + (j === 0 ? BONUS_FIRST_CHAR : -Math.min(j, PENALTY_LEADING_MAX));
        continue;
      }
      const consecutive = j >= 1 ? score[i - 1][j - 1] + BONUS_CONSECUTIVE : NEG;
      const gapped = bestPrev - PENALTY_GAP;
      if (consecutive === NEG && gapped === NEG) continue;
      if (consecutive >= gapped) {
        row[j] = here + consecutive;
        back[j] = j - 1;
      } else {
        row[j] = here + gapped;
        back[j] = bestPrevAt;
      }
    }
    score.push(row);
    from.push(back);
  }

  let end = -1;
  for (let j = 0; j < n; j++) {
    if (score[m - 1][j] > (end === -1 ? NEG : score[m - 1][end])) end = j;
  }
  if (end === -1) return null;
  const indices: number[] = new Array(m);
  for (let i = m - 1, j = end; i >= 0; i--) {
    indices[i] = j;
    j = from[i][j];
  }
  return { score: score[m - 1][end], indices };
}

export interface Ranked<T> {
  item: T;
  match: FuzzyMatch;
}

/**
 * Items whose text matches, best first. Ties keep the shorter text first, then the original
 * order, so an empty query lists everything as given.
 */
export function fuzzyFilter<T>(query: string, items: readonly T[], text: (item: T) => string): Ranked<T>[] {
  const ranked: Array<Ranked<T> & { order: number; length: number }> = [];
  items.forEach((item, order) => {
    const s = text(item);
    const match = fuzzyMatch(query, s);
    if (match) ranked.push({ item, match, order, length: s.length });
  });
  const hasQuery = query.trim() !== '';
  ranked.sort(
    (a, b) =>
      b.match.score - a.match.score || (hasQuery ? a.length - b.length : 0) || a.order - b.order,
  );
  return ranked.map(({ item, match }) => ({ item, match }));
}
