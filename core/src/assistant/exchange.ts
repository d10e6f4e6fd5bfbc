import type { ChatCompletionMessageParam, ChatCompletionMessageToolCall } from 'openai/resources/chat/completions';
import type { HttpError } from '../http/problem.ts';
import { messageTokens } from './assemble.ts';
import type { MessageStatus, Usage } from './messages.ts';
import { ModelClient } from './model.ts';
import type { ModelStream } from './model-stream.ts';
import { estimateTokens } from './paths.ts';
import type { Tools } from './tools.ts';

/** Where the reply goes while it is produced (the SSE stream). */
export interface ExchangeSink {
  delta(text: string): void;
  tool(event: ToolEvent): void;
}

/**
 * A tool call as the client sees it (the SSE `tool` event) and as the reply stores it (the
 * message's `tools`): what was called with which arguments, how it went, and for the searches
 * the query and the number of results.
 */
export interface ToolEvent {
  name: string;
  status: 'started' | 'needs_confirmation' | 'done' | 'failed';
  report_id?: string;
  arguments?: Record<string, unknown>;
  query?: string;
  count?: number;
  /**
   * A call that needed the user's consent: its id (for `POST …/tool-calls/{id}`); while it waits,
   * the proposal as it would be carried out (targets resolved) and when it expires; once decided,
   * `confirmation` says how (`approved`, `refused`, `expired`).
   */
  id?: string;
  proposal?: Record<string, unknown>;
  expires_at?: string;
  confirmation?: 'approved' | 'refused' | 'expired';
  /** What the model read back (stored with the reply, not sent to the client). */
  result?: unknown;
}

export interface ExchangeResult {
  content: string;
  status: MessageStatus;
  usage: Usage;
  /** True when any part of `usage` is an estimate (the model did not report it before the stream ended). */
  estimated: boolean;
  error?: HttpError;
  /** Reports the tools generated during the reply, stored as the message's attachments. */
  reports: { id: string; title: string }[];
}

/** Tool rounds per reply unless AI_MAX_TOOL_ROUNDS says otherwise; after them the model is offered no tools. */
export const DEFAULT_TOOL_ROUNDS = 4;

/** A call's arguments as an object, bounded (they are stored with the reply). */
function parsedArgs(raw: string): Record<string, unknown> {
  try {
    const v = JSON.parse(raw);
    if (v && typeof v === 'object' && !Array.isArray(v) && raw.length <= 2000) return v as Record<string, unknown>;
  } catch {
    /* not JSON */
  }
  return {};
}

/**
 * A reply's text as it streams, kept as UTF-8 bytes in one growing buffer off the JavaScript heap. Each delta's string
 * is then garbage as soon as it is relayed, and dies young. Kept as strings (pieces, or a rope built with `+=`), every
 * delta would live as long as the reply: it would be promoted to the old generation, and with many replies streaming
 * those pieces fill it until a full collection, whose marking and pause hold up every stream.
 *
 * A delta ending in the first half of a surrogate pair keeps that half back until the next delta, so a pair cut
 * across two deltas is joined as string concatenation joins it.
 */
export class ReplyText {
  private bytes?: Buffer;
  private length = 0;
  /** A high surrogate that ended the last delta. */
  private pending = '';
  /** The text, once read. */
  private text?: string;

  add(delta: string): void {
    let s = this.pending ? this.pending + delta : delta;
    this.pending = '';
    const last = s.charCodeAt(s.length - 1);
    if (last >= 0xd800 && last <= 0xdbff) {
      this.pending = s.slice(-1);
      s = s.slice(0, -1);
    }
    if (!s) return;
    this.text = undefined;
    // A UTF-16 code unit takes at most 3 bytes in UTF-8 (a pair, two units, takes 4).
    const need = this.length + 3 * s.length;
    if (!this.bytes || need > this.bytes.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(need, 2 * (this.bytes?.length ?? 512)));
      if (this.bytes) this.bytes.copy(grown, 0, 0, this.length);
      this.bytes = grown;
    }
    this.length += this.bytes.write(s, this.length);
  }

  toString(): string {
    this.text ??= (this.bytes ? this.bytes.toString('utf8', 0, this.length) : '') + this.pending;
    return this.text;
  }
}

/** One model call's answer. */
class Round {
  usage: Usage | null = null;
  calls = new Map<number, { id: string; name: string; args: string }>();
  private text = new ReplyText();

  add(text: string): void {
    this.text.add(text);
  }

  get content(): string {
    return this.text.toString();
  }
}

/**
 * Reads one round's stream into `round`, passing text to the sink as it arrives (a callback per chunk, no async
 * iteration).
 */
function consume(stream: ModelStream, round: Round, sink: ExchangeSink): Promise<void> {
  return stream.each((chunk) => {
    if (chunk.usage)
      round.usage = {
        prompt_tokens: chunk.usage.prompt_tokens ?? 0,
        completion_tokens: chunk.usage.completion_tokens ?? 0,
        total_tokens: chunk.usage.total_tokens ?? 0,
      };
    const delta = chunk.choices?.[0]?.delta;
    if (!delta) return;
    if (delta.content) {
      round.add(delta.content);
      sink.delta(delta.content);
    }
    if (!delta.tool_calls) return;
    // Tool calls arrive in pieces keyed by index: the id and name first, the arguments in fragments.
    for (const tc of delta.tool_calls) {
      const call = round.calls.get(tc.index) ?? { id: '', name: '', args: '' };
      if (tc.id) call.id = tc.id;
      if (tc.function?.name) call.name += tc.function.name;
      if (tc.function?.arguments) call.args += tc.function.arguments;
      round.calls.set(tc.index, call);
    }
  });
}

