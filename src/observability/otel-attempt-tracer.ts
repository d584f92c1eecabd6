import { createRequire } from 'node:module';
import {
  ProxyTracerProvider,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  context,
  propagation,
  trace,
  type TextMapGetter,
  type Tracer,
} from '@opentelemetry/api';
import type { RecordHeaders } from '../record/record-types.js';
import type { AttemptSpan, AttemptSpanInfo, AttemptTracer } from '../runtime/attempt-tracer.js';

const { version } = createRequire(import.meta.url)('../../package.json') as { version: string };

/** The tracer provider `@opentelemetry/api` delegates to while no SDK registered one. */
const NOOP_TRACER_PROVIDER = new ProxyTracerProvider().getDelegate();

/** Reads propagation fields (`traceparent`, `tracestate`, …) from Kafka headers: the first value, as UTF-8. */
const headerGetter: TextMapGetter<RecordHeaders> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => {
    const value = carrier[key];
    const first = Array.isArray(value) ? value[0] : value;
    return first === undefined ? undefined : first.toString();
  },
};

/**
 * Attempt spans through `@opentelemetry/api` only: a no-op unless the application registers an
 * OpenTelemetry SDK (a tracer provider and a propagator, as `@opentelemetry/sdk-node` does).
 *
 * Each attempt is a `CONSUMER` span named `process <topic>` with the messaging semantic
 * conventions (`messaging.system` kafka, `messaging.operation.type` process,
 * `messaging.destination.name`, `messaging.destination.partition.id`, `messaging.kafka.offset`,
 * `messaging.consumer.group.name` = application.id, `messaging.kafka.message.key`) plus
 * `weir.processor`, `weir.attempt`, `weir.max_attempts` and `weir.outcome`. Its parent is the
 * context the global propagator extracts from the input record's headers (W3C `traceparent` by
 * default); the span's own context is injected into the attempt's outputs — sink, retry-tier and
 * dead-letter records — so the next attempt in a retry tier continues the same trace, and a dead
 * letter links back to it. Spring Kafka's and the OpenTelemetry Kafka instrumentations' model.
 *
 * With the global tracer and no SDK registered — no tracer provider and no propagator — it is
 * inactive ({@link isActive}), and tasks make no span at all.
 */
export class OtelAttemptTracer implements AttemptTracer {
  private readonly tracer: Tracer;
  private readonly global: boolean;

  /** @param tracer a tracer of your own; default the global tracer provider's `weir` tracer */
  constructor(tracer?: Tracer) {
    this.tracer = tracer ?? trace.getTracer('weir', version);
    this.global = tracer === undefined;
  }

  /** False while the global tracer provider is the no-op one and no propagator is registered (checked at each call: an SDK may register later). */
  isActive(): boolean {
    if (!this.global) return true;
    const provider = trace.getTracerProvider();
    const noTracer = provider instanceof ProxyTracerProvider && provider.getDelegate() === NOOP_TRACER_PROVIDER;
    return !noTracer || propagation.fields().length > 0;
  }

  start(info: AttemptSpanInfo): AttemptSpan {
    const parent = propagation.extract(ROOT_CONTEXT, info.headers, headerGetter);
    const span = this.tracer.startSpan(
      `process ${info.topic}`,
      {
        kind: SpanKind.CONSUMER,
        attributes: {
          'messaging.system': 'kafka',
          'messaging.operation.type': 'process',
          'messaging.operation.name': 'process',
          'messaging.destination.name': info.topic,
          'messaging.destination.partition.id': String(info.partition),
          'messaging.kafka.offset': info.offset,
          'messaging.consumer.group.name': info.applicationId,
          ...(info.key !== null ? { 'messaging.kafka.message.key': info.key.toString() } : {}),
          'weir.processor': info.processor,
          'weir.attempt': info.attempt,
          'weir.max_attempts': info.maxAttempts,
        },
      },
      parent,
    );
    const active = trace.setSpan(parent, span);
    return {
      run: (fn) => context.with(active, fn),
      headers: () => {
        const carrier: Record<string, string> = {};
        propagation.inject(active, carrier);
        return carrier;
      },
      end: (result) => {
        span.setAttribute('weir.outcome', result.outcome);
        if (result.errorClass !== undefined) {
          span.setAttribute('error.type', result.errorClass);
          if (result.error instanceof Error) span.recordException(result.error);
          span.setStatus({ code: SpanStatusCode.ERROR, message: result.errorClass });
        }
        span.end();
      },
    };
  }
}
