/** Markdown tables for `make bench`'s stdout: results are data, this only renders them. */
import type { Verdict } from "./goals.js";

/** A titled markdown table (notes are printed under the title). */
export function table(title: string, notes: string[], header: string[], rows: string[][]): string {
  const line = (cells: string[]) => `| ${cells.join(" | ")} |`;
  return [`\n${title}`, ...notes, line(header), line(header.map(() => "---")), ...rows.map(line)].join("\n");
}

export const fixed = (n: number, digits = 3) => n.toFixed(digits);
export const times = (value: number, base: number) => `${(value / base).toFixed(2)}×`;

const shown = (value: number, unit: string) =>
  unit === "×"
    ? `${value.toFixed(2)}×`
    : unit === "%"
      ? `${value.toFixed(0)} %`
      : `${value.toFixed(unit === "MiB" ? 1 : unit === "ms" ? 0 : 1)} ${unit}`;

/** One row per goal: its target, the figure measured, met / NOT met (or not measured). */
export function goalsTable(title: string, verdicts: Verdict[]): string {
  return table(
    title,
    [],
    ["goal", "target", "measured", ""],
    verdicts.map(({ goal, value, met }) => [
      goal.name,
      `${goal.kind === "max" ? "≤" : "≥"} ${shown(goal.limit, goal.unit)}`,
      value === undefined ? "—" : shown(value, goal.unit),
      met === undefined ? "not measured" : met ? "met" : "NOT met",
    ]),
  );
}
