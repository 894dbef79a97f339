import type { CandidateFilter } from '../../domain/vocabulary.js';
import { initialsOf } from '../../modules/publicdata/index.js';
import { plural, When } from '../ui.js';

// The review page's candidate row: who the candidate is, their public profile, and the Good fit / Not a good fit
// buttons (htmx swaps the row after a decision); and the filter links with their counts (review.tsx draws the page).

/** The filters' names, as the links and the table's caption say them. */
export const FILTER_LABELS: Record<CandidateFilter, 'Unreviewed' | 'Good fit' | 'Not a good fit' | 'All'> = {
  unreviewed: 'Unreviewed',
  good_fit: 'Good fit',
  not_a_good_fit: 'Not a good fit',
  all: 'All',
};
const FILTER_ORDER: CandidateFilter[] = ['unreviewed', 'good_fit', 'not_a_good_fit', 'all'];

const STATUS_LABELS: Record<string, string> = { proposed: 'Proposed', imported: 'Imported', approved: 'Good fit', rejected: 'Not a good fit' };
interface CandidateProfile {
  bio: string | null;
  location: string | null;
  followersCount: number | null;
  hasPicture: boolean;
  lastPost: { text: string; createdAt: string | null } | null;
}
/** A candidate as the row draws it (plays.listCandidates with profiles, or findCandidateForReview). */
export interface CandidateView {
  id: string;
  xUserId: string;
  username: string | null;
  name: string | null;
  status: string;
  review: { decision: string } | null;
  profile?: CandidateProfile;
}

/** Who a row is, in words: the handle, else the name, else "Unknown X user" (never a bare user id). */
const labelOf = (c: { username: string | null; name: string | null }) => (c.username ? `@${c.username}` : (c.name ?? 'Unknown X user'));

/** The picture from the console's own origin (the server fetched it), else the initials; decorative beside the name. */
function Avatar(props: { c: CandidateView }) {
  const { c } = props;
  if (c.profile?.hasPicture) return <img class="avatar" src={`/console/avatars/${c.id}`} alt="" width="40" height="40" loading="lazy" />;
  return (
    <span class="avatar avatar-initials" aria-hidden="true" safe>
      {initialsOf(c.name, c.username)}
    </span>
  );
}

/** What a reviewer judges "good fit" by: bio, location, followers, the last post, and the profile on X. */
function ProfileCell(props: { c: CandidateView }) {
  const { c } = props;
  const p = c.profile;
  // Plain strings, escaped where they are drawn (`safe`): the location comes from the provider.
  const facts: string[] = [];
  if (p?.location) facts.push(p.location);
  if (p?.followersCount !== null && p?.followersCount !== undefined) facts.push(plural(p.followersCount, 'follower'));
  return (
    <td class="profile">
      {p?.bio ? (
        <p class="bio" safe>
          {p.bio}
        </p>
      ) : (
        ''
      )}
      {facts.length > 0 ? (
        <p class="muted facts" safe>
          {facts.join(' · ')}
        </p>
      ) : (
        ''
      )}
      {p?.lastPost ? (
        <blockquote class="last-post">
          <p safe>{p.lastPost.text}</p>
          {p.lastPost.createdAt ? (
            <footer class="muted">
              Last post <When at={p.lastPost.createdAt} />
            </footer>
          ) : (
            ''
          )}
        </blockquote>
      ) : (
        ''
      )}
      {c.username ? (
        <a href={`https://x.com/${encodeURIComponent(c.username)}`} rel="noopener noreferrer" target="_blank">
          Profile on X{' '}
          <span class="visually-hidden" safe>
            {`of @${c.username}`}
          </span>
        </a>
      ) : (
        ''
      )}
      {!p?.bio && facts.length === 0 && !p?.lastPost && !c.username ? <span class="muted">No public profile</span> : ''}
    </td>
  );
}

/** The Play's candidate counts per filter. */
export type Counts = { total: number; unreviewed: number; goodFit: number; notAGoodFit: number };

/** The filter links with their counts; `oob` redraws them beside a row answer (htmx out-of-band swap). */
export function FilterLinks(props: { base: string; filter: CandidateFilter; counts: Counts; oob?: boolean }) {
  const n: Record<CandidateFilter, number> = {
    unreviewed: props.counts.unreviewed,
    good_fit: props.counts.goodFit,
    not_a_good_fit: props.counts.notAGoodFit,
    all: props.counts.total,
  };
  return (
    <nav id="review-filters" aria-label="Filter candidates" class="filters" hx-swap-oob={props.oob ? 'true' : undefined}>
      <ul>
        {FILTER_ORDER.map((f) => (
          <li>
            <a href={`${props.base}?filter=${f}`} aria-current={f === props.filter ? 'page' : undefined}>
              {FILTER_LABELS[f]} <span class="count">{n[f]}</span>
            </a>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** One candidate's row; `outcome`/`error` say what a decision just did (the htmx answer). */
export function CandidateRow(props: { playId: string; c: CandidateView; readOnly: boolean; outcome?: string; error?: string }) {
  const { c, playId } = props;
  const open = !props.readOnly && c.review === null;
  const handle = labelOf(c);
  const vals = JSON.stringify({ xUserId: c.xUserId });
  return (
    <tr id={`candidate-${c.id}`} data-candidate={c.id} tabindex="-1">
      <td>{open ? <input type="checkbox" name="candidateIds" value={c.id} aria-label={`Select ${handle}`} /> : ''}</td>
      <td>
        <Avatar c={c} />
      </td>
      {c.username ? (
        <td safe>{`@${c.username}`}</td>
      ) : (
        <td>
          <span class="muted">
            no handle{' '}
            <span class="nowrap" safe>
              {`(id ${c.xUserId})`}
            </span>
          </span>
        </td>
      )}
      <td safe>{c.name ?? (c.username ? '' : 'Unknown X user')}</td>
      <td safe>{STATUS_LABELS[c.status] ?? c.status}</td>
      <ProfileCell c={c} />
      <td class="actions">
        {open ? (
          <>
            <button
              type="button"
              hx-post={`/review/plays/${playId}/candidates/${c.id}/good-fit`}
              hx-vals={vals}
              hx-target="closest tr"
              hx-swap="outerHTML"
              data-action="good-fit"
            >
              Good fit{' '}
              <span class="visually-hidden" safe>
                {handle}
              </span>
            </button>{' '}
            <button
              type="button"
              hx-post={`/review/plays/${playId}/candidates/${c.id}/not-a-good-fit`}
              hx-vals={vals}
              hx-target="closest tr"
              hx-swap="outerHTML"
              data-action="not-a-good-fit"
            >
              Not a good fit{' '}
              <span class="visually-hidden" safe>
                {handle}
              </span>
            </button>
          </>
        ) : (
          ''
        )}
        {props.outcome ? (
          <span class="outcome" role="status" safe>
            {props.outcome}
          </span>
        ) : (
          ''
        )}
        {props.error ? (
          <span class="outcome error" role="alert" safe>
            {props.error}
          </span>
        ) : (
          ''
        )}
      </td>
    </tr>
  );
}
