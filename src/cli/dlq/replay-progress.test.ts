import { describe, expect, it } from 'vitest';
import { createReplayProgress } from './replay-progress.js';

function fakeStream(isTTY: boolean) {
  const written: string[] = [];
  const stream = { isTTY, write: (chunk: string) => (written.push(chunk), true) } as unknown as NodeJS.WriteStream;
  return { stream, written };
}

describe('createReplayProgress', () => {
  it('writes plain lines with offsets and counts when the stream is not a terminal', () => {
    const { stream, written } = fakeStream(false);
    const progress = createReplayProgress({ label: 'replay d', total: 10, stream, plainIntervalMs: 0 });
    progress.update({ scanned: 5, replayed: 3, refused: 1, skipped: 1 }, 5);
    progress.stop({ scanned: 10, replayed: 7, refused: 2, skipped: 1 }, 10);
    expect(written[0]).toMatch(/^replay d: 5\/10 offsets \(50%\), scanned 5, replayed 3, refused 1, skipped 1, ETA \S+\n$/);
    expect(written[1]).toBe('replay d: 10/10 offsets (100%), scanned 10, replayed 7, refused 2, skipped 1, ETA 0s\n');
  });

  it('ends at 100 % when transaction markers hold offsets: fewer records scanned than the total', () => {
    const { stream, written } = fakeStream(false);
    const progress = createReplayProgress({ label: 'replay d', total: 12, stream });
    progress.stop({ scanned: 8, replayed: 8, refused: 0, skipped: 0 }, 12);
    expect(written).toEqual(['replay d: 12/12 offsets (100%), scanned 8, replayed 8, refused 0, skipped 0, ETA 0s\n']);
  });

  it('does not print the last line twice when the stop finds nothing new since the last update', () => {
    const { stream, written } = fakeStream(false);
    const progress = createReplayProgress({ label: 'replay d', total: 4, stream });
    const done = { scanned: 4, replayed: 4, refused: 0, skipped: 0 };
    progress.update(done, 4);
    progress.stop(done, 4);
    expect(written).toEqual(['replay d: 4/4 offsets (100%), scanned 4, replayed 4, refused 0, skipped 0, ETA 0s\n']);
  });

  it('draws a cli-progress bar with the counts on a terminal', () => {
    const { stream, written } = fakeStream(true);
    Object.assign(stream, { cursorTo: () => true, clearLine: () => true, moveCursor: () => true, columns: 200 });
    const progress = createReplayProgress({ label: 'replay d', total: 6, stream });
    progress.stop({ scanned: 4, replayed: 4, refused: 0, skipped: 0 }, 6);
    const text = written.join('');
    expect(text).toContain('replay d |');
    expect(text).toContain('100% | 6/6 offsets | scanned 4 | replayed 4 | refused 0 | skipped 0 | ETA');
  });
});
