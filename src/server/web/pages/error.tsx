import { Layout, type Viewer } from '../layout.js';

/** A refusal (404, 403, 400) as a page, with the message the API would give. */
export const ErrorPage = ({ viewer, status, message }: { viewer: Viewer | null; status: number; message: string }) => (
  <Layout title={status === 404 ? 'Not found' : 'Not allowed'} viewer={viewer}>
    <h1>{status === 404 ? 'Not found' : status === 400 ? 'Not accepted' : 'Not allowed'}</h1>
    <p class="error">{message}</p>
    <p>
      <a href="/">Back to the search</a>
    </p>
  </Layout>
);
