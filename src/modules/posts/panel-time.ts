// The panel's date fields are datetime-local inputs, which carry no zone: every time in the
// panel is UTC, so a typed value is read as UTC.

/** A datetime-local value read as UTC: '' → null, nonsense → undefined. */
export function parsePanelTime(value: string): string | null | undefined {
  if (value === '') return null;
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/.test(value)) return undefined;
  const date = new Date(`${value}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}
