defineTool({ name: "escape", description: "d", parameters: { type: "object" }, run() { return 1; } });
}); globalThis.leaked = true; (function () {
