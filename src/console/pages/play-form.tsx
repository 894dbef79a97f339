// The Play form's parts, shared by "New Play" and the Play's edit page: the fields (Name, X account, Sequence) with
// what the person typed kept after a refusal, and the service's field names said in the form's words.
import { AppError } from '../../lib/errors.js';
import type { ConsoleDeps } from '../deps.js';

export interface PlayFormValues {
  name: string;
  accountUserId: string;
  sequenceId: string;
}
export interface PlayChoices {
  accounts: { userId: string; handle: string }[];
  sequences: { id: string; name: string; status: string }[];
}

/** The workspace's connected X accounts (sandbox ones included) and its sequences that a Play may point at. */
export async function playChoices(deps: ConsoleDeps, workspaceId: string): Promise<PlayChoices> {
  const [{ accounts }, sequences] = await Promise.all([deps.services.plays.listAccounts(workspaceId), deps.services.sequences.listSequences(workspaceId)]);
  return { accounts, sequences: sequences.map((s) => ({ id: s.id, name: s.name, status: s.status })) };
}

function text(body: unknown, name: string): string {
  const v = ((body ?? {}) as Record<string, unknown>)[name];
  const one: unknown = Array.isArray(v) ? (v as unknown[])[0] : v;
  return typeof one === 'string' ? one : '';
}

export function readPlayForm(body: unknown): PlayFormValues {
  return { name: text(body, 'name'), accountUserId: text(body, 'accountUserId'), sequenceId: text(body, 'sequenceId') };
}

/** What the form alone can see is missing, named by the field's label (400); everything else is the service's. */
export function requirePlayFields(v: PlayFormValues) {
  const missing = [v.name.trim() === '' && 'Name', v.accountUserId === '' && 'X account', v.sequenceId === '' && 'Sequence'].filter(Boolean);
  if (missing.length > 0) throw new AppError(400, 'invalid_request', `${missing.join(', ')}: required`);
}

/** `accountUserId is not a connected X account` → `X account is not a connected X account`: the form's labels. */
export function inFormWords(message: string): string {
  return message
    .replace(/\baccountUserId\b/g, 'X account')
    .replace(/\bsequenceId\b/g, 'Sequence')
    .replace(/^name\b/, 'Name');
}

/**
 * Name, X account and Sequence. Archived sequences are not offered, except the one a Play already uses (so saving
 * its other fields does not silently move it); the same for an account that is no longer connected.
 */
export function PlayFields(props: { values: PlayFormValues; choices: PlayChoices }) {
  const { values, choices } = props;
  const accounts =
    choices.accounts.some((a) => a.userId === values.accountUserId) || values.accountUserId === ''
      ? choices.accounts
      : [...choices.accounts, { userId: values.accountUserId, handle: '', missing: true }];
  const sequences = choices.sequences.filter((s) => s.status !== 'archived' || s.id === values.sequenceId);
  return (
    <>
      <p>
        <label for="play-name">Name</label>
        <input id="play-name" name="name" type="text" value={values.name} maxlength="200" required />
      </p>
      <ChoiceField
        id="play-account"
        name="accountUserId"
        label="X account"
        none="choose an account"
        chosen={values.accountUserId}
        options={accounts.map((a) => ({ value: a.userId, label: 'missing' in a ? `${a.userId} (not connected)` : `@${a.handle}` }))}
      />
      <ChoiceField
        id="play-sequence"
        name="sequenceId"
        label="Sequence"
        none="choose a sequence"
        chosen={values.sequenceId}
        options={sequences.map((s) => ({ value: s.id, label: `${s.name} (${s.status})` }))}
      />
    </>
  );
}

/** A required choice: its label, then a select whose first option (`none`, the empty value) asks to choose. */
function ChoiceField(props: { id: string; name: string; label: string; none: string; chosen: string; options: { value: string; label: string }[] }) {
  return (
    <p>
      <label for={props.id} safe>
        {props.label}
      </label>{' '}
      <select id={props.id} name={props.name} required>
        <option value="" selected={props.chosen === ''} safe>
          {props.none}
        </option>
        {props.options.map((o) => (
          <option value={o.value} selected={o.value === props.chosen} safe>
            {o.label}
          </option>
        ))}
      </select>
    </p>
  );
}
