/**
 * Fault injection at the Kafka wire, for tests against the real broker: a kafkajs
 * `socketFactory` whose sockets can drop one request of a given API key before it is sent, or
 * cut the connection right after it was sent, before the reply is read (the broker did it, the
 * client never learns). kafkajs writes each request as one buffer: int32 size, int16 API key, ...
 */
import net from 'node:net';
import type { ISocketFactory } from 'kafkajs';

/** Kafka API keys the tests use. */
export const KAFKA_API = Object.freeze({
  Produce: 0,
  InitProducerId: 22,
  AddPartitionsToTxn: 24,
  AddOffsetsToTxn: 25,
  EndTxn: 26,
  TxnOffsetCommit: 28,
});

/** One armed fault: the next request with `apiKey` is dropped (`'request'`) or its reply is lost (`'response'`). */
export interface WireFault {
  readonly apiKey: number;
  readonly lose: 'request' | 'response';
}

/** A socket factory with armable faults. */
export class FaultySockets {
  private readonly armed: WireFault[] = [];
  /** Faults that fired, in order. */
  readonly fired: WireFault[] = [];

  /** Arms a fault for the next matching request (of any connection of the client). */
  arm(fault: WireFault): void {
    this.armed.push(fault);
  }

  /** Faults armed but not fired yet. */
  get pending(): number {
    return this.armed.length;
  }

  readonly factory: ISocketFactory = ({ host, port, onConnect }) => {
    const socket = net.connect({ host, port }, onConnect);
    socket.setKeepAlive(true, 60_000);
    let cutOnReply = false;
    const write = socket.write.bind(socket) as (...args: unknown[]) => boolean;
    socket.write = ((chunk: unknown, ...rest: unknown[]): boolean => {
      if (Buffer.isBuffer(chunk) && chunk.length >= 6) {
        const apiKey = chunk.readInt16BE(4);
        const i = this.armed.findIndex((f) => f.apiKey === apiKey);
        if (i >= 0) {
          const [fault] = this.armed.splice(i, 1);
          this.fired.push(fault!);
          if (fault!.lose === 'request') {
            setImmediate(() => socket.destroy(new Error(`injected fault: request (API key ${apiKey}) lost`)));
            return true;
          }
          cutOnReply = true;
        }
      }
      return write(chunk, ...rest);
    }) as typeof socket.write;
    const emit = socket.emit.bind(socket) as (event: string | symbol, ...args: unknown[]) => boolean;
    socket.emit = ((event: string | symbol, ...args: unknown[]): boolean => {
      if (event === 'data' && cutOnReply) {
        cutOnReply = false;
        socket.destroy(new Error('injected fault: reply lost'));
        return true;
      }
      return emit(event, ...args);
    }) as typeof socket.emit;
    return socket;
  };
}
