/**
 * Apprise URLs, the notation a home lab's configuration already holds (`tgram://…`, `ntfys://…`),
 * read into the target kind and config Herald has for the same service. Pure: no I/O. A Telegram
 * URL names a bot token rather than a bot record: the caller finds or creates the bot and puts its id
 * into the config (`bot_token` is handed back beside the config for that).
 *
 * The forms follow Apprise's own URL templates (its plugins' `templates`), and its query options
 * where Herald has the matching setting (`?to=`, `?smtp=`, `?from=`, `?priority=`…).
 */

/** Why a URL could not be read into a target; `code` for the API, `detail` a sentence. */
export class AppriseUrlError extends Error {
  readonly code: string;
  readonly params: Record<string, string>;
  constructor(code: string, message: string, params: Record<string, string> = {}) {
    super(message);
    this.code = code;
    this.params = params;
  }
}

export interface ImportedTarget {
  kind: string;
  config: Record<string, unknown>;
  /** Telegram: the bot token the target must send with (the caller turns it into `config.bot_id`). */
  botToken?: string;
  /** A name for the target when the caller gives none. */
  suggestedName: string;
}

/** Every scheme read here, and the target kind it becomes. */
export const APPRISE_SCHEMES: Record<string, string> = {
  tgram: 'telegram',
  discord: 'chat_webhook',
  slack: 'chat_webhook',
  mmost: 'chat_webhook',
  mmosts: 'chat_webhook',
  mailto: 'email',
  mailtos: 'email',
  matrix: 'matrix',
  matrixs: 'matrix',
  ntfy: 'ntfy',
  ntfys: 'ntfy',
  gotify: 'gotify',
  gotifys: 'gotify',
  pover: 'pushover',
  json: 'http',
  jsons: 'http',
  msteams: 'teams',
  workflows: 'teams',
  workflow: 'teams',
  gchat: 'google_chat',
  signal: 'signal',
  signals: 'signal',
  mqtt: 'mqtt',
  mqtts: 'mqtt',
  apprise: 'apprise_api',
  apprises: 'apprise_api',
};

interface Parts {
  scheme: string;
  user?: string;
  password?: string;
  host: string;
  port?: string;
  /** Path segments, decoded, empty ones dropped. */
  path: string[];
  query: URLSearchParams;
  fragment: string;
}

const dec = (s: string) => {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
};

/**
 * Splits an Apprise URL by hand: its "host" is often a token (`tgram://123:ABC/…` has a colon that
 * is not a port), which WHATWG URL parsing would refuse or rewrite.
 */
function split(raw: string): Parts {
  const m = /^([a-z][a-z0-9+.-]*):\/\/(.*)$/is.exec(raw.trim());
  if (!m)
    throw new AppriseUrlError(
      'apprise_url_invalid',
      'This is not an Apprise URL: it should look like scheme://…, for example ntfys://ntfy.example.org/alerts.',
    );
  const scheme = m[1]!.toLowerCase();
  let rest = m[2]!;
  let fragment = '';
  const hash = rest.indexOf('#');
  if (hash >= 0) {
    fragment = rest.slice(hash + 1);
    rest = rest.slice(0, hash);
  }
  const query = new URLSearchParams();
  const q = rest.indexOf('?');
  if (q >= 0) {
    // By hand: a `+` is Apprise's prefix of a header name (`?+X-Api-Key=…`), not a space.
    for (const pair of rest.slice(q + 1).split('&')) {
      if (!pair) continue;
      const eq = pair.indexOf('=');
      query.append(dec(eq >= 0 ? pair.slice(0, eq) : pair), dec(eq >= 0 ? pair.slice(eq + 1) : ''));
    }
    rest = rest.slice(0, q);
  }
  const slash = rest.indexOf('/');
  let authority = slash >= 0 ? rest.slice(0, slash) : rest;
  const path = (slash >= 0 ? rest.slice(slash + 1) : '').split('/').filter(Boolean).map(dec);
  let user: string | undefined;
  let password: string | undefined;
  const at = authority.lastIndexOf('@');
  if (at >= 0) {
    const cred = authority.slice(0, at);
    authority = authority.slice(at + 1);
    const colon = cred.indexOf(':');
    user = dec(colon >= 0 ? cred.slice(0, colon) : cred) || undefined;
    password = colon >= 0 ? dec(cred.slice(colon + 1)) || undefined : undefined;
  }
  let host = authority;
  let port: string | undefined;
  const pm = /^(.*?):(\d{1,5})$/.exec(authority);
  if (pm && !authority.startsWith('[')) {
    host = pm[1]!;
    port = pm[2];
  }
  const v6 = /^(\[[^\]]+\])(?::(\d{1,5}))?$/.exec(authority);
  if (v6) {
    host = v6[1]!;
    port = v6[2];
  }
  return { scheme, user, password, host: dec(host), port, path, query, fragment: dec(fragment) };
}

