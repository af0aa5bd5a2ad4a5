// Child process of test/unit/tick-shape.test.ts (node --allow-natives-syntax --expose-gc
// --import tsx): runs process.nextTick until V8 has feedback for it, lets a full collection run
// while no tick object is alive, runs it again, and prints V8's view of process.nextTick
// (%DebugPrint: its feedback slots, one per property the tick literal defines). With
// KEEP_TICK_SHAPE=<module>, that module is imported first (src/tick-shape.ts).
if (process.env.KEEP_TICK_SHAPE) {
  const { keepTickShape } = await import(process.env.KEEP_TICK_SHAPE);
  console.log(`kept: ${keepTickShape()}`);
}
const debugPrint = new Function('value', '%DebugPrint(value)');
const noop = () => {};
const ticks = () =>
  new Promise((resolve) => {
    for (let i = 0; i < 200; i += 1) process.nextTick(noop);
    process.nextTick(resolve);
  });
await ticks();
await ticks();
await new Promise((resolve) => setTimeout(resolve, 10));
globalThis.gc();
globalThis.gc();
await ticks();
debugPrint(process.nextTick);
