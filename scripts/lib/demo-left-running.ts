/**
 * What `npm run demo` says at its end about what it left running (the broker and Redis stay up
 * for the next run), and how to stop it: only what the demo itself started.
 *
 * @param brokers the broker's address, `host:port`
 * @returns the line to print, or undefined when the demo started nothing
 */
export function demoLeftRunning(started: { readonly kafka: boolean; readonly redis: boolean }, brokers: string): string | undefined {
  if (started.kafka)
    return (
      `the Kafka broker it started keeps running on ${brokers} for the next run; stop it with \`npm run kafka:stop\`` +
      (started.redis ? ' (add `-- --redis` to stop the Redis the demo started too)' : '')
    );
  if (started.redis) return 'the Redis it started keeps running; stop it with `npm run kafka:stop -- --redis`';
  return undefined;
}
