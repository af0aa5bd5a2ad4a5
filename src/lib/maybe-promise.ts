// A value that may be known now or only later. Functions that can often answer at once (a read
// kept in memory, src/perf/read-cache.ts) return one, so that an answer known now is not delayed
// by a promise and its microtask turn.
export type MaybePromise<T> = T | Promise<T>;

/** `fn` applied to the value: at once when it is known now, once it arrives otherwise. */
export function then<T, U>(value: MaybePromise<T>, fn: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}
