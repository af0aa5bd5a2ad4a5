// Slow clients on raw sockets, for the slow-client tests (test/faults/slow-clients.test.ts) and
// the bench's throughput-under-attack row: each socket writes the start of a request, then a
// little more at intervals, and stays open until the server closes it.
import { connect as tcpConnect, type Socket } from 'node:net';

export type Outcome = { closedByServer: boolean; lifetimeMs: number; response: string };

/**
 * Opens a socket, writes `start`, then `drip()` every `everyMs` until the server closes it (or
 * `giveUpMs` passes, then it is closed here and counted as not closed by the server).
 */
export function slowClient(port: number, start: string, drip: (() => string) | null, everyMs = 500, giveUpMs = 15_000): { done: Promise<Outcome>; socket: Socket } {
  const socket = tcpConnect({ host: '127.0.0.1', port });
  const opened = performance.now();
  let response = '';
  let timer: NodeJS.Timeout | undefined;
  const done = new Promise<Outcome>((resolve) => {
    const giveUp = setTimeout(() => {
      socket.destroy();
      resolve({ closedByServer: false, lifetimeMs: performance.now() - opened, response });
    }, giveUpMs);
    socket.on('connect', () => {
      if (start !== '') socket.write(start);
      if (drip !== null) timer = setInterval(() => socket.writable && socket.write(drip()), everyMs);
    });
    socket.on('data', (chunk: Buffer) => (response += chunk.toString('latin1')));
    socket.on('error', () => undefined);
    socket.on('close', () => {
      clearInterval(timer);
      clearTimeout(giveUp);
      resolve({ closedByServer: true, lifetimeMs: performance.now() - opened, response });
    });
  });
  return { done, socket };
}

/** The start of a GET /api/user whose headers never end (slowloris). */
export const SLOWLORIS_START = 'GET /api/user HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n';
let dripCounter = 0;
/** One more header line. */
export const slowHeader = (): string => `X-Slow-${++dripCounter}: x\r\n`;

/**
 * Keeps `sockets` slowloris sockets open against the port while `during` runs, each reopened as
 * soon as the server closes it; afterwards waits for every one to be closed and returns the
 * outcome of each socket opened.
 */
export async function underSlowloris<T>(port: number, sockets: number, giveUpMs: number, during: () => Promise<T>): Promise<{ result: T; outcomes: Outcome[] }> {
  const outcomes: Outcome[] = [];
  let attacking = true;
  const open = new Set<Promise<void>>();
  const keepOne = (): void => {
    const { done } = slowClient(port, SLOWLORIS_START, slowHeader, 700, giveUpMs);
    const running = done.then((outcome) => {
      outcomes.push(outcome);
      open.delete(running);
      if (attacking) keepOne();
    });
    open.add(running);
  };
  for (let i = 0; i < sockets; i += 1) keepOne();
  await new Promise((resolve) => setTimeout(resolve, 300));
  try {
    return { result: await during(), outcomes };
  } finally {
    attacking = false;
    while (open.size > 0) await Promise.all(open);
  }
}
