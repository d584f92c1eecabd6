/**
 * OpenTelemetry through retries and the DLQ, on the real broker: a worker (in this process, so
 * an in-memory span exporter sees its spans) with retry topics. A record that fails twice and
 * then succeeds in a retry tier yields three attempt spans in one trace — the trace its
 * producer started — each the child of the one before; its sink record carries the last
 * attempt's `traceparent`; a record that ends in the DLQ carries its own trace's `traceparent`.
 */
import { randomUUID } from 'node:crypto';
import { context, propagation, trace, type SpanContext } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { sink, topology } from 'weir';
import { produce, readTopics } from '../../scripts/lib/topic-io.js';
import { waitFor } from '../../scripts/lib/wait-for.js';
import { compile } from '../../src/topology/compile.js';
import { loadWorkerConfig } from '../../src/config/worker-config.js';
import { Worker } from '../../src/worker/worker.js';
import { useIntegrationFixture } from './support/integration-fixture.js';
import { CLIENT, onClient } from './support/client-under-test.js';

const fx = useIntegrationFixture('weir-it-tracing');

const exporter = new InMemorySpanExporter();
const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
trace.setGlobalTracerProvider(provider);
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
afterAll(async () => {
  await provider.shutdown();
  trace.disable();
  propagation.disable();
});

/** The trace id and parent span id a `traceparent` header names. */
function parseTraceparent(header: string | undefined): { traceId: string; spanId: string } {
  const match = /^00-([0-9a-f]{32})-([0-9a-f]{16})-0[01]$/.exec(header ?? '');
  if (match === null) throw new Error(`not a W3C traceparent: ${header}`);
  return { traceId: match[1]!, spanId: match[2]! };
}

const attr = (span: ReadableSpan, name: string) => span.attributes[name];

describe(onClient('OpenTelemetry attempt spans'), () => {
  it('follows a record through two retry tiers in one trace, and a dead letter carries its trace context', async () => {
    const id = `weir-it-tracing-${randomUUID().slice(0, 8)}`;
    const [source, out, dlq] = [`${id}.in`, `${id}.out`, `${id}.dlq`];
    const tiers = [0, 1].map((n) => `${id}.work.retry.${n}`);
    await fx.createTopics([{ topic: source, partitions: 1 }]);
    const compiled = compile(
      topology({ applicationId: id })
        .source(source, { key: 'string', value: 'json' })
        .process(
          'work',
          async (record, ctx) => {
            const { id: rid } = record.value as { id: string };
            if (rid === 'doomed' || ctx.attempt <= 2) throw new Error(`${rid} fails attempt ${ctx.attempt}`);
            return { id: rid, attempt: ctx.attempt };
          },
          { retry: { maxAttempts: 3, mode: 'topics', backoff: { initialMs: 10, multiplier: 2, maxMs: 100, jitter: 'none' } } },
        )
        .branch({ success: sink(out), dlq: sink(dlq) }),
    );
    const worker = new Worker({
      topology: compiled,
      config: loadWorkerConfig({ brokers: fx.brokers, sessionTimeoutMs: '6000', commitIntervalMs: '100', client: CLIENT }, {}),
      logger: pino({ level: 'silent' }),
    });
    fx.onTeardown(() => worker.stop());
    await worker.start();

    // The upstream service's span: its context goes into the record's headers.
    const upstream = provider.getTracer('upstream').startSpan('publish orders');
    const headers: Record<string, string> = {};
    propagation.inject(trace.setSpan(context.active(), upstream), headers);
    upstream.end();
    const upstreamContext: SpanContext = upstream.spanContext();
    await produce(fx.kafka, source, [
      { key: 'a', value: JSON.stringify({ id: 'lucky' }), headers },
      { key: 'b', value: JSON.stringify({ id: 'doomed' }) },
    ]);

    const { records, complete } = await readTopics(fx.kafka, [out, dlq], { until: (rs) => rs.length >= 2, timeoutMs: 60_000 });
    expect(complete).toBe(true);
    const spans = await waitFor(
      () => {
        const s = exporter.getFinishedSpans().filter((span) => attr(span, 'messaging.consumer.group.name') === id);
        return s.length >= 6 ? s : undefined;
      },
      10_000,
      () => `attempt spans so far: ${exporter.getFinishedSpans().length}`,
    );
    expect(spans).toHaveLength(6);

    // The record that succeeds on its third attempt: three spans, one trace (the upstream one), a chain.
    const lucky = spans
      .filter((s) => s.spanContext().traceId === upstreamContext.traceId)
      .sort((a, b) => Number(attr(a, 'weir.attempt')) - Number(attr(b, 'weir.attempt')));
    expect(lucky.map((s) => attr(s, 'weir.attempt'))).toEqual([1, 2, 3]);
    expect(lucky.map((s) => attr(s, 'messaging.destination.name'))).toEqual([source, ...tiers]);
    expect(lucky.map((s) => attr(s, 'weir.outcome'))).toEqual(['retry-topic', 'retry-topic', 'success']);
    expect(lucky.map((s) => s.name)).toEqual([source, ...tiers].map((t) => `process ${t}`));
    expect(lucky.map((s) => s.parentSpanContext?.spanId)).toEqual([
      upstreamContext.spanId,
      lucky[0]!.spanContext().spanId,
      lucky[1]!.spanContext().spanId,
    ]);
    for (const s of lucky) {
      expect(s.attributes).toMatchObject({
        'messaging.system': 'kafka',
        'messaging.operation.type': 'process',
        'messaging.destination.partition.id': '0',
        'messaging.consumer.group.name': id,
        'weir.processor': 'work',
      });
      expect(typeof attr(s, 'messaging.kafka.offset')).toBe('number');
    }
    const sinkRecord = records.find((r) => r.topic === out)!;
    expect(parseTraceparent(sinkRecord.headers['traceparent'])).toEqual({
      traceId: upstreamContext.traceId,
      spanId: lucky[2]!.spanContext().spanId,
    });

    // The record that ends in the DLQ: its own trace (it came without one), three attempts, and the dead letter carries it on.
    const doomed = spans.filter((s) => s.spanContext().traceId !== upstreamContext.traceId);
    expect(new Set(doomed.map((s) => s.spanContext().traceId)).size).toBe(1);
    expect(doomed.map((s) => attr(s, 'weir.outcome')).sort()).toEqual(['dead-letter', 'retry-topic', 'retry-topic']);
    const last = doomed.find((s) => attr(s, 'weir.outcome') === 'dead-letter')!;
    expect(last.attributes).toMatchObject({ 'weir.attempt': 3, 'error.type': 'Error' });
    const deadLetter = records.find((r) => r.topic === dlq)!;
    expect(deadLetter.headers['weir.attempts']).toBe('3');
    expect(parseTraceparent(deadLetter.headers['traceparent'])).toEqual({
      traceId: last.spanContext().traceId,
      spanId: last.spanContext().spanId,
    });

    await worker.stop();
  });
});
