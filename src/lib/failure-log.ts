// Repeated failures, logged once per interval. An outage makes every request fail the same way:
// 13 seconds of PostgreSQL away wrote 22,428 error lines with full stacks (11 MB), which bury the
// one line that says what happened and can fill the disk the logs share. Here the first failure
// of a kind is logged in full (its stack), the same failure again within the interval only
// counted, and at the end of each interval one line says how many there were. When the thing
// that failed works again (the owner's `probe` says so, or the owner calls recovered()), one line
// says so, with the count and how long it lasted. Knows nothing of the app: anything with pino's
// error and info methods is a sink.

export type FailureSink = {
  error(details: object, message: string): void;
  info(details: object, message: string): void;
};

export type FailureLogOptions = {
  /** How long identical failures are counted before one line reports them. */
  intervalMs: number;
  /**
   * Whether what failed works again, asked every `probeEveryMs` while failures are open: when
   * it says yes and nothing failed since the last ask, the recovery is logged once. Without it,
   * a kind of failure that stays quiet for a whole interval is closed silently (its next
   * occurrence is logged in full again).
   */
  probe?: () => Promise<boolean>;
  probeEveryMs?: number;
  /** The recovery line's message. */
  recoveredMessage?: string;
  clock?: () => number;
};

type Open = {
  message: string;
  details: object;
  /** Failures since the last line about this kind. */
  unreported: number;
  total: number;
  last: number;
};

/** The parts of an error a count line repeats: never its stack, which the first line had. */
function brief(error: unknown): object {
  const e = error as { name?: unknown; code?: unknown; message?: unknown } | null;
  if (typeof e !== 'object' || e === null) return { message: String(error) };
  return { type: e.name, code: e.code, message: e.message };
}

export class FailureLog {
  private readonly open = new Map<string, Open>();
  private since: number | null = null;
  private lastFailure = 0;
  private ticker: NodeJS.Timeout | null = null;
  private prober: NodeJS.Timeout | null = null;
  private probing = false;
  private readonly clock: () => number;

  constructor(
    private readonly sink: FailureSink,
    private readonly options: FailureLogOptions,
  ) {
    this.clock = options.clock ?? Date.now;
  }

  /**
   * Notes one failure of the kind `key` (failures with the same key are the same failure):
   * logged in full with `error` if it is the first of its kind since the last report, counted
   * otherwise.
   */
  failed(key: string, message: string, details: object, error: unknown): void {
    const now = this.clock();
    this.lastFailure = now;
    this.since ??= now;
    const known = this.open.get(key);
    if (known !== undefined) {
      known.unreported += 1;
      known.total += 1;
      known.last = now;
      return;
    }
    this.open.set(key, { message, details: { ...details, error: brief(error) }, unreported: 0, total: 1, last: now });
    this.sink.error({ ...details, err: error }, message);
    this.start();
  }

  /** Says, once, that what failed works again; nothing when nothing had failed. */
  recovered(): void {
    if (this.open.size === 0 || this.since === null) return;
    let failures = 0;
    for (const entry of this.open.values()) failures += entry.total;
    this.sink.info({ failures, ms: this.clock() - this.since }, this.options.recoveredMessage ?? 'recovered');
    this.reset();
  }

  /** Whether some failure is open (not yet recovered or closed). */
  get failing(): boolean {
    return this.open.size > 0;
  }

  /** Stops the timers (the app closes); what was counted and not yet reported is reported. */
  close(): void {
    this.report(true);
    this.reset();
  }

  private start(): void {
    // Timers never keep the process alive: an exit loses at most one interval's count line.
    this.ticker ??= setInterval(() => this.report(false), this.options.intervalMs).unref();
    if (this.options.probe !== undefined) this.prober ??= setInterval(() => this.ask(), this.options.probeEveryMs ?? this.options.intervalMs).unref();
  }

  private reset(): void {
    this.open.clear();
    this.since = null;
    if (this.ticker !== null) clearInterval(this.ticker);
    if (this.prober !== null) clearInterval(this.prober);
    this.ticker = null;
    this.prober = null;
  }

  private report(closing: boolean): void {
    const now = this.clock();
    for (const [key, entry] of this.open) {
      if (entry.unreported > 0) {
        this.sink.error({ ...entry.details, repeated: entry.unreported, intervalMs: this.options.intervalMs }, entry.message);
        entry.unreported = 0;
      } else if (this.options.probe === undefined && !closing && now - entry.last >= this.options.intervalMs) {
        this.open.delete(key);
      }
    }
    if (this.open.size === 0 && !closing) this.reset();
  }

  private ask(): void {
    const probe = this.options.probe;
    if (probe === undefined || this.probing) return;
    this.probing = true;
    const asked = this.clock();
    probe().then(
      (ok) => {
        this.probing = false;
        // A failure noted while the probe ran means the recovery is not yet whole.
        if (ok && this.lastFailure < asked) this.recovered();
      },
      () => {
        this.probing = false;
      },
    );
  }
}
