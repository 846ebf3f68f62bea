/**
 * A field carried on a plain object that nothing but this module sees: not a spread or
 * `Object.assign` copy (so a copy made to change a member never carries the original's value),
 * not `Object.keys`, `JSON.stringify`, `structuredClone` or deep equality.
 *
 * It is a class private field stamped onto an object that is not an instance of the class: a base
 * constructor that returns the object it is given makes the subclass's field initialisers run on
 * that object. V8 stores such a field as a private-symbol property with inline caches, so stamping
 * a freshly parsed message costs ~0.1 µs, where `Object.defineProperty` of a non-enumerable symbol
 * property costs ~0.8 µs (same machine, same run, minimum of 7) — and every message crossing
 * Cordon gets one, several for one that crosses proxies.
 *
 * Invariant: `TS` must compile classes natively (target ES2022 or later): down-levelled private
 * fields are WeakMaps, whose ephemeron tables every scavenge walks (what this replaced).
 */

/** A constructor that returns the object it is given: `super(target)` makes `this` that object. */
class Stamp {
  constructor(target: object) {
    // biome-ignore lint/correctness/noConstructorReturn: the return override is what stamps the field on `target`
    return target as Stamp;
  }
}

/** One hidden field: each `hiddenField()` is a field of its own. */
export interface HiddenField<T> {
  has(target: object): boolean;
  /** The value, or undefined when `target` has none. */
  get(target: object): T | undefined;
  set(target: object, value: T): void;
}

export function hiddenField<T>(): HiddenField<T> {
  class Field extends Stamp {
    #value: T;

    constructor(target: object, value: T) {
      super(target);
      this.#value = value;
    }

    static has(target: object): boolean {
      return #value in target;
    }

    static get(target: object): T | undefined {
      return #value in target ? (target as Field).#value : undefined;
    }

    static set(target: object, value: T): void {
      if (#value in target) (target as Field).#value = value;
      else new Field(target, value);
    }
  }
  return { has: Field.has, get: Field.get, set: Field.set };
}
