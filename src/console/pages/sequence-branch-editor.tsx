import { OpButton } from '../ui.js';
import {
  BRANCH_CHANNELS,
  CONDITION_CHOICES,
  FIELD_NAMES,
  FIELD_TESTS,
  REPLY_INTENTS,
  type EdgePart,
  type FormBranch,
  type FormEdge,
} from './sequence-branch-form.js';

// The branch block of each step in the sequence editor (docs/console.md "Sequence editor"): the step's id, its edges
// in order (a condition, the inputs it reads, an optional wait, a target) and where a lead goes otherwise. It reads as
// an outline on a phone: one labelled field per line, no canvas. Inputs a condition does not read are drawn hidden
// (data-conds) and ignored on save; sequence-editor.js follows a change of the condition without a round trip.

/** The choices that read a part, for its data-conds attribute. */
const condsUsing = (part: EdgePart) =>
  CONDITION_CHOICES.filter((c) => (c.parts as readonly EdgePart[]).includes(part))
    .map((c) => c.value)
    .join(' ');
const uses = (e: FormEdge, part: EdgePart) => condsUsing(part).split(' ').includes(e.cond);

/** The targets an edge may name, offered as a datalist: every step id in the form, then goal and exit. */
export function StepTargets(props: { steps: readonly { branch: FormBranch }[] }) {
  const ids = props.steps.map((s) => s.branch.id.trim()).filter((id) => id !== '');
  return (
    <>
      <datalist id="step-targets">
        {[...ids, 'goal', 'exit'].map((id) => (
          <option value={id} />
        ))}
      </datalist>
      <datalist id="condition-fields">
        {FIELD_NAMES.map((f) => (
          <option value={f} />
        ))}
      </datalist>
    </>
  );
}

function Choice(props: { id: string; label: string; value: string; options: readonly { value: string; label: string }[]; conds?: string; hidden?: boolean }) {
  return (
    <p data-conds={props.conds} hidden={props.hidden}>
      <label for={props.id} safe>
        {props.label}
      </label>{' '}
      <select id={props.id} name={props.id} data-cond-select={props.conds === undefined ? '' : undefined}>
        {props.options.map((o) => (
          <option value={o.value} selected={o.value === props.value} safe>
            {o.label}
          </option>
        ))}
      </select>
    </p>
  );
}

function EdgeFieldset(props: { i: number; j: number; edge: FormEdge }) {
  const { i, j, edge: e } = props;
  const id = (name: string) => `s${i}_e${j}_${name}`;
  const named = (list: readonly string[]) => list.map((v) => ({ value: v, label: v.replace(/_/g, ' ') }));
  const part = (p: EdgePart) => ({ conds: condsUsing(p), hidden: !uses(e, p) });
  const within = part('within');
  return (
    <fieldset class="edge">
      <legend safe>{`Edge ${j + 1}`}</legend>
      <Choice id={id('cond')} label="If" value={e.cond} options={CONDITION_CHOICES} />
      <Choice
        id={id('channel')}
        label="Channel"
        value={e.channel}
        options={[{ value: '', label: 'any channel' }, ...named(BRANCH_CHANNELS)]}
        {...part('channel')}
      />
      <Choice id={id('intent')} label="Intent" value={e.intent} options={[{ value: '', label: 'any reply' }, ...named(REPLY_INTENTS)]} {...part('intent')} />
      <div data-conds={condsUsing('field')} hidden={!uses(e, 'field')}>
        <p>
          <label for={id('field')}>Field</label> <span class="muted">(or custom.&lt;name&gt;)</span>{' '}
          <input id={id('field')} name={id('field')} type="text" list="condition-fields" value={e.field} size="14" />
        </p>
        <Choice id={id('test')} label="Test" value={e.test} options={named(FIELD_TESTS)} conds={condsUsing('field')} />
        <p>
          <label for={id('value')}>Value</label> <input id={id('value')} name={id('value')} type="text" value={e.value} size="14" />
        </p>
      </div>
      <p data-conds={condsUsing('percent')} hidden={!uses(e, 'percent')}>
        <label for={id('percent')}>Percent of leads</label> <input id={id('percent')} name={id('percent')} type="number" min="1" max="99" value={e.percent} />
      </p>
      <p data-conds={within.conds} hidden={within.hidden}>
        <label for={id('within')}>Within (days)</label> <input id={id('within')} name={id('within')} type="number" min="1" max="365" value={e.within} />{' '}
        <span class="muted">(empty: as it stands when the step is done)</span>
      </p>
      <p>
        <label for={id('goto')}>Go to</label> <input id={id('goto')} name={id('goto')} type="text" list="step-targets" value={e.goto} size="14" />{' '}
        <span class="muted">(a step id, goal or exit)</span>
      </p>
      <OpButton op={`remove_edge:${i}:${j}`} label="Remove edge" context={`${j + 1} of step ${i + 1}`} />
    </fieldset>
  );
}

/** One step's branch block: its id, its edges, its else, and "Add edge". */
export function BranchFieldset(props: { i: number; branch: FormBranch }) {
  const { i, branch } = props;
  const id = (name: string) => `s${i}_${name}`;
  return (
    <fieldset class="branch">
      <legend>Branches</legend>
      <input type="hidden" name={id('edge_count')} value={String(branch.edges.length)} />
      <p>
        <label for={id('id')}>Step id</label>{' '}
        <input id={id('id')} name={id('id')} type="text" value={branch.id} size="14" pattern="[A-Za-z][A-Za-z0-9_\-]{0,39}" />{' '}
        <span class="muted">(names this step so edges can go to it)</span>
      </p>
      {branch.edges.map((e, j) => (
        <EdgeFieldset i={i} j={j} edge={e} />
      ))}
      <p>
        <label for={id('else')}>Otherwise go to</label>{' '}
        <input id={id('else')} name={id('else')} type="text" list="step-targets" value={branch.else} size="14" />{' '}
        <span class="muted">(empty: the next step in the list)</span>
      </p>
      <OpButton op={`add_edge:${i}`} label="Add edge" context={`after step ${i + 1}`} />
    </fieldset>
  );
}
