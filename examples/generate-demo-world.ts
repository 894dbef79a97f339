// Writes examples/demo-world.json: `npx tsx examples/generate-demo-world.ts`.
// Every id and choice derives from fixed labels and a seeded generator, so the output is identical
// on every run and reseeding the file is idempotent (every object carries an explicit id).
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

type Json = Record<string, unknown>;

const digest = (label: string) => createHash('sha256').update(`outreach-demo:${label}`).digest();

function uid(label: string): string {
  const b = digest(label);
  b[6] = (b[6] & 0x0f) | 0x40;
  b[8] = (b[8] & 0x3f) | 0x80;
  const h = b.subarray(0, 16).toString('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}
const accountId = (label: string) => `onb_${uid(`account/${label}`)}`;

// mulberry32: small, seedable, good enough to spread demo data.
function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
const rand = rng(20261121);
const pick = <T>(list: readonly T[]): T => list[Math.floor(rand() * list.length)];
const between = (lo: number, hi: number) => lo + Math.floor(rand() * (hi - lo + 1));

const NOW = Date.parse('2026-11-20T16:00:00Z');
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const iso = (ms: number) => new Date(ms).toISOString().replace('.000Z', 'Z');
const daysAgo = (d: number, hour = 9) => NOW - d * DAY + (hour - 16) * HOUR + between(0, 50) * 60_000;

const FIRST = [
  'Maya',
  'Liam',
  'Aisha',
  'Noah',
  'Sofia',
  'Ethan',
  'Chloe',
  'Mateo',
  'Hana',
  'Lucas',
  'Zara',
  'Oliver',
  'Ines',
  'Kai',
  'Leila',
  'Jonas',
  'Amara',
  'Felix',
  'Nora',
  'Ravi',
  'Elif',
  'Diego',
  'Yuki',
  'Samir',
  'Freya',
  'Tomas',
  'Mei',
  'Arjun',
  'Clara',
  'Omar',
  'Lena',
  'Hugo',
  'Priyanka',
  'Bruno',
  'Astrid',
  'Kwame',
  'Julia',
  'Anton',
  'Rosa',
  'Emeka',
];
const LAST = [
  'Chen',
  'Okafor',
  'Novak',
  'Haddad',
  'Lindqvist',
  'Moreau',
  'Tanaka',
  'Silva',
  'Kowalski',
  'Mensah',
  'Fischer',
  'Rossi',
  'Patel',
  'Dubois',
  'Nakamura',
  'Alvarez',
  'Berg',
  'Kaur',
  'Osei',
  'Schmidt',
  'Costa',
  'Ivanova',
  'Walsh',
  'Yilmaz',
  'Brennan',
  'Sato',
  'Varga',
  'Nyberg',
];
const COMPANIES = [
  'Initech',
  'Globex',
  'Hooli',
  'Vandelay Industries',
  'Umbrella Analytics',
  'Stark Robotics',
  'Wayne Logistics',
  'Pied Piper',
  'Soylent Foods',
  'Tyrell Systems',
  'Cyberdyne Cloud',
  'Aperture Labs',
  'Massive Dynamic',
  'Wonka Supply',
  'Oscorp Health',
  'Dunder Paper',
  'Blue Sun Energy',
  'Gringotts Pay',
  'Monarch Freight',
  'Nakatomi Trading',
];
const TITLES = ['CEO & Co-founder', 'CTO', 'VP Sales', 'Head of Growth', 'VP Marketing', 'Head of RevOps', 'COO', 'Founder', 'Director of Sales', 'CRO'];
const BIOTECH = ['Helix Bio', 'Crescent Therapeutics', 'Arbor Genomics', 'Lumen Diagnostics', 'Quanta Cell', 'Northshore Pharma', 'Verdant BioLabs'];
const LAB_TITLES = ['Lab Manager', 'Head of Research Operations', 'Director of Procurement', 'Principal Scientist', 'VP R&D'];

let personCounter = 0;
function person() {
  personCounter += 1;
  const first = FIRST[(personCounter * 7) % FIRST.length];
  const last = LAST[(personCounter * 11 + Math.floor(personCounter / FIRST.length)) % LAST.length];
  return { first, last, full: `${first} ${last}`, n: personCounter };
}
const slug = (s: string) => s.toLowerCase().replace(/[^a-z0-9]+/g, '');
function handleOf(p: { first: string; last: string; n: number }) {
  const styles = [`${p.first}_${p.last}`, `${p.first}${p.last}${p.n % 100}`, `${p.first[0]}${p.last}_${p.n}`, `the${p.first}${p.n}`];
  return pick(styles)
    .replace(/[^A-Za-z0-9_]/g, '')
    .slice(0, 15);
}
let userIdCounter = 0;
function xUserId() {
  userIdCounter += 1;
  // A mix of old short ids and recent 19-digit snowflake ids, as real accounts have.
  return rand() < 0.25
    ? String(between(10_000_000, 999_999_999))
    : `15${String(between(10, 99))}${String(userIdCounter).padStart(4, '0')}${String(between(10_000_000_000, 99_999_999_999))}`;
}

// ---------------------------------------------------------------------------------------------------
// Public-data world
// ---------------------------------------------------------------------------------------------------
const users: Json[] = [];
const follows: Json[] = [];
const NW_X = { userId: '1582047716390912001', handle: 'northwind_hq' };
const FABRIKAM_X = { userId: '1377015526403153920', handle: 'fabrikam_io' };
// The autopilot Play's own account. Discovery reads the followers of a Play's account and autopilot enrolls
// them; on @northwind_hq it would turn every unreviewed candidate of the manual Plays into a lead at the first
// engine pass, and a newcomer's first enroll would answer `existing_lead` for each.
const NW_LIVE_X = { userId: '1582047716390912002', handle: 'northwind_live' };
users.push({ xUserId: NW_X.userId, username: NW_X.handle, name: 'Northwind Outreach' });
users.push({ xUserId: NW_LIVE_X.userId, username: NW_LIVE_X.handle, name: 'Northwind Live' });
users.push({ xUserId: FABRIKAM_X.userId, username: FABRIKAM_X.handle, name: 'Fabrikam' });

interface XPerson {
  xUserId: string;
  username: string;
  name: string;
  company: string;
  title: string;
}
// The public profiles reviewers judge candidates by (bio, location, followers, picture, pinned post). They draw from
// their own random stream, so adding them left every other value of the world as it was.
const profileRand = rng(20261127);
const profilePick = <T>(list: readonly T[]): T => list[Math.floor(profileRand() * list.length)];
const LOCATIONS = ['Berlin', 'London', 'Paris', 'Amsterdam', 'New York, NY', 'San Francisco, CA', 'Austin, TX', 'Toronto', 'Singapore', 'Lisbon', 'Remote'];
const BIO_TAILS = [
  'Building the boring parts of B2B sales so reps can sell.',
  'Ex-Salesforce. Writing about pipeline math.',
  'Outbound that respects people. Opinions are my own.',
  'Hiring SDRs who like writing.',
  'Dad, runner, spreadsheet enthusiast.',
  'Angel investor in 12 SaaS companies.',
  'Newsletter on revenue operations every Tuesday.',
];
const POSTS = [
  'We cut our sales cycle by 18 days by killing the second discovery call. Thread on what replaced it.',
  'Hot take: most "personalisation" in cold email is just mail merge with extra steps.',
  'Hiring! Looking for a founding AE in Europe. DMs open.',
  'Our Q3 pipeline review in one chart: referrals beat every paid channel again.',
  'Just published our outbound playbook, free for anyone who asks.',
  'Three things I look for in a sales tool: it sends from my account, I approve every word, it stops when they reply.',
  'Spoke at SaaStr about reply rates. Slides in the replies.',
];
function profileFor(x: { username: string; company: string; title: string }): Json {
  const profile: Json = {
    bio: `${x.title} at ${x.company}. ${profilePick(BIO_TAILS)}`,
    location: profilePick(LOCATIONS),
    // Most people have a few hundred followers; a few have many.
    followersCount: Math.floor(40 + profileRand() ** 3 * 48_000),
  };
  // Four in five have a picture (DiceBear draws one from the handle; a failed fetch shows initials), three in four a
  // pinned post; the others show what the page does without them.
  if (profileRand() < 0.8) profile.profileImageUrl = `https://api.dicebear.com/9.x/notionists/png?seed=${encodeURIComponent(x.username)}&size=96`;
  if (profileRand() < 0.75) profile.lastPost = { text: profilePick(POSTS), createdAt: iso(NOW - Math.floor(profileRand() * 30 * DAY)) };
  return profile;
}

const usedHandles = new Set<string>([NW_X.handle, NW_LIVE_X.handle, FABRIKAM_X.handle]);
function xPerson(): XPerson {
  for (;;) {
    const p = person();
    const username = handleOf(p);
    if (usedHandles.has(username.toLowerCase())) continue;
    usedHandles.add(username.toLowerCase());
    const x = { xUserId: xUserId(), username, name: p.full, company: pick(COMPANIES), title: pick(TITLES) };
    users.push({ xUserId: x.xUserId, username: x.username, name: x.name, ...profileFor(x) });
    return x;
  }
}

// ---------------------------------------------------------------------------------------------------
// Northwind Outreach (Team owner)
// ---------------------------------------------------------------------------------------------------
const NW = uid('workspace/northwind');
const CONTOSO = uid('workspace/contoso');

const ACC = {
  dana: accountId('northwind/dana'),
  marcus: accountId('northwind/marcus'),
  priya: accountId('northwind/priya'),
  elena: accountId('contoso/elena'),
};

const SEQ = {
  founders: uid('sequence/founders'),
  growth: uid('sequence/growth'),
  revops: uid('sequence/revops'),
  agencies: uid('sequence/agencies'),
  webinar: uid('sequence/webinar'),
  xWarm: uid('sequence/x-warm'),
  nurture: uid('sequence/nurture'),
  labs: uid('sequence/contoso-labs'),
  procurement: uid('sequence/contoso-procurement'),
};

const sequences: Json[] = [
  {
    id: SEQ.founders,
    name: 'Founders — Series A outbound',
    status: 'active',
    revision: 3,
    approvedRevision: 3,
    approvedAt: iso(daysAgo(40)),
    channels: ['linkedin', 'email'],
    steps: [
      {
        kind: 'connect',
        delayDays: 0,
        message: 'Hi {{firstName}}, I work with a handful of Series A founders on outbound that does not feel like outbound. Would love to connect.',
      },
      { kind: 'engage', delayDays: 1, actions: [{ type: 'like_last_post', count: 1, reaction: 'like' }] },
      {
        kind: 'message',
        delayDays: 2,
        variants: [
          {
            key: 'A',
            weight: 50,
            messageTmpl: 'Thanks for connecting, {{firstName}}! Curious how {{company}} books first meetings today — mostly founder-led?',
          },
          {
            key: 'B',
            weight: 50,
            messageTmpl: '{{firstName}}, congrats on the raise. We helped two teams your size double reply rates in a quarter; worth a 15-minute look?',
          },
        ],
      },
      { kind: 'message', delayDays: 4, message: 'Bumping this in case it got buried, {{firstName}}. Happy to share the playbook either way.' },
      {
        kind: 'email',
        delayDays: 3,
        subject: 'Outbound idea for {{company}}',
        message: 'Hi {{firstName}},\n\nShort version: a 3-step sequence, reviewed by you, sent from your own account. Want the template?\n\nDana',
      },
    ],
  },
  {
    id: SEQ.growth,
    name: 'Heads of Growth — Q4',
    status: 'paused',
    revision: 2,
    approvedRevision: 2,
    approvedAt: iso(daysAgo(30)),
    steps: [
      { kind: 'connect', delayDays: 0, message: null },
      {
        kind: 'message',
        delayDays: 1,
        message: 'Hi {{firstName}} — we are comparing notes with growth leads on Q4 pipeline. What is working for {{company}} right now?',
      },
      { kind: 'message', delayDays: 5, message: 'Last nudge from me, {{firstName}}: I can send the benchmark we compiled from 40 B2B teams.' },
    ],
  },
  {
    id: SEQ.revops,
    name: 'RevOps leaders',
    status: 'draft',
    revision: 2,
    approvedRevision: 1,
    approvedAt: iso(daysAgo(21)),
    steps: [
      { kind: 'engage', delayDays: 0, actions: [{ type: 'view_profile', count: 1, reaction: null }] },
      { kind: 'connect', delayDays: 1, message: 'Hi {{firstName}}, fellow RevOps nerd here — connecting to swap notes on routing rules.' },
      { kind: 'message', delayDays: 3, message: 'How are you handling lead routing between SDRs and AEs at {{company}}?', tool: 'calendar_suggest' },
    ],
    // Revision 1 as it was approved: revision 2 (an agent's edit, waiting for review) warmed the invite up with a
    // profile view and asked a sharper question. The console shows the two side by side.
    approvedSteps: [
      { kind: 'connect', delayDays: 0, message: 'Hi {{firstName}}, I work with RevOps teams on routing. Open to connect?' },
      { kind: 'message', delayDays: 3, message: 'Curious how {{company}} routes inbound leads today?' },
    ],
  },
  {
    id: SEQ.agencies,
    name: 'Agency partners pilot',
    status: 'draft',
    revision: 1,
    approvedRevision: null,
    steps: [
      { kind: 'connect', delayDays: 0, message: 'Hi {{firstName}}, we are opening a small partner pilot for agencies. Open to connect?' },
      { kind: 'message', delayDays: 2, message: 'Here is the one-pager for the partner pilot, {{firstName}}: margins, support, and co-selling.' },
    ],
  },
  {
    id: SEQ.webinar,
    name: 'Summer webinar invites',
    status: 'archived',
    revision: 4,
    approvedRevision: 4,
    approvedAt: iso(daysAgo(150)),
    steps: [
      { kind: 'connect', delayDays: 0, message: 'Hi {{firstName}}, hosting a 30-minute session on outbound in July. Want an invite?' },
      { kind: 'message', delayDays: 2, message: 'Here is the link, {{firstName}}: https://events.example/northwind-summer' },
    ],
  },
  {
    id: SEQ.xWarm,
    name: 'X followers — warm DM',
    status: 'active',
    revision: 2,
    approvedRevision: 2,
    approvedAt: iso(daysAgo(35)),
    channels: ['x'],
    steps: [
      {
        kind: 'x_engage',
        delayDays: 0,
        actions: [
          { type: 'like_recent_post', count: 2, reaction: null },
          { type: 'follow', count: 1, reaction: null },
        ],
      },
      {
        kind: 'x_dm',
        delayDays: 1,
        variants: [
          { key: 'A', weight: 70, messageTmpl: 'Thanks for following @northwind_hq, {{firstName}}! What made you follow — outbound, or the memes?' },
          { key: 'B', weight: 30, messageTmpl: 'Hey {{firstName}} — saw you follow us. We just published our reply-rate benchmark; want a copy?' },
        ],
      },
      { kind: 'x_dm', delayDays: 4, message: 'No pressure, {{firstName}} — the benchmark link stays open: https://northwind.example/benchmark' },
    ],
  },
  {
    id: SEQ.nurture,
    name: 'Nurture follow-up',
    status: 'active',
    revision: 1,
    approvedRevision: 1,
    approvedAt: iso(daysAgo(60)),
    steps: [
      { kind: 'message', delayDays: 14, message: 'Hi {{firstName}}, circling back as promised. Is now a better time to compare notes?' },
      {
        kind: 'email',
        delayDays: 7,
        subject: 'Checking back in',
        message: 'Hi {{firstName}}, a quick note in case LinkedIn is not your inbox of choice. Still interested?',
      },
    ],
  },
];

// ---------------------------------------------------------------------------------------------------
// Plays and candidates
// ---------------------------------------------------------------------------------------------------
const PLAY = {
  followers: uid('play/followers'),
  launch: uid('play/launch-post'),
  fabrikam: uid('play/fabrikam'),
  saastr: uid('play/saastr'),
};

interface Cand {
  json: Json;
  x: XPerson;
  status: string;
}
const reviewers = ['dana@northwind.example', 'marcus@northwind.example', 'api'];
function candidates(
  play: string,
  plan: [status: string, count: number][],
  opts: { reviewer?: string; people?: XPerson[]; reviewedDaysAgo?: [number, number] } = {},
): Cand[] {
  const out: Cand[] = [];
  let i = 0;
  for (const [status, count] of plan) {
    for (let k = 0; k < count; k++, i++) {
      const x = opts.people?.[i] ?? xPerson();
      const [lo, hi] = opts.reviewedDaysAgo ?? [3, 30];
      const review =
        status === 'approved' || status === 'rejected'
          ? {
              decision: status === 'approved' ? 'good_fit' : 'not_a_good_fit',
              reviewedAt: iso(daysAgo(between(lo, hi), between(9, 17))),
              by: opts.reviewer ?? pick(reviewers),
            }
          : null;
      out.push({ x, status, json: { id: uid(`candidate/${play}/${x.xUserId}`), xUserId: x.xUserId, username: x.username, name: x.name, status, review } });
    }
  }
  return out;
}

const followersCands = candidates(PLAY.followers, [
  ['approved', 40],
  ['rejected', 15],
  ['imported', 25],
  ['proposed', 60],
]);
// Ten people followed the account and also engaged with the launch post: they are candidates of both Plays.
const shared = followersCands
  .filter((c) => c.status === 'proposed')
  .slice(0, 10)
  .map((c) => c.x);
const launchCands = candidates(
  PLAY.launch,
  [
    ['proposed', 30],
    ['imported', 10],
    ['approved', 15],
    ['rejected', 5],
  ],
  {
    people: [...shared, ...Array.from({ length: 50 }, () => xPerson())],
  },
);
const fabrikamCands = candidates(
  PLAY.fabrikam,
  [
    ['approved', 25],
    ['rejected', 10],
    ['proposed', 5],
  ],
  { reviewer: 'autopilot' },
);
const saastrCands = candidates(
  PLAY.saastr,
  [
    ['approved', 12],
    ['rejected', 8],
  ],
  { reviewedDaysAgo: [120, 140] },
);

// Scripted outcomes for a few approved people who are not enrolled yet, so enrolling them in the demo
// shows an accepted follow-up and a reply.
followersCands
  .filter((c) => c.status === 'approved')
  .slice(30, 34)
  .forEach((c, i) => {
    c.json.sandbox = i % 2 === 0 ? { replyAfterHours: 6, replyText: 'Ha, the benchmark got me. Send it over!' } : { replyAfterHours: null };
  });

// Most followers still follow; a few have unfollowed since discovery (the list is not live evidence).
followersCands.forEach((c, i) => {
  if (i % 13 !== 5) follows.push({ follower: c.x.xUserId, followed: NW_X.userId });
});
launchCands.forEach((c, i) => {
  if (i % 2 === 0 && !shared.includes(c.x)) follows.push({ follower: c.x.xUserId, followed: NW_X.userId });
});
fabrikamCands.forEach((c) => follows.push({ follower: c.x.xUserId, followed: NW_LIVE_X.userId }));
follows.push({ follower: NW_X.userId, followed: FABRIKAM_X.userId });
const suspended = launchCands.find((c) => c.status === 'proposed' && !shared.includes(c.x))!.x.username;

const plays: Json[] = [
  {
    id: PLAY.followers,
    name: 'Followers of @northwind_hq',
    status: 'active',
    revision: 3,
    sequenceId: SEQ.xWarm,
    accountUserId: NW_X.userId,
    reviewApiEnabled: true,
    autopilot: false,
    candidates: followersCands.map((c) => c.json),
  },
  {
    id: PLAY.launch,
    name: 'Engaged with our launch post',
    status: 'paused',
    revision: 2,
    sequenceId: SEQ.xWarm,
    accountUserId: NW_X.userId,
    reviewApiEnabled: true,
    autopilot: false,
    candidates: launchCands.map((c) => c.json),
  },
  {
    id: PLAY.fabrikam,
    name: 'Followers of @northwind_live (autopilot)',
    status: 'active',
    revision: 1,
    sequenceId: SEQ.xWarm,
    accountUserId: NW_LIVE_X.userId,
    reviewApiEnabled: true,
    autopilot: true,
    candidates: fabrikamCands.map((c) => c.json),
  },
  {
    id: PLAY.saastr,
    name: 'SaaStr 2026 attendees',
    status: 'archived',
    revision: 4,
    sequenceId: null,
    accountUserId: NW_X.userId,
    reviewApiEnabled: false,
    autopilot: false,
    candidates: saastrCands.map((c) => c.json),
  },
];

// ---------------------------------------------------------------------------------------------------
// Leads, activity and replies
// ---------------------------------------------------------------------------------------------------
type Stage = 'queued' | 'resolving' | 'invited' | 'accepted' | 'messaged' | 'followed_up' | 'replied' | 'failed' | 'skipped';

interface Ledger {
  leads: Json[];
  activity: Json[];
  replies: Json[];
}
const act = (l: Ledger, leadId: string, at: number, action: string, extra: Json = {}) =>
  l.activity.push({ id: uid(`activity/${leadId}/${action}/${at}`), createdAt: iso(at), action, outcome: 'ok', leadId, ...extra });

interface LinkedInLeadSpec {
  stage: Stage;
  account: string;
  sequenceId: string;
  startedDaysAgo: number;
  email?: boolean;
  booked?: 'qualified' | 'no_show' | null;
  sentiment?: 'positive' | 'neutral' | 'negative';
  extra?: Json;
  company?: string;
  title?: string;
}

/** A LinkedIn lead whose milestones and ledger entries follow from its stage. */
function linkedInLead(l: Ledger, label: string, spec: LinkedInLeadSpec): Json {
  const p = person();
  const id = uid(`lead/${label}`);
  const company = spec.company ?? pick(COMPANIES);
  const start = daysAgo(spec.startedDaysAgo, between(8, 11));
  const order: Stage[] = ['queued', 'resolving', 'invited', 'accepted', 'messaged', 'followed_up', 'replied'];
  const reached = (s: Stage) => order.indexOf(spec.stage) >= order.indexOf(s);
  const lead: Json = {
    id,
    person: p.full,
    company,
    title: spec.title ?? pick(TITLES),
    email: spec.email ? `${slug(p.first)}.${slug(p.last)}@${slug(company)}.example` : null,
    linkedinUrl: `https://www.linkedin.com/in/${slug(p.first)}-${slug(p.last)}-${p.n}`,
    account: spec.account,
    sequenceId: spec.sequenceId,
    stage: spec.stage,
    currentStep: 0,
    createdAt: iso(start - 2 * HOUR),
    invitePriority: between(0, 3),
  };
  const common = { account: spec.account, detail: JSON.stringify({ sequenceId: spec.sequenceId }) };
  let t = start;
  if (spec.stage === 'queued') {
    lead.nextActionAt = iso(NOW + between(2, 40) * HOUR);
  } else if (spec.stage === 'resolving') {
    lead.nextActionAt = iso(NOW + between(1, 3) * HOUR);
    act(l, id, t, 'resolve', { ...common, outcome: 'skipped', units: 0, detail: 'profile url redirected; retrying resolution' });
  } else if (spec.stage === 'failed') {
    lead.lastError = 'profile_unreachable: LinkedIn answered 404 for this profile';
    lead.automationStopped = true;
    act(l, id, t, 'invite', { ...common, outcome: 'failed', units: 0, detail: 'profile_unreachable' });
    act(l, id, t + 60_000, 'error', { ...common, outcome: 'failed', units: 0, detail: 'profile_unreachable: LinkedIn answered 404 for this profile' });
  } else if (spec.stage === 'skipped') {
    lead.automationStopped = true;
    act(l, id, t, 'invite', { ...common, outcome: 'skipped', units: 0, detail: 'already connected through another workspace account' });
  }
  if (reached('invited') && !['failed', 'skipped'].includes(spec.stage)) {
    lead.invitedAt = iso(t);
    act(l, id, t, 'invite', common);
    lead.currentStep = 0;
    if (spec.stage === 'invited') lead.nextActionAt = iso(t + 14 * DAY);
  }
  if (reached('accepted') && !['failed', 'skipped'].includes(spec.stage)) {
    t += between(4, 40) * HOUR;
    lead.connectedAt = iso(t);
    act(l, id, t, 'accepted', { account: spec.account });
    lead.currentStep = 1;
    if (spec.stage === 'accepted') lead.nextActionAt = iso(Math.max(NOW + HOUR, t + 2 * DAY));
  }
  if (reached('messaged') && !['failed', 'skipped'].includes(spec.stage)) {
    t += between(1, 3) * DAY;
    lead.messagedAt = iso(t);
    const variant = pick(['A', 'B']);
    // The engine writes the variant it sent into the ledger entry; the loader takes the lead's A/B arm from it.
    const sent = spec.sequenceId === SEQ.founders ? { variant } : {};
    act(l, id, t, 'message', { ...common, detail: JSON.stringify({ sequenceId: spec.sequenceId, step: 2, ...sent }) });
    lead.currentStep = 2;
    if (spec.stage === 'messaged') lead.nextActionAt = iso(Math.max(NOW + 3 * HOUR, t + 4 * DAY));
  }
  if (reached('followed_up') && spec.stage !== 'replied' && !['failed', 'skipped'].includes(spec.stage)) {
    t += between(3, 5) * DAY;
    lead.messagedAt = iso(t);
    act(l, id, t, 'followup', common);
    lead.currentStep = 3;
    lead.nextActionAt = iso(Math.max(NOW + 5 * HOUR, t + 3 * DAY));
  }
  if (spec.stage === 'replied') {
    t += between(5, 50) * HOUR;
    lead.repliedAt = iso(t);
    lead.automationStopped = true;
    lead.replySentiment = spec.sentiment ?? 'positive';
    act(l, id, t, 'reply_detected', { account: spec.account, detail: JSON.stringify({ sentiment: lead.replySentiment }) });
    if (spec.booked) {
      t += between(1, 2) * DAY;
      lead.meetingBookedAt = iso(t);
      lead.meetingOutcome = spec.booked;
      act(l, id, t, 'meeting_booked', { account: spec.account, detail: 'booked via booking link' });
      if (spec.booked === 'no_show') act(l, id, t + 3 * DAY, 'meeting_no_show', { account: spec.account });
    }
  }
  Object.assign(lead, spec.extra ?? {});
  l.leads.push(lead);
  return lead;
}

/** A lead enrolled from an X Play candidate, with follow, like and DM milestones. */
function xLead(l: Ledger, c: Cand, playId: string, stage: Stage, startedDaysAgo: number, extra: Json = {}, account = NW_X): Json {
  const id = uid(`lead/x/${playId}/${c.x.xUserId}`);
  const start = daysAgo(startedDaysAgo, between(9, 15));
  const lead: Json = {
    id,
    person: c.x.name,
    company: c.x.company,
    title: c.x.title,
    xUserId: c.x.xUserId,
    username: c.x.username,
    accountUserId: account.userId,
    playId,
    sequenceId: SEQ.xWarm,
    stage,
    currentStep: 0,
    automationStopped: false,
    createdAt: iso(start - HOUR),
  };
  let t = start;
  if (stage === 'queued') lead.nextActionAt = iso(NOW + between(1, 20) * HOUR);
  if (stage === 'resolving') {
    lead.nextActionAt = iso(NOW + HOUR);
    act(l, id, t, 'resolve', { outcome: 'skipped', units: 0, detail: 'public-data provider busy; retrying' });
  }
  // The stage follows the ledger as the engine moves it: a follow invites, a follow-back accepts, a DM messages.
  if (['invited', 'accepted', 'messaged', 'followed_up', 'replied', 'failed', 'skipped'].includes(stage)) {
    act(l, id, t, 'x_like', { detail: JSON.stringify({ count: 2 }) });
    lead.followedAt = iso(t + 5 * 60_000);
    act(l, id, t + 5 * 60_000, 'x_follow', {});
    lead.currentStep = 1;
    if (stage === 'invited') lead.nextActionAt = iso(Math.max(NOW + 2 * HOUR, t + DAY));
  }
  if (stage === 'accepted') {
    const back = t + between(2, 20) * HOUR;
    lead.followedBackAt = iso(back);
    act(l, id, back, 'x_follow_back', {});
    lead.nextActionAt = iso(Math.max(NOW + HOUR, t + DAY));
  }
  if (stage === 'failed') {
    lead.lastError = 'x_dm_forbidden: the recipient does not accept direct messages';
    lead.automationStopped = true;
    act(l, id, t + DAY, 'x_dm', { outcome: 'failed', units: 0, detail: 'x_dm_forbidden' });
  }
  if (stage === 'skipped') {
    lead.automationStopped = true;
    act(l, id, t + DAY, 'manual_override', { detail: 'stopped by dana@northwind.example' });
  }
  if (['messaged', 'followed_up', 'replied'].includes(stage)) {
    if (rand() < 0.6) {
      const back = t + between(2, 20) * HOUR;
      lead.followedBackAt = iso(back);
      act(l, id, back, 'x_follow_back', {});
    }
    t += DAY;
    lead.messagedAt = iso(t);
    act(l, id, t, 'x_dm', { detail: JSON.stringify({ step: 1, variant: pick(['A', 'A', 'B']) }) });
    lead.currentStep = 2;
    if (stage === 'messaged') lead.nextActionAt = iso(Math.max(NOW + 2 * HOUR, t + 4 * DAY));
  }
  if (stage === 'followed_up') {
    t += 4 * DAY;
    lead.messagedAt = iso(t);
    act(l, id, t, 'x_dm', { detail: JSON.stringify({ step: 2 }) });
    lead.currentStep = 2;
    lead.automationStopped = true;
  }
  if (stage === 'replied') {
    t += between(3, 30) * HOUR;
    lead.repliedAt = iso(t);
    lead.automationStopped = true;
    lead.replySentiment = 'positive';
    act(l, id, t, 'reply_detected', { detail: JSON.stringify({ channel: 'x' }) });
  }
  Object.assign(lead, extra);
  l.leads.push(lead);
  return lead;
}

const nw: Ledger = { leads: [], activity: [], replies: [] };

// X leads enrolled from approved candidates of the followers Play and the autopilot Play.
const approvedFollowers = followersCands.filter((c) => c.status === 'approved');
const xStages: [Stage, number][] = [
  ['queued', 5],
  ['resolving', 1],
  ['invited', 3],
  ['accepted', 2],
  ['messaged', 7],
  ['followed_up', 3],
  ['replied', 4],
  ['failed', 1],
  ['skipped', 2],
];
let cursor = 0;
const xReplied: Json[] = [];
for (const [stage, count] of xStages) {
  for (let k = 0; k < count; k++) {
    const lead = xLead(nw, approvedFollowers[cursor++], PLAY.followers, stage, between(3, 24));
    if (stage === 'replied') xReplied.push(lead);
  }
}
fabrikamCands
  .filter((c) => c.status === 'approved')
  .slice(0, 10)
  .forEach((c, i) =>
    xLead(nw, c, PLAY.fabrikam, (['queued', 'messaged', 'messaged', 'followed_up', 'replied'] as Stage[])[i % 5], between(2, 18), {}, NW_LIVE_X),
  );
// Northwind follows back the people it followed, in the simulated public data.
for (const lead of nw.leads) if (lead.followedAt) follows.push({ follower: String(lead.accountUserId), followed: lead.xUserId });

// LinkedIn leads across every stage and all three accounts.
const liPlan: [Stage, number, Partial<LinkedInLeadSpec>?][] = [
  ['queued', 8],
  ['resolving', 2],
  ['invited', 9],
  ['accepted', 6],
  ['messaged', 8],
  ['followed_up', 6],
  ['replied', 4, { email: true, booked: 'qualified' }],
  ['replied', 2, { email: false, booked: 'no_show' }],
  ['replied', 4, { sentiment: 'neutral' }],
  ['replied', 2, { sentiment: 'negative' }],
  ['failed', 2],
  ['skipped', 3],
];
const linkedInReplied: Json[] = [];
let li = 0;
for (const [stage, count, more] of liPlan) {
  for (let k = 0; k < count; k++, li++) {
    const account = stage === 'queued' && k < 3 ? ACC.priya : li % 3 === 0 ? ACC.marcus : ACC.dana;
    const sequenceId = account === ACC.marcus && li % 2 === 0 ? SEQ.growth : SEQ.founders;
    const lead = linkedInLead(nw, `northwind/li/${li}`, {
      stage,
      account,
      sequenceId,
      startedDaysAgo: stage === 'queued' ? 0 : stage === 'invited' ? between(2, 10) : between(8, 30),
      email: more?.email ?? rand() < 0.5,
      booked: more?.booked ?? null,
      sentiment: more?.sentiment,
    });
    if (stage === 'replied' && !more?.booked) linkedInReplied.push(lead);
  }
}
// Priya's account is warming up: a few invites, nothing else yet.
for (let k = 0; k < 3; k++)
  linkedInLead(nw, `northwind/li/priya/${k}`, { stage: 'invited', account: ACC.priya, sequenceId: SEQ.founders, startedDaysAgo: between(1, 6) });
// One lead opted out, one snoozed into the nurture sequence, and a finished cohort of the archived webinar sequence.
linkedInLead(nw, 'northwind/li/opted-out', {
  stage: 'replied',
  account: ACC.dana,
  sequenceId: SEQ.founders,
  startedDaysAgo: 26,
  sentiment: 'negative',
  extra: { optedOutAt: iso(daysAgo(18, 14)) },
});
linkedInLead(nw, 'northwind/li/snoozed', {
  stage: 'replied',
  account: ACC.marcus,
  sequenceId: SEQ.nurture,
  startedDaysAgo: 28,
  email: true,
  sentiment: 'neutral',
  // Snoozed, not stopped: the sequence resumes when the snooze ends.
  extra: { automationStopped: false, snoozedUntil: iso(NOW + 40 * DAY), nextActionAt: iso(NOW + 40 * DAY) },
});
for (let k = 0; k < 5; k++) {
  linkedInLead(nw, `northwind/li/webinar/${k}`, {
    stage: k < 3 ? 'messaged' : 'replied',
    account: ACC.dana,
    sequenceId: SEQ.webinar,
    startedDaysAgo: between(130, 150),
    extra: { sequenceDone: true, nextActionAt: null },
  });
}
// Scripted outcomes for some queued leads, so the first engine passes show acceptances, follow-backs and replies.
const scripts: Json[] = [
  { acceptsInviteAfterHours: 3, replyAfterHours: 20, replyText: 'Sounds good, can we meet Tuesday?' },
  { acceptsInviteAfterHours: 8, replyAfterHours: null },
  { acceptsInviteAfterHours: null },
  { followsBackAfterHours: 2, replyAfterHours: 5, replyText: 'Sure, send the benchmark over.' },
  { failWith: { error: 'x_dm_forbidden', kinds: ['x_dm'] } },
];
const queuedLinkedIn = nw.leads.filter((l) => l.stage === 'queued' && l.account);
const queuedX = nw.leads.filter((l) => l.stage === 'queued' && l.xUserId);
[queuedLinkedIn[0], queuedLinkedIn[1], queuedLinkedIn[2], queuedX[0], queuedX[1]].forEach((lead, i) => (lead.sandbox = scripts[i]));

// A skipped invite the pacing cap deferred.
nw.activity.push({
  id: uid('activity/northwind/cap'),
  createdAt: iso(daysAgo(1, 17)),
  action: 'invite',
  outcome: 'skipped',
  units: 0,
  detail: "today's invite cap reached (ramp phase 2)",
  account: ACC.priya,
  leadId: null,
});

// Pending replies: with and without an email on the lead, and one X reply (no draft).
const withEmail = linkedInReplied.find((l) => l.email && l.replySentiment === 'neutral') ?? linkedInReplied[0];
const withoutEmail = linkedInReplied.find((l) => !l.email && l !== withEmail) ?? linkedInReplied[1];
const replyRows: [Json, string, string, string | null][] = [
  [
    withEmail,
    'meeting_intent',
    'Sounds good, can we meet Tuesday?',
    "Great! Here's my calendar: https://cal.example/northwind/intro — Tuesday afternoon works on my side.",
  ],
  [
    withoutEmail,
    'question',
    'What does pricing look like for a 12-person sales team?',
    'Happy to share: most teams your size land on Growth. Want me to walk you through it in 15 minutes?',
  ],
  [
    linkedInReplied.find((l) => l !== withEmail && l !== withoutEmail)!,
    'not_now',
    'Interesting, but we are heads-down until January. Ping me then?',
    'Totally understand — I will check back in early January. Good luck with the quarter!',
  ],
];
for (const [lead, classification, theirMessage, draft] of replyRows) {
  const id = lead.id as string;
  nw.replies.push({ id: uid(`reply/${id}`), leadId: id, channel: 'linkedin', classification, theirMessage, draft, repliedAt: lead.repliedAt });
  act(nw, id, Date.parse(lead.repliedAt as string) + 2 * 60_000, 'reply_drafted', { account: lead.account, units: 0 });
}
nw.replies.push({
  id: uid(`reply/${String(xReplied[0].id)}`),
  leadId: xReplied[0].id,
  channel: 'x',
  classification: 'interested',
  theirMessage: 'Thanks for the DM! Yes, send the benchmark please.',
  draft: null,
  repliedAt: xReplied[0].repliedAt,
});

// ---------------------------------------------------------------------------------------------------
// Contoso Labs (Team client of Northwind)
// ---------------------------------------------------------------------------------------------------
const contoso: Ledger = { leads: [], activity: [], replies: [] };
const contosoPlan: [Stage, number][] = [
  ['queued', 4],
  ['invited', 6],
  ['accepted', 3],
  ['messaged', 5],
  ['followed_up', 2],
  ['replied', 3],
  ['failed', 1],
  ['skipped', 1],
];
let ci = 0;
const contosoReplied: Json[] = [];
for (const [stage, count] of contosoPlan) {
  for (let k = 0; k < count; k++, ci++) {
    const lead = linkedInLead(contoso, `contoso/li/${ci}`, {
      stage,
      account: ACC.elena,
      sequenceId: SEQ.labs,
      startedDaysAgo: stage === 'queued' ? 0 : between(4, 25),
      email: ci % 2 === 0,
      company: pick(BIOTECH),
      title: pick(LAB_TITLES),
      booked: stage === 'replied' && k === 0 ? 'qualified' : null,
    });
    if (stage === 'replied' && k > 0) contosoReplied.push(lead);
  }
}
contoso.replies.push({
  id: uid(`reply/${String(contosoReplied[0].id)}`),
  leadId: contosoReplied[0].id,
  channel: 'linkedin',
  classification: 'meeting_intent',
  theirMessage: 'We are evaluating new sample-tracking tools this quarter. Do you have 20 minutes next week?',
  draft: 'Absolutely — would Wednesday 10am PT work? Happy to bring a short demo.',
  repliedAt: contosoReplied[0].repliedAt,
});

// New followers of @northwind_live that no Play has seen yet: the first engine pass shows autopilot
// discovering and enrolling them. Made last, so the seeded generator gives everything above the same values.
for (let i = 0; i < 3; i++) follows.push({ follower: xPerson().xUserId, followed: NW_LIVE_X.userId });

const world = {
  publicData: {
    users,
    follows,
    unavailable: ['ghost_profile', suspended],
  },
  workspaces: [
    {
      id: NW,
      name: 'Northwind Outreach',
      // No `key`: the loader generates the secret at each load, so no key of the demo is public.
      apiKeys: [{ expiresAt: null, revoked: false }],
      clients: [{ workspaceId: CONTOSO, role: 'admin' }],
      settings: { xChannelEnabled: true, bookingLink: 'https://cal.example/northwind/intro', followUpSequenceId: SEQ.nurture },
      billing: { plan: 'growth', status: 'active' },
      energy: { balance: 742, dailyRefill: 1000 },
      xAccounts: [NW_X, NW_LIVE_X],
      messagingAccounts: [
        {
          id: ACC.dana,
          name: 'Dana Whitfield (LinkedIn)',
          mode: 'linkedin',
          timeZone: 'Europe/Paris',
          connectedAt: '2026-03-02T08:12:00Z',
          warmupStartedAt: '2026-03-02T08:15:00Z',
          accountScore: 86,
          relationsCount: 2140,
        },
        {
          id: ACC.marcus,
          name: 'Marcus Lee (LinkedIn)',
          mode: 'linkedin',
          timeZone: 'America/New_York',
          connectedAt: '2026-06-15T14:40:00Z',
          warmupStartedAt: '2026-06-15T14:45:00Z',
          accountScore: 74,
          relationsCount: 980,
        },
        {
          id: ACC.priya,
          name: 'Priya Raman (LinkedIn)',
          mode: 'linkedin',
          timeZone: 'Asia/Singapore',
          connectedAt: '2026-11-09T02:05:00Z',
          warmupStartedAt: '2026-11-10T01:00:00Z',
          accountScore: 52,
          relationsCount: 310,
        },
      ],
      sequences,
      plays,
      leads: nw.leads,
      replies: nw.replies,
      activity: nw.activity.sort((a, b) => String(a.createdAt).localeCompare(String(b.createdAt))),
    },
    {
      id: CONTOSO,
      name: 'Contoso Labs',
      settings: { xChannelEnabled: false, bookingLink: null, followUpSequenceId: null },
      billing: { plan: 'starter', status: 'trialing' },
      energy: { balance: 250, dailyRefill: 250 },
      messagingAccounts: [
        {
          id: ACC.elena,
          name: 'Elena Garcia (LinkedIn)',
          mode: 'linkedin',
          timeZone: 'America/Los_Angeles',
          connectedAt: '2026-10-01T17:30:00Z',
          warmupStartedAt: '2026-10-01T17:35:00Z',
          accountScore: 68,
          relationsCount: 640,
        },
      ],
      sequences: [
        {
          id: SEQ.labs,
          name: 'Lab managers — biotech',
          status: 'active',
          revision: 1,
          approvedRevision: 1,
          approvedAt: iso(daysAgo(28)),
          steps: [
            {
              kind: 'connect',
              delayDays: 0,
              message: 'Hi {{firstName}}, I help lab teams at {{company}}-sized orgs stop losing samples in spreadsheets. Open to connect?',
            },
            { kind: 'message', delayDays: 2, message: 'Thanks for connecting! How does {{company}} track sample custody today?' },
            { kind: 'message', delayDays: 5, message: 'Quick follow-up, {{firstName}}: here is a 2-minute video of our chain-of-custody view.' },
          ],
        },
        { id: SEQ.procurement, name: 'Procurement — draft', status: 'draft', revision: 1, approvedRevision: null, steps: [{ kind: 'connect', delayDays: 0 }] },
      ],
      leads: contoso.leads,
      replies: contoso.replies,
      activity: contoso.activity.sort((a, b) => String(a.createdAt).localeCompare(String(b.createdAt))),
    },
  ],
};

const target = fileURLToPath(new URL('./demo-world.json', import.meta.url));
fs.writeFileSync(target, `${JSON.stringify(world, null, 2)}\n`);
const candidateCount = plays.reduce((n, p) => n + (p.candidates as unknown[]).length, 0);
process.stdout.write(
  `wrote ${target}: ${users.length} public users, ${candidateCount} candidates, ${nw.leads.length + contoso.leads.length} leads, ` +
    `${nw.activity.length + contoso.activity.length} activity entries, ${nw.replies.length + contoso.replies.length} replies\n`,
);
