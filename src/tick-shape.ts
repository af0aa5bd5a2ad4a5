// Keeps process.nextTick on V8's fast path for the life of the process. Imported first by
// src/server.ts (and bench/server.ts): it must run before the first full garbage collection.
//
// Node builds each entry of its nextTick queue as an object literal with computed symbol keys
// (lib/internal/process/task_queues.js). For each property the literal defines, V8 remembers
// the hidden class (map) the object had at that step, weakly. A full collection that runs while
// no tick object is alive (start-up's module loading, an idle moment) collects the intermediate
// maps; the next tick builds new ones, they no longer match what V8 remembered, and V8 marks
// three of the four definitions megamorphic, for good. From then on every nextTick (ten per
// HTTP request, in Node's own streams) defines three properties through the V8 runtime. Measured
// on GET /api/user: 163,600 instructions a request under callgrind with it, 124,400 without
// (bench/instructions.ts, which used to report it as a valgrind artefact), and 5 % of the
// process's CPU at full speed under `perf record` (Runtime_DefineKeyedOwnPropertyInLiteral).
//
// One tick object kept alive keeps its map alive, and through the map's back pointers the
// intermediate ones: what V8 remembered is never cleared, and the definitions stay monomorphic.
// The object is taken from an async hook enabled for a single nextTick call, then disabled
// (a live async hook would cost every promise and tick far more). test/unit/tick-shape.test.ts
// shows the megamorphic state without this and its absence with it.
import { createHook } from 'node:async_hooks';

let kept: object | undefined;

function noop(): void {}

/** Keeps one of process.nextTick's queue entries alive (once per process); true once one is kept. */
export function keepTickShape(): boolean {
  if (kept !== undefined) return true;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === 'TickObject' && kept === undefined) kept = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(noop);
  } finally {
    hook.disable();
  }
  return kept !== undefined;
}

keepTickShape();
