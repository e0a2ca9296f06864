// The official SDKs (@anthropic-ai/sdk, openai) as independent clients of loopr-mock-llm:
// a plain, a streaming and a tool-use call with each, plus retries and errors as the SDKs see
// them. Run by run_sdk_test.sh with MOCK_LLM_URL set; exits non-zero on the first mismatch.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const base = process.env.MOCK_LLM_URL;
assert.ok(base, 'MOCK_LLM_URL is not set');
const loop = (id) => ({ headers: { 'x-loopr-loop-type': 'sdk', 'x-loopr-loop-id': id } });
const passed = [];
async function check(name, fn) {
  await fn();
  passed.push(name);
  console.log(`ok   ${name}`);
}

const tools = [{
  name: 'write_file',
  description: 'Write a file',
  input_schema: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string' } }, required: ['path', 'content'] },
}];
const expectedInput = { path: 'notes.md', content: '# Notes\n\nwritten by the mock, "quoted" and ünïcödé\n', mode: 420 };
const model = 'claude-opus-5-5';

const anthropic = new Anthropic({ apiKey: 'sdk-key', baseURL: base, maxRetries: 0 });

await check('anthropic plain', async () => {
  const m = await anthropic.messages.create(
    { model, max_tokens: 256, messages: [{ role: 'user', content: 'sdk plain: say hello' }] }, loop('a-plain'));
  assert.equal(m.type, 'message');
  assert.equal(m.stop_reason, 'end_turn');
  assert.equal(m.content[0].type, 'thinking');
  assert.equal(m.content[0].thinking, 'A greeting is enough.');
  assert.ok(m.content[0].signature.length > 20);
  assert.equal(m.content.find((b) => b.type === 'text').text, 'Hello from the mock.');
  assert.equal(m.usage.input_tokens, 120);
  assert.equal(m.usage.cache_read_input_tokens, 30);
  assert.match(m.id, /^msg_/);
});

await check('anthropic streaming', async () => {
  let text = '';
  let events = 0;
  const stream = anthropic.messages.stream(
    { model, max_tokens: 256, messages: [{ role: 'user', content: 'sdk stream: count to ten' }] }, loop('a-stream'));
  stream.on('text', (t) => { text += t; });
  stream.on('streamEvent', () => { events += 1; });
  const m = await stream.finalMessage();
  assert.equal(text, 'One, two, three, four, five, six, seven, eight, nine, ten — ünïcödé done.');
  assert.equal(m.content.find((b) => b.type === 'text').text, text);
  assert.equal(m.content[0].thinking, 'Let me count slowly, in several pieces.');
  assert.ok(m.content[0].signature.length > 20);
  assert.equal(m.stop_reason, 'end_turn');
  assert.equal(m.usage.output_tokens, 40);
  assert.ok(events > 8, `only ${events} stream events`);
});

for (const streaming of [false, true]) {
  await check(`anthropic tool use round trip (${streaming ? 'streaming' : 'plain'})`, async () => {
    const first = { role: 'user', content: 'sdk tool: write `notes.md`' };
    const ask = (messages) => {
      const params = { model, max_tokens: 1024, tools, messages };
      const opts = loop(streaming ? 'a-tool-s' : 'a-tool');
      return streaming ? anthropic.messages.stream(params, opts).finalMessage() : anthropic.messages.create(params, opts);
    };
    const r1 = await ask([first]);
    assert.equal(r1.stop_reason, 'tool_use');
    const use = r1.content.find((b) => b.type === 'tool_use');
    assert.equal(use.name, 'write_file');
    assert.deepEqual(use.input, expectedInput);
    assert.match(use.id, /^toolu_/);
    // The whole assistant turn goes back as received (thinking included), then the result.
    const r2 = await ask([
      first,
      { role: 'assistant', content: r1.content },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'wrote 57 bytes' }] },
    ]);
    assert.equal(r2.stop_reason, 'end_turn');
    assert.equal(r2.content.find((b) => b.type === 'text').text, 'The file is written.');
    assert.equal(r2.usage.output_tokens, 7);
  });
}

await check('anthropic retries 429 (retry-after-ms) and 529, then succeeds', async () => {
  const retrying = new Anthropic({ apiKey: 'sdk-key', baseURL: base, maxRetries: 2 });
  const m = await retrying.messages.create(
    { model, max_tokens: 64, messages: [{ role: 'user', content: 'sdk retry' }] }, loop('a-retry'));
  assert.equal(m.content.find((b) => b.type === 'text').text, 'Third time lucky.');
  // The request log shows the SDK's own retries: 429, 529, then 200.
  const log = readFileSync(process.env.MOCK_LLM_LOG, 'utf8').trim().split('\n').map((l) => JSON.parse(l));
  const tries = log.filter((l) => l.headers['x-loopr-loop-id'] === 'a-retry');
  assert.deepEqual(tries.map((l) => l.status), [429, 529, 200]);
  assert.deepEqual(tries.map((l) => l.rule), ['retry', 'retry', 'retry']);
  // What the SDK sends: the 2026-10-21 version and Bearer auth (WIRE.md).
  assert.equal(tries[0].headers['anthropic-version'], '2026-10-21');
  assert.equal(tries[0].headers.authorization, 'Bearer [redacted]');
});

