import { Type } from 'typebox';
import { OneOf } from '../../app/schemas.js';
import { BRANCH_CHANNELS, CONDITION_FIELDS, REPLY_INTENTS } from '../../domain/branches.js';

// The one wire form of a branching step (docs/sequences-and-leads.md "Branches"), shared by GET /sequences, the
// authoring doors (MCP create_sequence and replace_steps, the console) and the forecast: a step's `id`, its ordered
// edges `next` and its `else`. Every property is an x-extension of the spec's step; a linear step carries none.

const Channel = OneOf(BRANCH_CHANNELS);
const obj = (props: Parameters<typeof Type.Object>[0], description: string) => Type.Object(props, { additionalProperties: false, description });

/** One condition: exactly one of these objects. */
export const Condition = Type.Union(
  [
    obj({ accepted: Type.Boolean() }, 'the LinkedIn invitation was accepted (true) or not (false)'),
    obj(
      {
        replied: Type.Boolean(),
        channel: Type.Optional(Channel),
        intent: Type.Optional(OneOf(REPLY_INTENTS, { description: 'a classifier label, or a sentiment: positive, negative, neutral' })),
      },
      'the person replied (any channel, or `channel`; with `intent`, a reply of that label or sentiment). A reply a person must still review never matches',
    ),
    obj({ outOfOffice: Type.Boolean() }, 'an out-of-office auto-reply was seen'),
    obj({ bounced: Type.Boolean() }, 'an e-mail to the person bounced for good'),
    obj({ meetingBooked: Type.Boolean() }, 'a meeting is booked'),
    obj({ hasAddress: Channel }, 'the lead has an address on the channel (email, LinkedIn URL, X user)'),
    obj({ lacksAddress: Channel }, 'the lead has no address on the channel'),
    obj(
      { allowed: Type.Boolean() },
      'the engine could (true) or could not (false) do this step for the person under the platform rules; with such an edge a step that would become a task falls through',
    ),
    obj(
      {
        field: Type.String({ minLength: 1, maxLength: 120, description: `${CONDITION_FIELDS.join(', ')}, or custom.<name>` }),
        equals: Type.Optional(Type.String({ maxLength: 500 })),
        contains: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
        exists: Type.Optional(Type.Boolean()),
      },
      'a lead field equals (case-insensitive), contains, or exists (non-empty); exactly one of equals, contains, exists',
    ),
    obj({ split: Type.Integer({ minimum: 1, maximum: 99 }) }, 'a random split: holds for this percentage of leads (a fixed draw per lead and step)'),
  ],
  { 'x-extension': true, description: 'A branch condition: exactly one of these objects' },
);

export const BranchTarget = Type.String({
  minLength: 1,
  maxLength: 40,
  description: 'a step id of this sequence, or `goal` / `exit` (the run ends with that outcome)',
});

export const BranchEdge = Type.Object(
  {
    if: Condition,
    withinDays: Type.Optional(
      Type.Integer({
        minimum: 1,
        maximum: 365,
        description: 'wait up to this many days for the condition (only accepted, replied, outOfOffice, bounced, meetingBooked)',
      }),
    ),
    goto: BranchTarget,
  },
  { additionalProperties: false, 'x-extension': true, description: 'An edge: the first whose condition holds is taken' },
);

/** The branch properties of a step, spread into the step objects of the API and the authoring doors. */
export const StepBranchProperties = {
  id: Type.Optional(
    Type.String({ pattern: '^[A-Za-z][A-Za-z0-9_-]{0,39}$', 'x-extension': true, description: 'the step id edges name; unique in the sequence' }),
  ),
  next: Type.Optional(Type.Array(BranchEdge, { maxItems: 10, 'x-extension': true, description: 'ordered edges to the step that follows this one' })),
  else: Type.Optional({ ...BranchTarget, 'x-extension': true, description: 'where a lead goes when no edge holds (absent: the next step in the list)' }),
};
