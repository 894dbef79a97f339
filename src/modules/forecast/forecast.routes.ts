import { Type } from 'typebox';
import { Uuid, WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import { MAX_FORECAST_DAYS, MAX_FORECAST_LEAD_DETAIL, type ForecastService } from './forecast.service.js';

export const ForecastBody = Type.Object(
  {
    days: Type.Integer({ minimum: 1, maximum: MAX_FORECAST_DAYS }),
    seed: Type.Optional(Type.String({ minLength: 1, maxLength: 100, description: 'default: OUTREACH_SANDBOX_SEED' })),
    passMinutes: Type.Optional(Type.Integer({ minimum: 5, maximum: 1440, default: 60, description: 'between simulated passes' })),
    includeLeads: Type.Optional(Type.Boolean({ default: false, description: `each lead's course (≤ ${MAX_FORECAST_LEAD_DETAIL} leads)` })),
  },
  { additionalProperties: false },
);

const Cell = {
  arrivals: Type.Integer({ minimum: 0, description: 'leads that reached the step (its first attempt or its task)' }),
  sends: Type.Integer({ minimum: 0, description: 'attempts that went out' }),
  waits: Type.Integer({ minimum: 0, description: 'leads at the step as the day ends' }),
  fallThroughs: Type.Integer({ minimum: 0, description: 'skipped steps the lead moved on from (no address, a platform rule)' }),
  goals: Type.Integer({ minimum: 0 }),
  exits: Type.Integer({ minimum: 0 }),
  tasks: Type.Integer({ minimum: 0, description: 'steps given to a person' }),
};

export const ForecastResponse = Type.Object(
  {
    sequenceId: Uuid(),
    revision: Type.Integer(),
    startsAt: Type.String({ format: 'date-time' }),
    days: Type.Integer(),
    seed: Type.String(),
    passMinutes: Type.Integer(),
    passes: Type.Integer({ description: 'simulated passes that had work (idle ones are skipped: they change nothing)' }),
    leads: Type.Integer({ description: 'enrolled leads simulated' }),
    estimate: Type.Boolean({ description: 'true when the workspace has real senders: the sandbox imitates their people, so this is an estimate' }),
    totals: Type.Object(Cell, { description: 'over every step and day; waits: as the last day ends' }),
    steps: Type.Array(
      Type.Object({ index: Type.Integer(), days: Type.Array(Type.Object({ day: Type.Integer({ description: '0: the first day from now' }), ...Cell })) }),
    ),
    leadCourses: Type.Optional(
      Type.Array(
        Type.Object({
          id: Uuid(),
          steps: Type.Array(Type.Object({ day: Type.Integer(), step: Type.Integer(), action: Type.String(), outcome: Type.String() })),
          path: Type.Array(
            Type.Object({
              day: Type.Integer(),
              fromStep: Type.Integer(),
              edge: Type.Union([Type.Integer(), Type.Null()]),
              goto: Type.String(),
              toStep: Type.Union([Type.Integer(), Type.Null()]),
            }),
          ),
          outcome: Type.Union([Type.Literal('goal'), Type.Literal('exit'), Type.Null()]),
          stage: Type.String(),
          currentStep: Type.Integer(),
          sequenceDone: Type.Boolean(),
        }),
        { description: 'with includeLeads: each lead, by id' },
      ),
    ),
  },
  { additionalProperties: false },
);

/** POST /api/v1/sequences/{id}/forecast (extension): preview a launch (docs/sequences-and-leads.md "Forecast"). */
export async function forecastRoutes(app: AppInstance, opts: { forecast: ForecastService }) {
  app.post(
    '/sequences/:id/forecast',
    {
      // Reads and simulates; nothing of the workspace changes.
      config: { action: 'read' },
      schema: {
        'x-extension': true,
        summary: 'Preview a launch: the engine run on a copy of the enrolled leads in the sandbox world, per step and per day (extension)',
        description:
          'Changes nothing. The sequence (any status, its current revision) runs from now for `days` days, one pass every `passMinutes`, ' +
          'under today’s caps, windows and platform rules, against the sandbox’s answers (a pure function of the seed and each lead’s ' +
          'script). On the same seed and schedule the engine does exactly this, lead by lead; with real senders it is an estimate ' +
          '(`estimate: true`). 404 for a foreign sequence; 409 sequence_has_no_steps; 400 too_many_leads for includeLeads past ' +
          `${MAX_FORECAST_LEAD_DETAIL} leads.`,
        tags: ['sequences'],
        headers: WorkspaceClientHeader,
        params: Type.Object({ id: Uuid({ description: 'Sequence uuid' }) }),
        body: ForecastBody,
        response: { 200: ForecastResponse, ...errorResponses(400, 404, 409) },
      },
    },
    async (req) => opts.forecast.forecast(req.auth.workspaceId, req.params.id, req.body),
  );
}
