/**
 * A call table's rules as the router runs them for one method: the rules that may judge it
 * (`Rule.judges`), in table order, looked up once per method instead of every rule being called
 * for every call; and the same for the rules told of a forwarded notification (`Rule.forwarded`).
 *
 * Why: a streamed `session/update` from the agent met four rules, and seven more per proxy it
 * crossed back, plus eight `forwarded` hooks per hop; none of them but `owned-sessions` judges it.
 * Calling each (a megamorphic call and its verdict) was 12 % of Cordon's CPU per streamed chunk,
 * with no proxy and with three watching ones alike (one process, `bench/in-process-chain.ts`).
 *
 * Bounded: methods are the peers' strings (extension methods are any `_…` name, and the method
 * inside a proxy's envelope has no length limit of its own), so at most `MAX_METHODS` selections
 * are kept, each for a name of at most `MAX_KEPT_NAME` characters; any other method's rules are
 * selected for each call, which costs what asking every rule did. A peer's made-up names cost at
 * most ~64 KB here per table, however long they are.
 */
import type { Rule } from "./rule.js";

/** Methods whose selection is kept (ACP has ~40, and a chain's extensions a few more). */
const MAX_METHODS = 256;
/** Longest method name whose selection is kept (ACP's longest is 26 characters). */
const MAX_KEPT_NAME = 128;

export class MethodRules {
  private readonly selected = new Map<string, readonly Rule[]>();

  /** `takes`: which of `rules` are run at all (by default, those with a `call`). */
  constructor(
    private readonly rules: readonly Rule[],
    private readonly takes: (rule: Rule) => boolean = (rule) => rule.call !== undefined,
  ) {}

  /** The rules run (see `takes`) that may judge a call of `method`, in table order. */
  for(method: string): readonly Rule[] {
    let rules = this.selected.get(method);
    if (rules === undefined) {
      rules = this.rules.filter((rule) => this.takes(rule) && (rule.judges === undefined || rule.judges(method)));
      if (this.selected.size < MAX_METHODS && method.length <= MAX_KEPT_NAME) this.selected.set(method, rules);
    }
    return rules;
  }
}
