/**
 * GitHub `push` deliveries of about 1 KB, each carrying `benchid<n>x` in its commit message, signed like GitHub signs
 * them.
 */
import crypto from 'node:crypto';

export const BENCH_SECRET = 'bench-webhook-secret-0123456789';

export interface Delivery {
  body: Buffer;
  headers: Record<string, string>;
}

/** The push payload for id n: one commit whose message and `after` sha carry the id. */
export function pushPayload(n: number): Record<string, unknown> {
  const sha = crypto.createHash('sha1').update(`benchid${n}x`).digest('hex');
  const repo = 'octo-org/herald-bench';
  return {
    ref: 'refs/heads/main',
    before: '1a2b3c4d5e6f708192a3b4c5d6e7f80912345678',
    after: sha,
    created: false,
    deleted: false,
    forced: false,
    compare: `https://github.com/${repo}/compare/1a2b3c4d5e6f...${sha.slice(0, 12)}`,
    repository: {
      id: 812345678,
      name: 'herald-bench',
      full_name: repo,
      private: false,
      html_url: `https://github.com/${repo}`,
      owner: { login: 'octo-org', id: 6811672 },
      default_branch: 'main',
    },
    pusher: { name: 'monalisa', email: 'monalisa@users.noreply.github.com' },
    sender: { login: 'monalisa', id: 2, html_url: 'https://github.com/monalisa', type: 'User' },
    commits: [
      {
        id: sha,
        tree_id: 'd6f5a0b1c2e3f4a5b6c7d8e9f0a1b2c3d4e5f6a7',
        distinct: true,
        message: `benchid${n}x Tune the relay hot path`,
        timestamp: '2026-01-05T10:02:11+01:00',
        url: `https://github.com/${repo}/commit/${sha}`,
        author: { name: 'Mona Lisa', email: 'monalisa@users.noreply.github.com', username: 'monalisa' },
        committer: { name: 'GitHub', email: 'noreply@github.com', username: 'web-flow' },
        added: [],
        removed: [],
        modified: ['core/src/relay/pipeline/dispatcher.ts'],
      },
    ],
  };
}

/** A signed delivery with the headers GitHub sends. */
export function delivery(n: number, secret = BENCH_SECRET): Delivery {
  const body = Buffer.from(JSON.stringify(pushPayload(n)));
  const sig = crypto.createHmac('sha256', secret).update(body).digest('hex');
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'user-agent': 'GitHub-Hookshot/bench',
      'x-github-event': 'push',
      'x-github-delivery': crypto.randomUUID(),
      'x-github-hook-id': '512345678',
      'x-hub-signature-256': `sha256=${sig}`,
    },
  };
}
