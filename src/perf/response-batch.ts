// Answers written together at the end of an event-loop turn: every response finished while the
// service works through the requests one poll of the event loop delivered is held until that
// poll's requests are all handled, then written one after the other (setImmediate runs right
// after the poll phase). The pattern Redis follows (replies are written in `beforeSleep`, before
// the event loop waits again) and Netty's FlushConsolidationHandler.
//
// Why: each write that finds its reader asleep — a load balancer's or reverse proxy's worker, a
// client on the same host — must wake it, and on a virtual machine that wake-up (an
// inter-processor interrupt) is dear: it was the largest kernel cost of a request under `perf`
// (`sock_def_readable`). Written back to back, the first response of a batch wakes the reader
// and the rest find it running (the figures: docs/performance.md).
//
// What it costs: a response waits at most until the rest of its turn's requests are handled (a
// turn that is one request long adds one setImmediate hop, microseconds), and never behind more
// than `maxBatch` others. The order of responses on one connection is unchanged.
import type { FastifyInstance, onSendHookHandler } from 'fastify';
import fp from 'fastify-plugin';

type Done = Parameters<onSendHookHandler>[3];

export type ResponseBatchOptions = {
  /** A batch this long is written at once, without waiting for the end of the turn. */
  maxBatch?: number;
};

/** Responses held until the end of the event-loop turn (or until `maxBatch` are held). */
export class ResponseBatch {
  private dones: Done[] = [];
  private payloads: unknown[] = [];
  private scheduled = false;
  private readonly flushAtTurnEnd = () => {
    this.scheduled = false;
    this.flush();
  };

  constructor(private readonly maxBatch: number) {}

  hold(payload: unknown, done: Done): void {
    this.dones.push(done);
    this.payloads.push(payload);
    if (this.dones.length >= this.maxBatch) {
      this.flush();
    } else if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flushAtTurnEnd);
    }
  }

  /** Writes every held response, in the order they were finished. */
  flush(): void {
    const dones = this.dones;
    const payloads = this.payloads;
    if (dones.length === 0) return;
    this.dones = [];
    this.payloads = [];
    for (let i = 0; i < dones.length; i += 1) dones[i]?.(null, payloads[i]);
  }
}

export const responseBatchPlugin = fp(
  async (app: FastifyInstance, options: ResponseBatchOptions) => {
    const batch = new ResponseBatch(options.maxBatch ?? 32);
    // Other onSend hooks (cookies, ETags, the session's save) run before or after this one, as
    // Fastify orders them; those after it run at the end of the turn, with the write.
    app.addHook('onSend', (_request, _reply, payload, done) => batch.hold(payload, done));
  },
  { name: 'response-batch' },
);