/**
 * Runs one reply: streams the first (already opened) completion, and when the model asks for a
 * tool, runs it, reports it on the sink, and continues the conversation with the tool's result.
 * Never throws: an abort becomes `interrupted`, any other failure `error`, each with the text and
 * the tokens spent so far (reported usage where the model sent it, an estimate otherwise).
 */
export async function runExchange(opts: {
  model: ModelClient;
  first: ModelStream;
  messages: ChatCompletionMessageParam[];
  tools: Tools;
  signal: AbortSignal;
  sink: ExchangeSink;
  /** Tool rounds allowed in this reply (DEFAULT_TOOL_ROUNDS when absent). */
  maxToolRounds?: number;
  /** The model the chat uses (the configured default when absent). */
  modelName?: string;
}): Promise<ExchangeResult> {
  const { model, tools, signal, sink } = opts;
  const maxRounds = opts.maxToolRounds ?? DEFAULT_TOOL_ROUNDS;
  const messages = [...opts.messages];
  const total: Usage = { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 };
  let estimated = false;
  let content = '';
  const links: { id: string; title: string }[] = [];
  let stream: ModelStream | undefined = opts.first;

  const account = (round: Round, sent: ChatCompletionMessageParam[]) => {
    let u = round.usage;
    if (!u) {
      estimated = true;
      const prompt = sent.reduce((n, m) => n + messageTokens(m), 0);
      const completion = estimateTokens(round.content + [...round.calls.values()].map((c) => c.name + c.args).join(''));
      u = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    }
    total.prompt_tokens += u.prompt_tokens;
    total.completion_tokens += u.completion_tokens;
    total.total_tokens += u.total_tokens;
  };

  for (let rounds = 0; ; rounds++) {
    const round = new Round();
    const sent = [...messages];
    try {
      // The last round allowed is offered no tools, so the model has to answer in words.
      stream ??= await model.open(messages, rounds < maxRounds ? tools.definitions : [], signal, opts.modelName);
      await consume(stream, round, sink);
      if (signal.aborted) throw new DOMException('The client went away.', 'AbortError');
    } catch (err) {
      content += round.content;
      account(round, sent);
      if (ModelClient.isAbort(err, signal))
        return { content, status: 'interrupted', usage: total, estimated, reports: links };
      return { content, status: 'error', usage: total, estimated, error: model.failure(err), reports: links };
    }
    stream = undefined;
    content += round.content;
    account(round, sent);
    if (round.calls.size === 0 || rounds >= maxRounds) break;

    const calls: ChatCompletionMessageToolCall[] = [...round.calls.entries()]
      .sort((a, b) => a[0] - b[0])
      .map(([i, c]) => ({ id: c.id || `call_${i}`, type: 'function', function: { name: c.name, arguments: c.args } }));
    messages.push({ role: 'assistant', content: round.content || null, tool_calls: calls });
    for (const call of calls) {
      if (call.type !== 'function') continue;
      const args = parsedArgs(call.function.arguments);
      sink.tool({ name: call.function.name, status: 'started', arguments: args });
      let outcome = await tools.run(call.function.name, call.function.arguments);
      let consent: Pick<ToolEvent, 'id' | 'confirmation' | 'proposal'> = {};
      if (outcome.confirm) {
        // Nothing is done until the user answers: the client shows the proposal, the reply waits.
        const c = outcome.confirm;
        sink.tool({
          name: call.function.name,
          status: 'needs_confirmation',
          arguments: args,
          id: c.id,
          proposal: c.proposal,
          expires_at: c.expires_at,
        });
        const decided = await c.decision(signal);
        outcome = { ok: decided.ok, result: decided.result };
        // The proposal stays with the decided call, so the reply shows what was sent (or not) after a reload.
        consent = { id: c.id, confirmation: decided.confirmation, proposal: c.proposal };
      }
      if (outcome.ok) {
        if (outcome.report) links.push(outcome.report);
        sink.tool({
          name: call.function.name,
          status: 'done',
          arguments: args,
          ...outcome.summary,
          ...consent,
          result: outcome.result,
          ...(outcome.report ? { report_id: outcome.report.id } : {}),
        });
      } else {
        sink.tool({
          name: call.function.name,
          status: 'failed',
          arguments: args,
          ...outcome.summary,
          ...consent,
          result: outcome.result,
        });
      }
      messages.push({ role: 'tool', tool_call_id: call.id, content: JSON.stringify(outcome.result) });
    }
    if (signal.aborted) return { content, status: 'interrupted', usage: total, estimated, reports: links };
  }

  // Every report made for the answer is its attachment (a download card in the client, which lasts
  // through reloads and goes with the report); the text need not link it.
  return { content, status: 'complete', usage: total, estimated, reports: links };
}
