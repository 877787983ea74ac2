/**
 * Properties built when first read. Below the pipeline: the trace's per-item entries use it, and
 * so does the library's redacted copy of a trace.
 */

/**
 * Defines `key` on `obj` as a getter that builds the value on first read and then becomes a plain
 * data property in the same place (so `JSON.stringify`, spreads and structured clones see the same
 * object in the same key order as an eagerly built one). The value is built once even when the
 * getter has been copied to another object (a copy of the property descriptors).
 */
export function defineLazy<T extends object, K extends keyof T>(obj: T, key: K, build: () => T[K]): void {
  let value: T[K] | undefined;
  let make: (() => T[K]) | undefined = build;
  Object.defineProperty(obj, key, {
    enumerable: true,
    configurable: true,
    get(this: T) {
      if (make !== undefined) {
        value = make();
        make = undefined; // drop the closure over what built it
      }
      // A frozen copy keeps its getter (the value is built once either way).
      if (Object.getOwnPropertyDescriptor(this, key)?.configurable) Object.defineProperty(this, key, { value, enumerable: true, configurable: true, writable: true });
      return value as T[K];
    },
    set(this: T, v: T[K]) {
      // Only this object changes: a copy made before keeps the built value.
      if (Object.getOwnPropertyDescriptor(this, key)?.configurable) Object.defineProperty(this, key, { value: v, enumerable: true, configurable: true, writable: true });
    },
  });
}
