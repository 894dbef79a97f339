import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { AppInstance } from '../../app/types.js';
import type { PublicDataService } from './publicdata.service.js';
import type { ReadinessService } from './readiness.service.js';
import { EligibilityBody, EligibilityResponse, ReadinessResponse, ResolveBody, ResolveResponse, ResolveUnknownResponse } from './publicdata.schemas.js';

export async function publicDataRoutes(app: AppInstance, opts: { publicData: PublicDataService; readiness: ReadinessService }) {
  app.post(
    '/x/users/resolve',
    {
      config: { action: 'publicdata.lookup', xChannel: true },
      schema: {
        summary: 'Resolve one exact public handle to a numeric user ID',
        description:
          'Exact, case-insensitive handle lookup through the public-data provider; no fuzzy matching, no email enrichment, never sends. ' +
          'A provider read costs energy (a cached answer does not); with no energy left the answer is 429 energy_exhausted with Retry-After until the next refill. ' +
          'An unverifiable profile or an unavailable provider answers 503 with status unknown and user null.',
        tags: ['eligibility'],
        headers: WorkspaceClientHeader,
        body: ResolveBody,
        response: { 200: ResolveResponse, ...errorResponses(), 503: ResolveUnknownResponse },
      },
    },
    async (req) => opts.publicData.resolve(req.auth.workspaceId, req.body.username),
  );

  app.post(
    '/x/eligibility',
    {
      config: { action: 'publicdata.lookup', xChannel: true },
      schema: {
        summary: 'Check whether each lead follows a connected X account',
        description:
          'Sequential and time-bounded (one budget for the whole request). Handle input uses direct relationship evidence (true, false or null); ' +
          'numeric-ID input uses a bounded follower snapshot (true or null, never false). null means unknown: inspect each result and its reason ' +
          '(time_budget_exceeded, energy_exhausted, provider_unavailable, provider_timeout, not_in_follower_snapshot, user_not_found). ' +
          'Nothing is enrolled or sent.',
        tags: ['eligibility'],
        headers: WorkspaceClientHeader,
        body: EligibilityBody,
        response: { 200: EligibilityResponse, ...errorResponses(404) },
      },
    },
    async (req) => opts.publicData.eligibility(req.auth.workspaceId, req.body),
  );

  app.get(
    '/x/readiness',
    {
      config: { xChannel: true },
      schema: {
        summary: 'Read-only readiness snapshot: accounts, billing and energy',
        description:
          'Each section has a state (complete, partial, unavailable) and issues with stable codes. A section whose source fails is unavailable and the call still answers 200. ' +
          'The provider is not contacted and delivery is not guaranteed.',
        tags: ['workspace'],
        headers: WorkspaceClientHeader,
        response: { 200: ReadinessResponse, ...errorResponses() },
      },
    },
    async (req) => opts.readiness.snapshot(req.auth.workspaceId),
  );
}
