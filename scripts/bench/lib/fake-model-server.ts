/**
 * The fake OpenAI-compatible model for bench:streams, in its own process so that emitting chunks
 * does not share a thread with the clients measuring them. Every reply streams CHUNKS stamped
 * pieces, DELAY_MS apart. Prints its base URL on stdout; exits on SIGTERM.
 */
import { startFakeOpenAI } from '../../../test/fakes/openai.ts';

const chunks = Number(process.argv[2] ?? 50);
const delayMs = Number(process.argv[3] ?? 20);
const fake = await startFakeOpenAI();
fake.setScript(() => ({ stamp: true, chunks, delayMs, usage: { prompt_tokens: 20, completion_tokens: chunks } }));
process.stdout.write(`${fake.baseUrl}\n`);
process.on('SIGTERM', () => {
  void fake.close().then(() => process.exit(0));
});