const need = (value: string | undefined, scheme: string, what: string): string => {
  if (!value)
    throw new AppriseUrlError('apprise_url_incomplete', `The ${scheme}:// URL has no ${what}.`, {
      scheme,
      missing: what,
    });
  return value;
};

const base = (secure: boolean, p: Parts, path: string[] = []) => {
  const port = p.port ? `:${p.port}` : '';
  const rest = path.length ? `/${path.map(encodeURIComponent).join('/')}` : '';
  return `${secure ? 'https' : 'http'}://${p.host}${port}${rest}`;
};

/** Reads one Apprise URL into a target kind and config; throws AppriseUrlError for anything it cannot map. */
export function importAppriseUrl(raw: string): ImportedTarget {
  const p = split(raw);
  const kind = APPRISE_SCHEMES[p.scheme];
  if (!kind) {
    throw new AppriseUrlError(
      'apprise_scheme_unsupported',
      `Herald has no target for Apprise's ${p.scheme}:// URLs; the supported schemes are ` +
        `${Object.keys(APPRISE_SCHEMES).join(', ')}.`,
      { scheme: p.scheme },
    );
  }
  const s = p.scheme;
  switch (s) {
    case 'tgram': {
      const token = need(p.host + (p.port ? `:${p.port}` : ''), s, 'bot token');
      if (!/^\d+:[\w-]+$/.test(token))
        throw new AppriseUrlError(
          'apprise_url_invalid',
          'A tgram:// URL starts with the bot token, e.g. tgram://123456789:ABCdef…/-1001234567890.',
          { scheme: s },
        );
      const chat = need(p.path[0], s, 'chat id');
      return { kind, botToken: token, config: { chat_id: chat }, suggestedName: `Telegram ${chat}` };
    }
    case 'discord': {
      const id = need(p.host, s, 'webhook id');
      const token = need(p.path[0], s, 'webhook token');
      return {
        kind,
        config: { format: 'discord', url: `https://discord.com/api/webhooks/${id}/${token}` },
        suggestedName: 'Discord',
      };
    }
    case 'slack': {
      const tokens = [p.host, ...p.path];
      if (tokens.length < 3 || !tokens.slice(0, 3).every((x) => /^[A-Za-z0-9]+$/.test(x))) {
        throw new AppriseUrlError(
          'apprise_url_incomplete',
          'Herald posts to Slack through an incoming webhook: the slack:// URL needs its three webhook ' +
            'tokens (slack://T…/B…/…); bot tokens (xoxb-…) are not supported.',
          { scheme: s, missing: 'webhook tokens' },
        );
      }
      const channel = tokens[3]?.replace(/^#/, '') || p.fragment || undefined;
      return {
        kind,
        config: { format: 'slack', url: `https://hooks.slack.com/services/${tokens.slice(0, 3).join('/')}` },
        suggestedName: channel ? `Slack #${channel}` : 'Slack',
      };
    }
    case 'mmost':
    case 'mmosts': {
      const token = need(p.path.at(-1), s, 'webhook token');
      const url = `${base(s === 'mmosts', p, [...p.path.slice(0, -1), 'hooks', token])}`;
      const channel = p.query.get('channel') ?? p.query.get('to') ?? undefined;
      return {
        kind,
        config: { format: 'mattermost', url, ...(channel ? { channel } : {}), ...(p.user ? { username: p.user } : {}) },
        suggestedName: `Mattermost ${p.host}`,
      };
    }
    case 'mailto':
    case 'mailtos': {
      const domain = need(p.host, s, 'domain');
      const user = p.user ?? p.query.get('user') ?? undefined;
      const address = user ? (user.includes('@') ? user : `${user}@${domain}`) : undefined;
      const from = p.query.get('from') ?? address;
      const to = (p.query.get('to') ?? p.path.join(',') ?? '').split(/[,\s]+/).filter(Boolean);
      if (!to.length && address) to.push(address);
      const port = p.query.get('port') ?? p.port;
      const mode = (p.query.get('mode') ?? '').toLowerCase();
      const security = s === 'mailto' ? 'none' : mode === 'ssl' || port === '465' ? 'tls' : 'starttls';
      return {
        kind,
        config: {
          host: p.query.get('smtp') ?? domain,
          ...(port ? { port: Number(port) } : {}),
          security,
          ...(user ? { username: user } : {}),
          ...(p.password ? { password: p.password } : {}),
          from: need(from, s, 'sender (user@ or ?from=)'),
          to,
        },
        suggestedName: `Email ${to.join(', ')}`,
      };
    }
    case 'matrix':
    case 'matrixs': {
      // Herald's Matrix target posts with an access token: matrix://{token}@{host}/{room} or
      // matrix://{user}:{token}@{host}/{room}.
      // A user:password pair logs in, which Herald's target does not do; a Synapse (syt_) or MAS (mat_, mct_) access
      // token in the password place, or ?token=, is a token.
      const looksLikeToken = (v: string | undefined) => Boolean(v && /^(syt|mat|mct)_/.test(v));
      const token =
        p.query.get('token') ??
        (p.password === undefined ? p.user : looksLikeToken(p.password) ? p.password : undefined);
      if (!token)
        throw new AppriseUrlError(
          'apprise_url_incomplete',
          'Herald posts to Matrix with an access token: use matrixs://{token}@{host}/{room id}; a user ' +
            'name and password are not supported.',
          { scheme: s, missing: 'access token' },
        );
      const room = p.fragment ? `#${p.fragment.replace(/^#/, '')}` : need(p.path[0], s, 'room');
      return {
        kind,
        config: { homeserver_url: base(s === 'matrixs', p), access_token: token, room_id: room },
        suggestedName: `Matrix ${room}`,
      };
    }
    case 'ntfy':
    case 'ntfys': {
      // ntfy://{topic} is a topic on the public server; otherwise the host comes first.
      const publicTopic = p.path.length === 0;
      const topic = publicTopic ? p.host : need(p.path[0], s, 'topic');
      const server = publicTopic ? 'https://ntfy.sh' : base(s === 'ntfys', p);
      const token = p.query.get('token') ?? (p.user && !p.password && p.user.startsWith('tk_') ? p.user : undefined);
      const auth = token ? { token } : p.user && p.password ? { username: p.user, password: p.password } : {};
      return { kind, config: { server_url: server, topic, ...auth }, suggestedName: `ntfy ${topic}` };
    }
    case 'gotify':
    case 'gotifys': {
      const token = need(p.path.at(-1), s, 'application token');
      return {
        kind,
        config: { server_url: base(s === 'gotifys', p, p.path.slice(0, -1)), app_token: token },
        suggestedName: `Gotify ${p.host}`,
      };
    }
    case 'pover': {
      const userKey = need(p.user, s, 'user key');
      const token = need(p.host, s, 'application token');
      const device = p.path.filter((d) => !d.startsWith('+')).join(',') || undefined;
      const sound = p.query.get('sound') ?? undefined;
      return {
        kind,
        config: { user_key: userKey, app_token: token, ...(device ? { device } : {}), ...(sound ? { sound } : {}) },
        suggestedName: 'Pushover',
      };
    }
    case 'json':
    case 'jsons': {
      // Plain headers go into `headers`; a credential (user:password, or an Authorization header) into the secret
      // `auth_value`.
      const headers: Record<string, string> = {};
      let auth: string | undefined;
      for (const [k, v] of p.query) {
        if (!k.startsWith('+')) continue;
        if (k.slice(1).toLowerCase() === 'authorization') auth = v;
        else headers[k.slice(1)] = v;
      }
      if (p.user) auth = `Basic ${Buffer.from(`${p.user}:${p.password ?? ''}`).toString('base64')}`;
      const method = (p.query.get('method') ?? 'POST').toUpperCase();
      if (!['POST', 'PUT', 'PATCH'].includes(method))
        throw new AppriseUrlError(
          'apprise_url_invalid',
          `Herald's HTTP target sends POST, PUT or PATCH, not ${method}.`,
          { scheme: s },
        );
      return {
        kind,
        config: {
          url: base(s === 'jsons', p, p.path),
          method,
          content_type: 'json',
          ...(Object.keys(headers).length ? { headers } : {}),
          ...(auth ? { auth_header: 'Authorization', auth_value: auth } : {}),
        },
        suggestedName: `HTTP ${p.host}`,
      };
    }
    case 'msteams': {
      throw new AppriseUrlError(
        'apprise_scheme_unsupported',
        'msteams:// URLs name an Office 365 connector, which Microsoft retired; create a Teams Workflows ' +
          'webhook and paste its URL (or a workflows:// URL).',
        { scheme: s },
      );
    }
    case 'workflows':
    case 'workflow': {
      // workflows://{host}:{port}/{workflow}/{signature}: a Teams Workflows (Power Automate) HTTP trigger.
      const workflow = need(p.path[0] ?? p.query.get('id') ?? undefined, s, 'workflow id');
      const signature = need(p.path[1] ?? p.query.get('sig') ?? p.query.get('signature') ?? undefined, s, 'signature');
      const pa = /^(1|y|yes|true|on)$/i.test(p.query.get('pa') ?? p.query.get('powerautomate') ?? '');
      const version = p.query.get('ver') ?? p.query.get('api-version') ?? (pa ? '2022-03-01-preview' : '2016-06-01');
      const query = new URLSearchParams({
        'api-version': version,
        sp: '/triggers/manual/run',
        sv: '1.0',
        sig: signature,
      });
      const origin = `https://${p.host}${p.port ? `:${p.port}` : ''}${pa ? '/powerautomate/automations/direct' : ''}`;
      const url = `${origin}/workflows/${encodeURIComponent(workflow)}/triggers/manual/paths/invoke?${query}`;
      return { kind, config: { url }, suggestedName: 'Teams' };
    }
    case 'gchat': {
      const workspace = need(p.host, s, 'space');
      const key = need(p.path[0], s, 'webhook key');
      const token = need(p.path[1], s, 'webhook token');
      return {
        kind,
        config: {
          url:
            `https://chat.googleapis.com/v1/spaces/${encodeURIComponent(workspace)}/messages` +
            `?key=${encodeURIComponent(key)}&token=${encodeURIComponent(token)}`,
        },
        suggestedName: 'Google Chat',
      };
    }
    case 'signal':
    case 'signals': {
      const from = need(p.path[0], s, 'sender number');
      const normalize = (n: string) => (/^[+\d][\d\s()-]+$/.test(n) ? `+${n.replace(/\D/g, '')}` : n);
      const recipients = [...p.path.slice(1), ...(p.query.get('to') ?? '').split(/[,\s]+/)]
        .filter(Boolean)
        .map(normalize);
      if (!recipients.length) recipients.push(normalize(from));
      return {
        kind,
        config: { api_url: base(s === 'signals', p), number: normalize(from), recipients },
        suggestedName: `Signal ${recipients.join(', ')}`,
      };
    }
    case 'mqtt':
    case 'mqtts': {
      const topic = need(p.path.join('/'), s, 'topic');
      const qos = p.query.get('qos');
      return {
        kind,
        config: {
          url: `${s}://${p.host}${p.port ? `:${p.port}` : ''}`,
          topic,
          ...(p.user ? { username: p.user } : {}),
          ...(p.password ? { password: p.password } : {}),
          ...(qos === '0' || qos === '1' ? { qos: Number(qos) } : {}),
        },
        suggestedName: `MQTT ${topic}`,
      };
    }
    case 'apprise':
    case 'apprises': {
      const key = need(p.path.at(-1), s, 'configuration key');
      const tag = p.query.get('tags') ?? p.query.get('tag') ?? undefined;
      return {
        kind,
        config: { url: base(s === 'apprises', p, p.path.slice(0, -1)), key, ...(tag ? { tag } : {}) },
        suggestedName: `Apprise ${key}`,
      };
    }
  }
  throw new AppriseUrlError('apprise_scheme_unsupported', `Herald has no target for Apprise's ${s}:// URLs.`, {
    scheme: s,
  });
}

/** The URL with its secrets (user info, path tokens, query values) replaced, for logs. */
export function redactAppriseUrl(raw: string): string {
  const m = /^([a-z][a-z0-9+.-]*):\/\//i.exec(raw.trim());
  return m ? `${m[1]}://[REDACTED]` : '[REDACTED]';
}
