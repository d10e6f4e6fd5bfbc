/**
 * A small client for the NUT network protocol: connect (optionally upgrading with STARTTLS),
 * USERNAME/PASSWORD, LOGIN, LIST VAR and LOGOUT, with a time limit on the connect and on every reply.
 */
import net from 'node:net';
import tls from 'node:tls';
import { LineReader } from './line-reader.ts';
import { errCode, NutConnectionError, NutServerError, NutTlsError, parseVarLine, quoteArg } from './protocol.ts';

export type StartTlsMode = 'off' | 'try' | 'require';

export interface NutConnectOptions {
  /** The configured host name; kept for the TLS server name and certificate check. */
  host: string;
  port: number;
  /** The address to dial, already checked by the outbound policy. */
  address: string;
  connectTimeoutMs: number;
  replyTimeoutMs: number;
  starttls: StartTlsMode;
  /** PEM certificate(s) to trust for STARTTLS instead of the system store. */
  tlsCa?: string;
  signal?: AbortSignal;
}

/** Answers to STARTTLS that mean "not available here", which `try` mode accepts. */
const NO_TLS = new Set(['FEATURE-NOT-CONFIGURED', 'FEATURE-NOT-SUPPORTED', 'UNKNOWN-COMMAND']);
/** A LIST longer than this is not a UPS. */
const MAX_LIST_LINES = 5_000;

export class NutClient {
  private socket: net.Socket | tls.TLSSocket;
  private reader: LineReader;
  private readonly replyTimeoutMs: number;
  /** True once the conversation runs over TLS. */
  secure = false;

  private constructor(socket: net.Socket, replyTimeoutMs: number) {
    this.socket = socket;
    this.reader = new LineReader(socket);
    this.replyTimeoutMs = replyTimeoutMs;
  }

  /** Opens the TCP connection and, per `starttls`, upgrades it to TLS. */
  static async connect(o: NutConnectOptions): Promise<NutClient> {
    const socket = await dial(o);
    const client = new NutClient(socket, o.replyTimeoutMs);
    const onAbort = () => client.destroy();
    o.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('close', () => o.signal?.removeEventListener('abort', onAbort));
    try {
      if (o.starttls !== 'off') await client.startTls(o);
    } catch (err) {
      client.destroy();
      throw err;
    }
    return client;
  }

  /** Sends one command and returns its single-line `OK…` reply; `ERR` becomes NutServerError. */
  async command(line: string): Promise<string> {
    this.write(line);
    const reply = await this.reader.next(this.replyTimeoutMs);
    const code = errCode(reply);
    if (code) throw new NutServerError(code, line.split(' ', 1)[0]!);
    if (!reply.startsWith('OK'))
      throw new NutConnectionError(`unexpected reply from upsd to ${line.split(' ', 1)[0]}: ${reply.slice(0, 80)}`);
    return reply;
  }

  /** Sends USERNAME and PASSWORD (upsd checks them only when a privileged command such as LOGIN runs). */
  async authenticate(username: string, password: string): Promise<void> {
    await this.command(`USERNAME ${quoteArg(username)}`);
    await this.command(`PASSWORD ${quoteArg(password)}`);
  }

  /** All variables of one UPS (`LIST VAR <ups>`). */
  async listVars(ups: string): Promise<Map<string, string>> {
    const q = quoteArg(ups);
    this.write(`LIST VAR ${q}`);
    const first = await this.reader.next(this.replyTimeoutMs);
    const code = errCode(first);
    if (code) throw new NutServerError(code, 'LIST VAR');
    if (!first.startsWith('BEGIN LIST VAR'))
      throw new NutConnectionError(`unexpected reply from upsd to LIST VAR: ${first.slice(0, 80)}`);
    const vars = new Map<string, string>();
    for (let n = 0; n < MAX_LIST_LINES; n++) {
      const line = await this.reader.next(this.replyTimeoutMs);
      if (line.startsWith('END LIST VAR')) return vars;
      const kv = parseVarLine(line, ups);
      if (!kv) throw new NutConnectionError(`unexpected line in LIST VAR: ${line.slice(0, 80)}`);
      vars.set(kv[0], kv[1]);
    }
    throw new NutConnectionError('LIST VAR did not end');
  }

