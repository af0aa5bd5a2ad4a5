// Reading GET /metrics in tests: the text parsed by a Prometheus text-format parser (not by our
// own code), and one series' value found by its name and labels.
import parsePrometheusTextFormat from 'parse-prometheus-text-format';

export type Families = ReturnType<typeof parsePrometheusTextFormat>;
type Sample = Families[number]['metrics'][number];

/** Parses the Prometheus text format; throws on text it cannot read. */
export function parseMetrics(text: string): Families {
  return parsePrometheusTextFormat(text);
}

/** The series of `name` whose labels include `labels`. */
export function series(families: Families, name: string, labels: Record<string, string> = {}): Sample[] {
  const family = families.find((each) => each.name === name);
  if (family === undefined) return [];
  return family.metrics.filter((sample) => Object.entries(labels).every(([key, value]) => sample.labels?.[key] === value));
}

/**
 * The value of the one series of `name` with exactly `labels` (0 when absent: a counter not yet
 * incremented has no series). Not for a histogram (see histogramCounts).
 */
export function valueOf(families: Families, name: string, labels: Record<string, string> = {}): number {
  const matching = series(families, name, labels).filter((sample) => Object.keys(sample.labels ?? {}).length === Object.keys(labels).length);
  if (matching.length > 1) throw new Error(`${name} has ${matching.length} series with ${JSON.stringify(labels)}`);
  const sample = matching[0];
  if (families.find((family) => family.name === name)?.type === 'HISTOGRAM') throw new Error(`${name} is a histogram: read its counts with histogramCounts`);
  if (sample === undefined) return 0;
  return Number(sample.value);
}

/**
 * The `_count` series of histogram `name`, as a counter family of that name. The parser (1.1.1)
 * reads a histogram without labels only: it folds every labelled series of one into a single
 * sample without labels or count. So the `_count` lines are given to it as a counter of their
 * own, which it reads, labels and all.
 */
export function histogramCounts(text: string, name: string): Families {
  const lines = text.split('\n').filter((line) => line.startsWith(`${name}_count{`) || line.startsWith(`${name}_count `));
  return parsePrometheusTextFormat([`# TYPE ${name}_count counter`, ...lines, ''].join('\n'));
}

/** Every label value of every series, to look for what must never be one. */
export function labelValues(families: Families): string[] {
  return families.flatMap((family) => family.metrics.flatMap((sample) => Object.values(sample.labels ?? {})));
}