await check('anthropic errors: unmatched 400 and refused temperature, as SDK exceptions', async () => {
  await assert.rejects(
    anthropic.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'nothing matches this' }] }, loop('a-err')),
    (e) => e instanceof Anthropic.BadRequestError && e.status === 400 && /no rule matches/.test(e.message)
      && e.error?.error?.type === 'invalid_request_error' && /^req_/.test(e.requestID ?? ''));
  await assert.rejects(
    anthropic.messages.create({ model, max_tokens: 64, temperature: 0.5, messages: [{ role: 'user', content: 'sdk plain' }] }, loop('a-err')),
    (e) => e instanceof Anthropic.BadRequestError && /temperature/.test(e.message));
  const wrongKey = new Anthropic({ apiKey: '', authToken: null, baseURL: base, maxRetries: 0, defaultHeaders: { Authorization: null } });
  await assert.rejects(
    wrongKey.messages.create({ model, max_tokens: 64, messages: [{ role: 'user', content: 'sdk plain' }] }, loop('a-err')),
    (e) => e instanceof Anthropic.AuthenticationError && e.status === 401);
});

await check('anthropic refusal stop reason', async () => {
  const m = await anthropic.messages.create(
    { model, max_tokens: 64, messages: [{ role: 'user', content: 'sdk refuse' }] }, loop('a-refuse'));
  assert.equal(m.stop_reason, 'refusal');
  assert.equal(m.stop_details?.category, 'cyber');
});

const openai = new OpenAI({ apiKey: 'sdk-key', baseURL: `${base}/v1`, maxRetries: 0 });
const oaTools = [{ type: 'function', function: { name: 'write_file', parameters: tools[0].input_schema } }];

await check('openai plain', async () => {
  const c = await openai.chat.completions.create(
    { model: 'gpt-5.5', max_completion_tokens: 100, messages: [{ role: 'user', content: 'sdk plain: say hello' }] }, loop('o-plain'));
  assert.equal(c.object, 'chat.completion');
  assert.equal(c.choices[0].message.content, 'Hello from the mock.');
  assert.equal(c.choices[0].finish_reason, 'stop');
  assert.equal(c.usage.prompt_tokens, 150);
  assert.equal(c.usage.prompt_tokens_details.cached_tokens, 30);
  assert.equal(c.usage.completion_tokens, 40);
});

await check('openai streaming with include_usage', async () => {
  const stream = await openai.chat.completions.create(
    { model: 'gpt-5.5', max_completion_tokens: 100, stream: true, stream_options: { include_usage: true },
      messages: [{ role: 'user', content: 'sdk stream: count to ten' }] }, loop('o-stream'));
  let text = '';
  let chunks = 0;
  let usage = null;
  let finish = null;
  for await (const chunk of stream) {
    chunks += 1;
    if (chunk.usage) usage = chunk.usage;
    const choice = chunk.choices[0];
    if (!choice) continue;
    text += choice.delta.content ?? '';
    finish = choice.finish_reason ?? finish;
  }
  assert.equal(text, 'One, two, three, four, five, six, seven, eight, nine, ten — ünïcödé done.');
  assert.equal(finish, 'stop');
  assert.equal(usage?.completion_tokens, 40);
  assert.ok(chunks > 3);
});

for (const streaming of [false, true]) {
  await check(`openai tool call round trip (${streaming ? 'streaming' : 'plain'})`, async () => {
    const messages = [{ role: 'user', content: 'sdk tool: write `notes.md`' }];
    const ask = (msgs) => {
      const params = { model: 'gpt-5.5', max_tokens: 512, tools: oaTools, messages: msgs };
      const opts = loop(streaming ? 'o-tool-s' : 'o-tool');
      return streaming ? openai.chat.completions.stream(params, opts).finalChatCompletion()
                       : openai.chat.completions.create(params, opts);
    };
    const c1 = await ask(messages);
    assert.equal(c1.choices[0].finish_reason, 'tool_calls');
    const msg = c1.choices[0].message;
    assert.equal(msg.content, 'I will write the file.');
    const call = msg.tool_calls[0];
    assert.equal(call.function.name, 'write_file');
    assert.deepEqual(JSON.parse(call.function.arguments), expectedInput);
    const c2 = await ask([...messages, msg, { role: 'tool', tool_call_id: call.id, content: 'wrote 57 bytes' }]);
    assert.equal(c2.choices[0].message.content, 'The file is written.');
    assert.equal(c2.choices[0].finish_reason, 'stop');
  });
}

await check('openai errors as SDK exceptions', async () => {
  await assert.rejects(
    openai.chat.completions.create({ model: 'gpt-5.5', messages: [{ role: 'user', content: 'nothing matches this' }] }, loop('o-err')),
    (e) => e instanceof OpenAI.BadRequestError && e.status === 400 && /no rule matches/.test(e.message));
  await assert.rejects(
    openai.chat.completions.create({ model: 'gpt-5.5', messages: [
      { role: 'user', content: 'x' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'write_file', arguments: '{}' } }] },
      { role: 'user', content: 'no tool answer' }] }, loop('o-err')),
    (e) => e instanceof OpenAI.BadRequestError && /call_1/.test(e.message));
});

console.log(`all ${passed.length} SDK checks passed (@anthropic-ai/sdk and openai against loopr-mock-llm)`);
