/** Markdown tables for `make bench`'s stdout: results are data, this only renders them. */
import type { Verdict } from "./goals.js";

/** A titled markdown table (notes are printed under the title). */
export function table(title: string, notes: string[], header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [`\n${title}`, ...notes, line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export const fixed = (n: number, digits = 3) => n.toFixed(digits);
export const times = (value: number, base: number) => `${(value / base).toFixed(2)}×`;

const shown = (value: number, unit: string, extra = 0) =>
  unit === "×"
    ? `${value.toFixed(2 + extra)}×`
    : unit === "%"
      ? `${value.toFixed(extra)} %`
      : `${value.toFixed((unit === "ms" ? 0 : 1) + extra)} ${unit}`;

/** `value` as `shown`, with more digits while it would read as the limit it missed or met ("2.0 µs ≤ 2.0 µs: NOT met"). */
function shownAgainst(value: number, limit: number, unit: string): string {
  let extra = 0;
  while (extra < 3 && value !== limit && shown(value, unit, extra) === shown(limit, unit, extra)) extra++;
  return shown(value, unit, extra);
}

/** One row per goal: its target, the figure measured, met / NOT met (or not measured). */
export function goalsTable(title: string, verdicts: Verdict[]): string {
  return table(
    title,
    [],
    ["goal", "target", "measured", ""],
    verdicts.map(({ goal, value, met }) => [
      goal.name,
      `${goal.kind === "max" ? "≤" : "≥"} ${shown(goal.limit, goal.unit)}`,
      value === undefined ? "—" : shownAgainst(value, goal.limit, goal.unit),
      met === undefined ? "not measured" : met ? "met" : "NOT met",
    ]),
  );
}
