/** Unique names for what a test creates on the shared broker (topics, consumer groups). */
import { randomUUID } from 'node:crypto';

/** `name` with a random suffix: a topic or group of the test's own, e.g. `empty.dlq-1a2b3c4d`. */
export const unique = (name: string): string => `${name}-${randomUUID().slice(0, 8)}`;
