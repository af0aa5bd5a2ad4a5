// The part of parse-prometheus-text-format the metrics tests use (the package ships no types).
declare module 'parse-prometheus-text-format' {
  type Labels = Record<string, string>;
  /** One series: a counter's, gauge's or untyped value, or a histogram's buckets, count and sum. */
  type Sample = { labels?: Labels; value?: string; buckets?: Record<string, string>; count?: string; sum?: string };
  type Family = { name: string; help: string; type: 'COUNTER' | 'GAUGE' | 'HISTOGRAM' | 'SUMMARY' | 'UNTYPED'; metrics: Sample[] };
  function parsePrometheusTextFormat(text: string): Family[];
  export default parsePrometheusTextFormat;
}
