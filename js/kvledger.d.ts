// Types of every "." entry (web, node ESM, workerd): the web build's API plus `init`.
// In Node and workerd the module is already initialised on import; `init()` resolves at once.
export * from "../pkg/web/kvledger.js";
export { default, default as init } from "../pkg/web/kvledger.js";
