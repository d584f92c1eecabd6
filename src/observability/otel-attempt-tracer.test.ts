import { describe, expect, it } from 'vitest';
import { withTraceHeaders } from '../runtime/attempt-tracer.js';
import { OtelAttemptTracer } from './otel-attempt-tracer.js';

describe('OtelAttemptTracer without an OpenTelemetry SDK', () => {
  it('is inactive, so tasks make no span', () => {
    expect(new OtelAttemptTracer().isActive()).toBe(false);
  });

  it('is a no-op when a span is made anyway: no span context to carry on, outputs unchanged, the attempt still runs', async () => {
    const span = new OtelAttemptTracer().start({
      applicationId: 'app',
      processor: 'p',
      topic: 'in',
      partition: 0,
      offset: 7,
      attempt: 1,
      maxAttempts: 3,
      key: null,
      headers: { traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01' },
    });
    expect(await span.run(async () => 42)).toBe(42);
    expect(span.headers()).toEqual({});
    const outcome = { kind: 'success' as const, outputs: [{ topic: 'out', key: null, value: null, headers: { a: '1' } }] };
    expect(withTraceHeaders(outcome, span.headers())).toBe(outcome);
    span.end({ outcome: 'success' });
  });
});
