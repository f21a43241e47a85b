// The frame every page shares, and the few pieces pages repeat: publisher-written text, links, statuses.
// hono/jsx escapes every text and attribute value; nothing here builds HTML from strings.
import type { Child } from 'hono/jsx';
import type { Principal } from '../route.js';
import { SCRIPT, STYLESHEET } from './assets.js';

/** Who is looking: a signed-in user (from the session cookie), with the CSRF token of the session. */
export interface Viewer {
  principal: Principal;
  name: string;
  csrf: string;
}

// Controls that reorder text (embeddings, overrides, isolates): shown as their code points, so a name
// cannot read as another one.
const BIDI_CONTROLS = /[\u202a-\u202e\u2066-\u2069\u200e\u200f\u061c]/g;

export const visible = (text: string) =>
  text.replace(BIDI_CONTROLS, (char) => `[U+${char.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}]`);

/** Text a publisher wrote: isolated from the text around it, its direction controls made visible. */
export const Untrusted = ({ text }: { text: string | null | undefined }) => <bdi>{visible(text ?? '')}</bdi>;

/** An https URL as given, or undefined: any other scheme (javascript:, data:, http:) is not linked. */
export function httpsUrl(url: string | null | undefined): string | undefined {
  if (!url) return undefined;
  try {
    return new URL(url).protocol === 'https:' ? url : undefined;
  } catch {
    return undefined;
  }
}

/** A link to a publisher's URL when it is https, else the text alone. */
export const OutLink = ({ url }: { url: string | null | undefined }) => {
  const href = httpsUrl(url);
  if (!href) return url ? <Untrusted text={url} /> : <span class="muted">none</span>;
  return (
    <a href={href} rel="noopener nofollow noreferrer">
      <Untrusted text={href} />
    </a>
  );
};

const STATUS_WORDS: Record<string, string> = {
  NodeVersionStatusActive: 'Active',
  NodeVersionStatusPending: 'Pending',
  NodeVersionStatusFlagged: 'Flagged',
  NodeVersionStatusBanned: 'Banned',
  NodeVersionStatusDeleted: 'Deleted',
};

export const Status = ({ status }: { status: string }) => (
  <span class={`status-${status}`}>{STATUS_WORDS[status] ?? status}</span>
);

export const nodeHref = (id: string) => `/nodes/${encodeURIComponent(id)}`;
export const publisherHref = (id: string) => `/publishers/${encodeURIComponent(id)}`;
export const versionHref = (nodeId: string, version: string) =>
  `${nodeHref(nodeId)}/versions/${encodeURIComponent(version)}`;

/** The CSRF token every form that changes something carries (checked by session.ts). */
export const CsrfField = ({ viewer }: { viewer: Viewer }) => <input type="hidden" name="csrf" value={viewer.csrf} />;

export const Layout = ({ title, viewer, children }: { title: string; viewer: Viewer | null; children: Child }) => (
  <html lang="en">
    <head>
      <meta charset="utf-8" />
      <meta name="viewport" content="width=device-width, initial-scale=1" />
      <title>{`${visible(title)} · nodereg`}</title>
      <link rel="stylesheet" href={STYLESHEET.path} />
      <script src={SCRIPT.path} defer></script>
    </head>
    <body>
      <header>
        <a class="brand" href="/">
          nodereg
        </a>
        <a href="/">Search</a>
        {viewer?.principal.admin ? <a href="/web/review">Review queue</a> : null}
        {viewer ? (
          <form method="post" action="/web/sign-out">
            <CsrfField viewer={viewer} />
            <span class="muted">
              Signed in as <Untrusted text={viewer.name} />{' '}
            </span>
            <button type="submit" class="plain">
              Sign out
            </button>
          </form>
        ) : (
          <a href="/web/sign-in">Sign in</a>
        )}
      </header>
      <main>{children}</main>
    </body>
  </html>
);
