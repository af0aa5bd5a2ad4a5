// The panel's date fields are datetime-local inputs, which carry no zone: the panel states that
// they are in UTC (the label and the zone beside the field say so, and the editor's script shows
// the browser's local equivalent), and a typed value is read as UTC. What is typed is what is
// stored, and a stored time comes back into the field as it was typed.

const PANEL_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?$/;

/** A datetime-local value read as UTC: '' → null, nonsense → undefined. */
export function parsePanelTime(value: string): string | null | undefined {
  if (value === '') return null;
  if (!PANEL_TIME.test(value)) return undefined;
  const date = new Date(`${value}Z`);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** A stored time as the datetime-local value that reads back to it: UTC, to the minute, or to the second when it has seconds. */
export function panelTimeValue(iso: string | null): string {
  if (iso === null) return '';
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return '';
  const text = date.toISOString();
  return text.slice(17, 19) === '00' ? text.slice(0, 16) : text.slice(0, 19);
}
