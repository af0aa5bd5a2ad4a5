// Response bodies kept beside the value they were serialized from. The read caches
// (read-cache.ts) hand out the same frozen object for as long as it holds, so a body made from
// it once serves every request for it; a value that is a new object each time gets a new body,
// and its entry goes with it (a WeakMap).

/** At most this many variants (query strings) a value: extra parameters cannot grow the memory. */
const MAX_VARIANTS = 8;

/** A `make` that is remembered per source object and variant; `make` must depend on nothing else. */
export function keptBodies<Body>(): (source: object, variant: string, make: () => Body) => Body {
  const bodies = new WeakMap<object, Map<string, Body>>();
  return (source, variant, make) => {
    let variants = bodies.get(source);
    let body = variants?.get(variant);
    if (body !== undefined) return body;
    body = make();
    if (variants === undefined) bodies.set(source, (variants = new Map()));
    if (variants.size < MAX_VARIANTS) variants.set(variant, body);
    return body;
  };
}
