/**
 * A tiny fake upsd speaking the NUT network protocol on 127.0.0.1 (ephemeral port), for the
 * failure modes a real upsd will not produce on demand: a peer that never answers, hangs or
 * drops in the middle of a LIST, stale data, plus STARTTLS with a test certificate.
 * Commands: USERNAME, PASSWORD, LOGIN, LIST VAR, GET VAR, STARTTLS, LOGOUT.
 */
import net from 'node:net';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';

export type FakeNutBehaviour = 'normal' | 'silent' | 'hang-mid-list' | 'drop-mid-list' | 'stale';

export interface FakeNutOptions {
  ups?: string;
  vars?: Record<string, string>;
  /** username → password of users allowed to LOGIN. */
  users?: Record<string, string>;
  /** When set, STARTTLS is offered with this key and certificate (PEM). */
  tls?: { key: string; cert: string };
}

export interface FakeNut {
  readonly port: number;
  /** Every command line received, in order (passwords included: it is a test fake). */
  readonly commands: string[];
  behaviour: FakeNutBehaviour;
  vars: Record<string, string>;
  close(): Promise<void>;
}

const quote = (v: string) => `"${v.replace(/[\\"]/g, '\\$&')}"`;

export async function startFakeNut(opts: FakeNutOptions = {}): Promise<FakeNut> {
  const ups = opts.ups ?? 'test';
  const sockets = new Set<net.Socket>();
  const commands: string[] = [];

  function serve(stream: Duplex, plain: net.Socket, secure: boolean): void {
    let buf = '';
    let user: string | undefined;
    let pass: string | undefined;
    const out = (line: string) => {
      if (!stream.destroyed) stream.write(`${line}\n`);
    };
    const onData = (d: Buffer) => {
      buf += d.toString();
      let nl: number;
      while ((nl = buf.indexOf('\n')) >= 0) {
        const line = buf.slice(0, nl).replace(/\r$/, '');
        buf = buf.slice(nl + 1);
        commands.push(line);
        if (fake.behaviour === 'silent') continue;
        const [cmd, a1, a2] = line.split(' ');
        if (cmd === 'STARTTLS') {
          if (!opts.tls || secure) {
            out(`ERR ${secure ? 'ALREADY-SSL-MODE' : 'FEATURE-NOT-CONFIGURED'}`);
            continue;
          }
          out('OK STARTTLS');
          stream.off('data', onData);
          const upgraded = new tls.TLSSocket(plain, { isServer: true, key: opts.tls.key, cert: opts.tls.cert });
          upgraded.on('error', () => {});
          serve(upgraded, plain, true);
          return;
        }
        if (cmd === 'USERNAME') {
          user = line.slice(9).replace(/^"|"$/g, '');
          out('OK');
          continue;
        }
        if (cmd === 'PASSWORD') {
          pass = line.slice(9).replace(/^"|"$/g, '');
          out('OK');
          continue;
        }
        if (cmd === 'LOGOUT') {
          out('OK Goodbye');
          stream.end();
          return;
        }
        if (cmd === 'LOGIN') {
          if (a1 !== ups) out('ERR UNKNOWN-UPS');
          else if (!user || !pass || opts.users?.[user] !== pass) out('ERR ACCESS-DENIED');
          else out('OK');
          continue;
        }
        if (cmd === 'GET' && a1 === 'VAR') {
          const [, , u, name] = line.split(' ');
          if (u !== ups) out('ERR UNKNOWN-UPS');
          else if (!(name! in fake.vars)) out('ERR VAR-NOT-SUPPORTED');
          else out(`VAR ${ups} ${name} ${quote(fake.vars[name!]!)}`);
          continue;
        }
        if (cmd === 'LIST' && a1 === 'VAR') {
          if (a2 !== ups) {
            out('ERR UNKNOWN-UPS');
            continue;
          }
          if (fake.behaviour === 'stale') {
            out('ERR DATA-STALE');
            continue;
          }
          out(`BEGIN LIST VAR ${ups}`);
          const entries = Object.entries(fake.vars);
          if (fake.behaviour === 'hang-mid-list') {
            out(`VAR ${ups} ${entries[0]![0]} ${quote(entries[0]![1])}`);
            continue;
          }
          if (fake.behaviour === 'drop-mid-list') {
            // Half a line, then the connection is cut.
            stream.write(`VAR ${ups} ${entries[0]![0]} ${quote(entries[0]![1])}\nVAR ${ups} batt`, () =>
              plain.destroy(),
            );
            return;
          }
          for (const [k, v] of entries) out(`VAR ${ups} ${k} ${quote(v)}`);
          out(`END LIST VAR ${ups}`);
          continue;
        }
        out('ERR UNKNOWN-COMMAND');
      }
    };
    stream.on('data', onData);
  }

  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => {});
    serve(socket, socket, false);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));

  const fake: FakeNut = {
    port: (server.address() as net.AddressInfo).port,
    commands,
    behaviour: 'normal',
    vars: { 'battery.charge': '100', 'battery.runtime': '3600', 'ups.status': 'OL', ...opts.vars },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return fake;
}
