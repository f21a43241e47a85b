import { Layout, type Viewer } from '../layout.js';

/** Paste a user token once; the server keeps a session instead (session.ts). */
export const SignInPage = ({ viewer, csrf, problem }: { viewer: Viewer | null; csrf: string; problem?: string }) => (
  <Layout title="Sign in" viewer={viewer}>
    <h1>Sign in</h1>
    {problem ? <p class="error">{problem}</p> : null}
    <p>
      Paste a user token: the registry's admin makes your first one (<code>nodereg user create</code>), and{' '}
      <code>nodereg token create --user</code> makes more. It is checked once; the page keeps a session, never the
      token.
    </p>
    <form class="stack" method="post" action="/web/sign-in">
      <input type="hidden" name="csrf" value={csrf} />
      <label>
        User token
        <input type="password" name="token" id="token" required autocomplete="off" />
      </label>
      <button type="submit">Sign in</button>
    </form>
  </Layout>
);