  /** Says goodbye politely (bounded) and closes the socket. Never throws. */
  async logout(): Promise<void> {
    if (!this.socket.destroyed && this.socket.writable) {
      try {
        this.write('LOGOUT');
        await Promise.race([this.reader.next(this.replyTimeoutMs), new Promise((r) => setTimeout(r, 1000).unref())]);
      } catch {
        /* the server may close first; either way we are done */
      }
    }
    this.destroy();
  }

  destroy(): void {
    this.socket.destroy();
  }

  private write(line: string): void {
    if (this.socket.destroyed || !this.socket.writable)
      throw new NutConnectionError('the connection to upsd is closed');
    this.socket.write(`${line}\n`);
  }

  private async startTls(o: NutConnectOptions): Promise<void> {
    this.write('STARTTLS');
    const reply = await this.reader.next(this.replyTimeoutMs);
    const code = errCode(reply);
    if (code) {
      if (o.starttls === 'try' && NO_TLS.has(code)) return;
      throw new NutTlsError(`upsd does not offer STARTTLS (ERR ${code})`);
    }
    if (!reply.startsWith('OK STARTTLS'))
      throw new NutConnectionError(`unexpected reply from upsd to STARTTLS: ${reply.slice(0, 80)}`);
    this.reader.detach();
    const plain = this.socket as net.Socket;
    // Errors of the raw socket surface on the TLS socket; this keeps them from going unhandled.
    plain.on('error', () => {});
    const secure = tls.connect({
      socket: plain,
      host: o.host,
      ...(net.isIP(o.host) ? {} : { servername: o.host }),
      ...(o.tlsCa ? { ca: o.tlsCa } : {}),
      rejectUnauthorized: true,
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        secure.destroy();
        reject(new NutConnectionError(`TLS handshake with upsd timed out after ${o.connectTimeoutMs} ms`));
      }, o.connectTimeoutMs);
      secure.once('secureConnect', () => {
        clearTimeout(timer);
        resolve();
      });
      secure.once('error', (err: NodeJS.ErrnoException) => {
        clearTimeout(timer);
        secure.destroy();
        reject(
          err.code && /CERT|SELF_SIGNED|UNABLE_TO|ERR_TLS_CERT/.test(err.code)
            ? new NutTlsError(`the upsd certificate is not trusted: ${err.message}`, { cause: err })
            : new NutConnectionError(`TLS handshake with upsd failed: ${err.message}`, { cause: err }),
        );
      });
    });
    this.socket = secure;
    this.reader = new LineReader(secure);
    this.secure = true;
  }
}

/** TCP connect to the checked address with a time limit. */
function dial(o: NutConnectOptions): Promise<net.Socket> {
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: o.address, port: o.port });
    const fail = (err: Error) => {
      cleanup();
      socket.destroy();
      reject(err);
    };
    const timer = setTimeout(
      () => fail(new NutConnectionError(`connecting to ${o.host}:${o.port} timed out after ${o.connectTimeoutMs} ms`)),
      o.connectTimeoutMs,
    );
    const onError = (err: NodeJS.ErrnoException) =>
      fail(new NutConnectionError(`cannot connect to ${o.host}:${o.port}: ${err.code ?? err.message}`, { cause: err }));
    const onAbort = () => fail(new NutConnectionError('aborted'));
    const cleanup = () => {
      clearTimeout(timer);
      socket.off('error', onError);
      o.signal?.removeEventListener('abort', onAbort);
    };
    socket.once('error', onError);
    o.signal?.addEventListener('abort', onAbort, { once: true });
    socket.once('connect', () => {
      cleanup();
      socket.setNoDelay(true);
      resolve(socket);
    });
  });
}
