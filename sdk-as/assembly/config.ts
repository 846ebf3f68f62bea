// The proxy's configuration: the `config` object of its entry in the chain configuration, delivered
// by the conductor's `_cordon/configure` notification before `proxy/initialize`.
import { JSON } from "json-as";
import { getBool, getNumber, getObj, getString, getStrings } from "./json";

export class Config {
  /** The proxy's name in the chain ("" until configured). */
  name: string;
  /** The whole configuration object (`{}` when none was given). */
  obj: JSON.Obj;

  constructor(name: string = "", obj: JSON.Obj = new JSON.Obj()) {
    this.name = name;
    this.obj = obj;
  }

  has(key: string): bool {
    return this.obj.has(key);
  }

  /** A string setting, or `fallback` when absent or not a string. */
  getString(key: string, fallback: string = ""): string {
    const s = getString(this.obj, key);
    return s == null ? fallback : s;
  }

  /** A boolean setting, or `fallback` when absent or not a boolean. */
  getBool(key: string, fallback: bool = false): bool {
    return getBool(this.obj, key, fallback);
  }

  /** A numeric setting, or `fallback` when absent or not a number. */
  getNumber(key: string, fallback: f64 = 0): f64 {
    return getNumber(this.obj, key, fallback);
  }

  /** An integer setting (truncated), or `fallback` when absent or not a number. */
  getInt(key: string, fallback: i64 = 0): i64 {
    const n = getNumber(this.obj, key, NaN);
    return isFinite(n) ? <i64>n : fallback;
  }

  /**
   * A list of strings: an array setting's string elements (others are skipped); a single string
   * counts as a list of one; absent or any other type gives an empty list.
   */
  getStrings(key: string): string[] {
    return getStrings(this.obj, key);
  }

  /** A nested object setting, or null. */
  getObj(key: string): JSON.Obj | null {
    return getObj(this.obj, key);
  }

  /** The configuration as JSON text. */
  toJson(): string {
    return JSON.stringify(this.obj);
  }
}
