/** An endpoint as the API shows it (never its secret). */
export interface EndpointView {
  id: string;
  tool: 'calendly' | 'cal';
  label: string | null;
  url: string;
  createdAt: string;
  rotatedAt: string | null;
  /** The Calendly webhook subscription made from here (docs/meetings.md "Subscribing from here"), or null. */
  subscription: { uri: string; scope: 'user' | 'organization'; subscribedAt: string } | null;
}

/** An endpoint just created or rotated: its secret and the steps to register it, shown this once. */
export type EndpointWithSecret = EndpointView & { secret: string; steps: string[] };

/**
 * How to register an endpoint at its tool (docs/meetings.md "Set-up"; Calendly's "Webhook subscriptions" and Cal.com's
 * "Webhooks" pages, read 2026-11-29): shown with the secret, in the console, the CLI and the API.
 */
export function endpointSteps(tool: 'calendly' | 'cal', url: string): string[] {
  if (tool === 'calendly')
    return [
      'Calendly webhooks need a paid plan (Standard or above) and a personal access token (Integrations → API and webhooks).',
      `Create the subscription with the API: POST https://api.calendly.com/webhook_subscriptions with url ${url}, events ` +
        '["invitee.created", "invitee.canceled", "invitee_no_show.created", "invitee_no_show.deleted"], your organization URI, ' +
        'scope "organization" (or "user" with your user URI) and signing_key set to the secret above.',
      'Or let this service do it with the token: Settings → Meetings → Subscribe at Calendly, or CALENDLY_TOKEN=<token> ' +
        'outreach meetings endpoint subscribe --workspace <id> --id <endpoint id>.',
      'Booking links keep their UTM parameters: the utm_content this service adds names the lead.',
    ];
  return [
    'In Cal.com (cloud or self-hosted) open Settings → Developer → Webhooks → New.',
    `Subscriber URL: ${url}`,
    'Secret: the secret above (required here: an unsigned delivery is refused).',
    'Event triggers: Booking created, Booking rescheduled, Booking cancelled, Booking rejected, Meeting ended, Booking no-show updated.',
    'Leave the payload template empty (the default payload is what this service reads).',
  ];
}
