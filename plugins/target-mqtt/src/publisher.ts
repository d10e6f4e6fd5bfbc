/**
 * One MQTT connection per target instance, opened with the first send and kept open between
 * sends. When the broker closes it (a restart, an idle timeout), the next send connects again.
 * A publish is done when the broker acknowledged it (PUBACK, QoS 1) or, at QoS 0, once written.
 * MQTT.js is loaded with the first connection.
 */
import { randomBytes } from 'node:crypto';
import net from 'node:net';
import tls from 'node:tls';
import type { OutboundHttp, PluginLogger } from '@herald/plugin-api';
import { RetryableSendError } from '@herald/plugin-api';
import type { IClientOptions, MqttClient } from 'mqtt';
import type { MqttTargetConfig, Timings } from './config.ts';
import { brokerAddress } from './config.ts';
import { connectFailure, explain } from './errors.ts';

/** A connection that gave up waiting for the broker. */
class TimeoutError extends Error {
  readonly timedOut = true;
}

export interface PublishRequest {
  topic: string;
  payload: string;
  /** Language of the errors thrown (the target's). */
  locale: string;
  signal: AbortSignal;
}

export class Publisher {
  private client: MqttClient | undefined;
  private connecting: Promise<MqttClient> | undefined;
  private readonly broker: ReturnType<typeof brokerAddress>;
  /** Random per instance: with several replicas each keeps its own connection, none pushes another off. */
  readonly clientId = `herald-pub-${randomBytes(6).toString('hex')}`;
  private readonly cfg: MqttTargetConfig;
  private readonly http: OutboundHttp;
  private readonly log: PluginLogger;
  private readonly timings: Timings;
  private closed = false;

  constructor(o: { config: MqttTargetConfig; http: OutboundHttp; log: PluginLogger; timings: Timings }) {
    this.cfg = o.config;
    this.http = o.http;
    this.log = o.log;
    this.timings = o.timings;
    this.broker = brokerAddress(o.config.url);
  }

  get connected(): boolean {
    return this.client?.connected === true;
  }

  /** Publishes one message; throws the contract's send errors, in `locale`. */
  async publish(r: PublishRequest): Promise<void> {
    const client = await this.connection(r.locale);
    const { qos, retain } = this.cfg;
    const params = { broker: this.broker.display, topic: r.topic };
    await new Promise<void>((resolve, reject) => {
      let done = false;
      const finish = (err?: Error) => {
        if (done) return;
        done = true;
        clearTimeout(timer);
        client.removeListener('close', onClose);
        r.signal.removeEventListener('abort', onAbort);
        if (err) reject(err);
        else resolve();
      };
      const timer = setTimeout(() => {
        finish(
          new RetryableSendError(
            explain(r.locale, 'publish_timeout', {
              ...params,
              seconds: Math.round(this.timings.publishTimeoutMs / 1000),
            }),
          ),
        );
        // The connection is suspect: dropped, so the next send starts on a fresh one.
        this.drop(client);
      }, this.timings.publishTimeoutMs);
      const onClose = () =>
        finish(new RetryableSendError(explain(r.locale, 'connection_lost', { ...params, error: 'connection closed' })));
      const onAbort = () => {
        finish(new RetryableSendError(explain(r.locale, 'connection_lost', { ...params, error: 'send aborted' })));
        this.drop(client);
      };
      client.once('close', onClose);
      r.signal.addEventListener('abort', onAbort, { once: true });
      if (r.signal.aborted) {
        onAbort();
        return;
      }
      client.publish(r.topic, r.payload, { qos, retain }, (err) => {
        finish(
          err
            ? new RetryableSendError(explain(r.locale, 'connection_lost', { ...params, error: err.message }), 0, {
                cause: err,
              })
            : undefined,
        );
      });
    });
  }

  /** Sends DISCONNECT (bounded) and forgets the connection. */
  async close(): Promise<void> {
    this.closed = true;
    const client = this.client ?? (await this.connecting?.catch(() => undefined));
    this.client = undefined;
    if (!client) return;
    await new Promise<void>((resolve) => {
      const cut = setTimeout(() => {
        client.end(true);
        resolve();
      }, this.timings.closeTimeoutMs);
      cut.unref();
      client.end(false, {}, () => {
        clearTimeout(cut);
        resolve();
      });
    });
  }

  private drop(client: MqttClient): void {
    if (this.client === client) this.client = undefined;
    client.end(true);
  }

  /** The open connection, or a new one; concurrent sends share one connect. */
  private async connection(locale: string): Promise<MqttClient> {
    if (this.client?.connected) return this.client;
    if (this.closed) throw new RetryableSendError('the MQTT target was stopped');
    this.connecting ??= this.connect(locale).finally(() => {
      this.connecting = undefined;
    });
    return this.connecting;
  }

  private async connect(locale: string): Promise<MqttClient> {
    const failure = (err: unknown) =>
      connectFailure(err, {
        broker: this.broker.display,
        clientId: this.clientId,
        timeoutMs: this.timings.connectTimeoutMs,
        locale,
      });
    let address: string;
    try {
      address = (await this.http.resolveAllowed(this.broker.host)).address;
    } catch (err) {
      throw failure(err);
    }
    const { MqttClient: Client } = await import('mqtt');
    const { host, port } = this.broker;
    const options: IClientOptions = {
      clientId: this.clientId,
      clean: true,
      keepalive: this.timings.keepaliveSeconds,
      protocolVersion: 4,
      username: this.cfg.username,
      password: this.cfg.password,
      reconnectPeriod: 0,
      connectTimeout: this.timings.connectTimeoutMs,
      manualConnect: true,
      queueQoSZero: false,
    };
    // The socket goes to the address the policy checked; TLS names the configured host (SNI, certificate).
    const client: MqttClient = new Client(
      () =>
        this.broker.tls
          ? tls.connect({ host: address, port, servername: net.isIP(host) ? undefined : host })
          : net.connect({ host: address, port }),
      options,
    );
    await new Promise<void>((resolve, reject) => {
      let error: Error | undefined;
      const timer = setTimeout(() => {
        error ??= new TimeoutError('timeout');
        client.end(true);
      }, this.timings.connectTimeoutMs);
      const onError = (err: Error) => {
        error ??= err;
      };
      const onClose = () => {
        clearTimeout(timer);
        client.removeListener('error', onError);
        reject(failure(error ?? new Error('the connection closed before the broker answered')));
      };
      client.on('error', onError);
      client.once('close', onClose);
      client.once('connect', () => {
        clearTimeout(timer);
        client.removeListener('close', onClose);
        client.removeListener('error', onError);
        resolve();
      });
      client.connect();
    });
    // Errors after the connect are reported through the send that meets them.
    client.on('error', (err: Error) => {
      this.log.debug({ broker: this.broker.display, error: err.message }, 'MQTT connection error');
    });
    client.once('close', () => {
      if (this.client === client) this.client = undefined;
      if (!this.closed)
        this.log.info(
          { broker: this.broker.display },
          'the MQTT broker closed the connection; the next send reconnects',
        );
    });
    this.log.info({ broker: this.broker.display, clientId: this.clientId }, 'connected to the MQTT broker');
    if (this.closed) {
      client.end(true);
      throw new RetryableSendError('the MQTT target was stopped');
    }
    this.client = client;
    return client;
  }
}
