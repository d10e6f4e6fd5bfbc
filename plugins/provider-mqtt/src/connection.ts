/**
 * One MQTT session with the broker through MQTT.js: CONNECT → CONNACK, the subscriptions the
 * caller asks for once it knows whether the broker kept the session, then PUBLISH packets handed to
 * `onMessage` one at a time, in order. A QoS 1 message is acknowledged (PUBACK) only once
 * `onMessage` resolved, that is once Herald recorded it; when it rejects, the session ends without
 * the PUBACK and the broker sends the message again on the next connection. Reconnecting is the
 * supervisor's job: MQTT.js's own reconnect is off. MQTT.js is loaded with the first connection,
 * so a service without an MQTT provider configured never carries it.
 */
import net from 'node:net';
import tls from 'node:tls';
import type { PluginLogger } from '@herald/plugin-api';
import type { IClientOptions, IPublishPacket, MqttClient } from 'mqtt';

export interface InboundMessage {
  topic: string;
  payload: Buffer;
  qos: number;
  retain: boolean;
  dup: boolean;
}

export interface Subscription {
  topic: string;
  qos: 0 | 1;
}

/** What to change at the broker once CONNACK said whether it kept the session. */
export interface SubscriptionPlan {
  subscribe: Subscription[];
  unsubscribe: string[];
}

export interface SessionOptions {
  tls: boolean;
  /** The broker's name as configured: TLS server name and certificate check. */
  host: string;
  port: number;
  /** The address `resolveAllowed` checked; the socket goes there. */
  address: string;
  clientId: string;
  username?: string;
  password?: string;
  clean: boolean;
  keepaliveSeconds: number;
  /** Limit for the connection, CONNACK and the subscription changes together. */
  connectTimeoutMs: number;
  plan(sessionPresent: boolean): SubscriptionPlan;
  /** Records one message; the PUBACK waits for it. A rejection ends the session without the PUBACK. */
  onMessage(message: InboundMessage): Promise<void>;
  log: PluginLogger;
  /** Aborting before the session is up ends the attempt at once. */
  signal: AbortSignal;
}

export interface Session {
  sessionPresent: boolean;
  /** Topic filters the broker refused (SUBACK 0x80), e.g. for want of read rights. */
  refused: string[];
  /** Resolves with a readable reason once the connection has ended, however it ended. */
  readonly closed: Promise<string>;
  /** Waits (bounded) for the message being recorded, sends DISCONNECT, cuts the socket if need be. */
  close(timeoutMs: number): Promise<void>;
}

/** A connection that gave up waiting: the broker never answered. */
export class ConnectTimeoutError extends Error {
  readonly timedOut = true;
  constructor(ms: number) {
    super(`no answer from the broker within ${ms} ms`);
    this.name = 'ConnectTimeoutError';
  }
}

/** The socket to the checked address; TLS names the configured host (SNI and certificate check). */
function stream(o: SessionOptions): net.Socket {
  if (!o.tls) return net.connect({ host: o.address, port: o.port });
  return tls.connect({ host: o.address, port: o.port, servername: net.isIP(o.host) ? undefined : o.host });
}

/**
 * Connects, subscribes as `plan` says, and resolves once the broker granted (or refused) the
 * subscriptions. Rejects with MQTT.js's error for a refused CONNECT (its `code` is the CONNACK
 * code), the socket's error, or ConnectTimeoutError.
 */
export async function openSession(o: SessionOptions): Promise<Session> {
  const { MqttClient: Client } = await import('mqtt');
  if (o.signal.aborted) throw new Error('stopped');
  const options: IClientOptions = {
    clientId: o.clientId,
    clean: o.clean,
    keepalive: o.keepaliveSeconds,
    protocolVersion: 4,
    username: o.username,
    password: o.password,
    reconnectPeriod: 0,
    connectTimeout: o.connectTimeoutMs,
    resubscribe: false,
    manualConnect: true,
    queueQoSZero: false,
  };
  const client: MqttClient = new Client(() => stream(o), options);
  return new Promise<Session>((resolve, reject) => {
    let settled = false;
    let ended = false;
    let failure: Error | undefined;
    let inflight: Promise<void> | undefined;
    let resolveClosed!: (reason: string) => void;
    const closed = new Promise<string>((r) => {
      resolveClosed = r;
    });
    const timer = setTimeout(() => fail(new ConnectTimeoutError(o.connectTimeoutMs)), o.connectTimeoutMs);
    // Once the session is up, the owner ends it with close(); the abort covers the handshake.
    const onAbort = () => {
      if (!settled) fail(new Error('stopped'));
    };
    o.signal.addEventListener('abort', onAbort, { once: true });

    /** Ends the connection for a reason of ours; the close event settles the rest. */
    function fail(err: Error): void {
      failure ??= err;
      ended = true;
      client.end(true);
    }

    // MQTT.js calls this for every PUBLISH and sends the PUBACK (QoS 1) when `callback` runs; the
    // next packet is read only after that, so messages are handled one at a time, in order.
    client.handleMessage = (packet: IPublishPacket, callback: () => void) => {
      if (ended) return;
      const message: InboundMessage = {
        topic: packet.topic,
        payload: Buffer.isBuffer(packet.payload) ? packet.payload : Buffer.from(packet.payload),
        qos: packet.qos,
        retain: packet.retain,
        dup: packet.dup,
      };
      inflight = o.onMessage(message).then(
        () => {
          if (!ended) callback();
        },
        (err: unknown) => {
          fail(
            new Error(
              `could not record a message of ${message.topic}: ${err instanceof Error ? err.message : String(err)}`,
            ),
          );
        },
      );
    };

    const session: Session = {
      sessionPresent: false,
      refused: [],
      closed,
      async close(timeoutMs) {
        if (ended) {
          await closed;
          return;
        }
        const bound = (p: Promise<unknown> | undefined) =>
          Promise.race([p, new Promise((r) => setTimeout(r, timeoutMs).unref())]);
        await bound(inflight);
        if (!ended) {
          failure ??= new Error('closed by Herald');
          ended = true;
          client.end(false);
          const cut = setTimeout(() => client.end(true), timeoutMs);
          cut.unref();
          await closed;
          clearTimeout(cut);
        }
        await closed;
      },
    };

    client.on('error', (err: Error) => {
      failure ??= err;
    });

    client.on('close', () => {
      clearTimeout(timer);
      o.signal.removeEventListener('abort', onAbort);
      ended = true;
      const reason = failure?.message ?? 'connection closed by the broker';
      if (!settled) {
        settled = true;
        reject(failure ?? new Error('the connection closed before the broker answered'));
      }
      resolveClosed(reason);
    });

    client.once('connect', (connack) => {
      session.sessionPresent = connack.sessionPresent;
      const plan = o.plan(connack.sessionPresent);
      void (async () => {
        try {
          if (plan.unsubscribe.length) await client.unsubscribeAsync(plan.unsubscribe);
          if (plan.subscribe.length) {
            const granted = await client.subscribeAsync(
              Object.fromEntries(plan.subscribe.map((s) => [s.topic, { qos: s.qos }])),
            );
            session.refused = granted.filter((g) => g.qos === 128).map((g) => g.topic);
          }
        } catch (err) {
          fail(err instanceof Error ? err : new Error(String(err)));
          return;
        }
        if (settled || ended) return;
        settled = true;
        clearTimeout(timer);
        o.signal.removeEventListener('abort', onAbort);
        resolve(session);
      })();
    });

    client.connect();
  });
}
