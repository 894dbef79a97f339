/**
 * The part of the engine's pacing read (src/engine/pacing.ts, createPacingReader; exposed by the engine in
 * the services bag) that GET /progress reports. Taking it as a dependency keeps /progress reporting exactly
 * the counters and caps the engine reserves against, instead of a second estimate that could disagree.
 */
export interface PacingFigures {
  pacingTimeZone: string;
  invitesSentToday: number;
  inviteCapToday: number;
  rampPhase: number;
}

export interface PacingSource {
  workspacePacing(workspaceId: string, now: Date): Promise<Map<string, PacingFigures>>;
}
