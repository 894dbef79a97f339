import { WorkspaceClientHeader, errorResponses } from '../../app/schemas.js';
import type { TSchema } from 'typebox';
import type { AppInstance } from '../../app/types.js';
import type { LeadsService } from './leads.service.js';
import { DistinctTwinsBody, DistinctTwinsResponse, MergeTwinsBody, MergeTwinsResponse, TwinsQuery, TwinsResponse } from './leads.twins.schemas.js';
import { TWINS_LIMIT_DEFAULT } from './leads.twins.js';

/** Who decides through the API: the key's id (the CLI's commands call these routes, so they record the key too). */
export const apiDecider = (keyId: string) => `api:${keyId}`;

const RULES =
  'docs/sequences-and-leads.md "Two leads, one person: Merge or Not the same person". 404 `lead not found` for an id of no ' +
  'lead of this workspace; 409 `not_same_person` when the two share no identity key; 409 `twin_already_decided` (with ' +
  '`decision`, `decidedBy`, `decidedAt`) when the pair was decided before; 409 `lead_merged_away` for a lead merged into ' +
  'another. Recorded with who decided (`api:<key id>`). Honors X-Workspace-Client.';

/** The schema of a decision on a pair of leads (an extension): its summary, its description followed by RULES, body, answer. */
const pairDecision = <B extends TSchema, R extends TSchema>(summary: string, description: string, body: B, response: R) => ({
  'x-extension': true,
  summary,
  description: description + RULES,
  tags: ['leads'],
  headers: WorkspaceClientHeader,
  body,
  response: { 200: response, ...errorResponses(404, 409) },
});

/** Two leads that the identity keys show to be one person (issue 39 §1): the list and the two decisions. */
export async function leadTwinsRoutes(app: AppInstance, opts: { leads: LeadsService }) {
  app.get(
    '/leads/twins',
    {
      schema: {
        'x-extension': true,
        summary: 'Pairs of leads that are one person, awaiting Merge or Not the same person (extension: not in the spec)',
        description:
          'Two leads of the workspace that share an identity key (the same e-mail, LinkedIn profile, X user or X handle, however ' +
          'spelled) and have no decision yet, each pair with both leads and the channels of the keys they share (not the keys). ' +
          'Both leads stay until a person decides; meanwhile an opt-out through either stops both. Ordered by lead ids; pass ' +
          '`nextCursor` as `after` until it is null. A lead merged into another is not listed. Honors X-Workspace-Client.',
        tags: ['leads'],
        headers: WorkspaceClientHeader,
        querystring: TwinsQuery,
        response: { 200: TwinsResponse, ...errorResponses() },
      },
    },
    async (req) => opts.leads.listTwins(req.auth.workspaceId, { after: req.query.after, limit: req.query.limit ?? TWINS_LIMIT_DEFAULT }),
  );

  app.post(
    '/leads/twins/merge',
    {
      config: { action: 'leads.write' },
      schema: pairDecision(
        'Merge two leads that are one person (extension: not in the spec)',
        'The survivor is `keep` or else the older lead; the other lead stops (automation stopped, nothing due, an uncontacted ' +
          'lead `skipped`; its row, sequence and history stay), so the person never runs in two sequences. The survivor takes ' +
          'the e-mail, LinkedIn URL and X identity it lacks from the other. If either lead opted out, the survivor is opted out ' +
          '(an opt-out wins). Each lead gets a `manual_override` ledger entry `{op: "merge"}`. Nothing is deleted. ',
        MergeTwinsBody,
        MergeTwinsResponse,
      ),
    },
    async (req) => opts.leads.mergeTwins(req.auth.workspaceId, req.body, apiDecider(req.auth.keyId)),
  );

  app.post(
    '/leads/twins/distinct',
    {
      config: { action: 'leads.write' },
      schema: pairDecision(
        'Record that two leads sharing a key are not the same person (extension: not in the spec)',
        'The pair leaves the list of twins; both leads keep running. An opt-out still stops every lead with the shared key (a ' +
          'message to that mailbox or profile reaches whoever asked to stop). Each lead gets a `manual_override` ledger entry ' +
          '`{op: "not_same_person"}`. ',
        DistinctTwinsBody,
        DistinctTwinsResponse,
      ),
    },
    async (req) => opts.leads.markDistinct(req.auth.workspaceId, req.body, apiDecider(req.auth.keyId)),
  );
}
