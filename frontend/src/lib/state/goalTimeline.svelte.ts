import type { GoalEvent, GoalsApi } from '../api';
import { errorMessage } from '../api';
import { stepFromEvent, type TimelineStep } from './goalEvents';

/** Steps read per request; the backend's own page limit. */
export const STEP_PAGE = 500;

/** The streamed text kept for the live line: the tail is what a person reads as it grows. */
const MAX_LIVE_TEXT = 2000;

/**
 * One goal's story for the dashboard: its stored events and steps, read from the backend and
 * kept current from live events. Live events append directly when they follow on; a gap in
 * the sequence (an event that was stored but not published, or one missed while disconnected)
 * is filled by reading the store again, so nothing lives only in UI memory.
 */
export class GoalTimeline {
  steps = $state.raw<TimelineStep[]>([]);
  events = $state.raw<GoalEvent[]>([]);
  /** What the model is writing right now (live only, never stored); cleared by each step. */
  liveText = $state('');
  /** True once the stored story has been read. */
  loaded = $state(false);
  /** Why the last read failed; '' after a success. */
  error = $state('');

  private lastSeq = 0;
  /** The highest step index read in full from the store. */
  private lastFullStep = 0;
  private reading: Promise<void> | null = null;
  private readAgain = false;

  constructor(
    private readonly api: GoalsApi,
    readonly goalId: string,
  ) {}

  /** Reads what is new in the store. Concurrent calls share one read (and one more after it). */
  catchUp(): Promise<void> {
    if (this.reading) {
      this.readAgain = true;
      return this.reading;
    }
    this.reading = this.read().finally(() => {
      this.reading = null;
    });
    return this.reading;
  }

  private async read(): Promise<void> {
    do {
      this.readAgain = false;
      try {
        const events = await this.api.events(this.goalId, this.lastSeq);
        this.addEvents(events);
        for (;;) {
          const page = await this.api.steps(this.goalId, this.lastFullStep, STEP_PAGE);
          this.addSteps(page);
          if (page.length < STEP_PAGE) break;
        }
        this.error = '';
        this.loaded = true;
      } catch (err) {
        this.error = errorMessage(err);
        return;
      }
    } while (this.readAgain);
  }

  /** A live event of this goal. */
  receive(e: GoalEvent): void {
    if (e.type === 'delta') {
      const t = typeof e.data.text === 'string' ? e.data.text : '';
      this.liveText = (this.liveText + t).slice(-MAX_LIVE_TEXT);
      return;
    }
    if (e.type === 'step') {
      this.liveText = '';
      const step = stepFromEvent(e);
      if (step && !this.steps.some((s) => s.index === step.index)) this.steps = [...this.steps, step];
    }
    if (e.seq <= this.lastSeq) return;
    if (this.loaded && !this.reading && e.seq === this.lastSeq + 1 && e.type !== 'step') {
      this.addEvents([e]);
      return;
    }
    // A gap, a read in flight, or a step whose full result is in the store: read it.
    void this.catchUp();
  }

  private addEvents(events: GoalEvent[]): void {
    const fresh = events.filter((e) => e.seq > this.lastSeq).sort((a, b) => a.seq - b.seq);
    if (fresh.length === 0) return;
    this.events = [...this.events, ...fresh];
    this.lastSeq = fresh[fresh.length - 1].seq;
  }

  /** Stored steps replace the partial ones the events announced. */
  private addSteps(steps: TimelineStep[]): void {
    if (steps.length === 0) return;
    const byIndex = new Map(this.steps.map((s) => [s.index, s]));
    for (const s of steps) byIndex.set(s.index, s);
    this.steps = [...byIndex.values()].sort((a, b) => a.index - b.index);
    this.lastFullStep = Math.max(this.lastFullStep, ...steps.map((s) => s.index));
  }
}
